// train-lm's corpus arguments: folders expand to their files in a fixed order, every file is one
// document with its own BOS, and bad paths are clear errors.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "support/errors.h"
#include "support/shared_data.h"
#include "train/train_lm.h"

namespace eagle2::train {
namespace {

namespace fs = std::filesystem;

void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
}

TEST(TrainLmData, FoldersExpandToTheirFilesSortedByPath) {
  const fs::path dir = test::temp_dir("train_lm_data_expand");
  write(dir / "corpus" / "b.py", "b\n");
  write(dir / "corpus" / "a.py", "a\n");
  write(dir / "corpus" / "sub" / "c.py", "c\n");
  write(dir / "corpus" / "A.txt", "A\n");  // byte order: upper case first
  write(dir / "single.txt", "s\n");
  const std::vector<std::string> got =
      expand_text_paths({(dir / "single.txt").string(), (dir / "corpus").string()});
  const std::vector<std::string> want = {
      (dir / "single.txt").string(), (dir / "corpus" / "A.txt").string(),
      (dir / "corpus" / "a.py").string(), (dir / "corpus" / "b.py").string(),
      (dir / "corpus" / "sub" / "c.py").string()};
  EXPECT_EQ(got, want);
  EXPECT_TRUE(expand_text_paths({}).empty());
}

TEST(TrainLmData, MissingPathsAndEmptyFoldersAreErrors) {
  const fs::path dir = test::temp_dir("train_lm_data_errors");
  fs::create_directories(dir / "empty" / "nested");
  EXPECT_NE(test::error_of([&] {
              expand_text_paths({(dir / "nope").string()});
            }).find("no such file or folder"),
            std::string::npos);
  EXPECT_NE(test::error_of([&] {
              expand_text_paths({(dir / "empty").string()});
            }).find("the folder has no files"),
            std::string::npos);
}

TEST(TrainLmData, EveryFileOfAFolderIsADocumentWithItsOwnBos) {
  EAGLE2_SHARED_FILE(tok, "data/models/stories260K-hf/tokenizer.model");
  const fs::path dir = test::temp_dir("train_lm_data_bos");
  write(dir / "docs" / "1.txt", "Once upon a time");
  write(dir / "docs" / "2.txt", "The cat sat");
  const std::vector<int32_t> ids =
      tokenize_files(tok, expand_text_paths({(dir / "docs").string()}));
  const std::vector<int32_t> one = tokenize_files(tok, {(dir / "docs" / "1.txt").string()});
  const std::vector<int32_t> two = tokenize_files(tok, {(dir / "docs" / "2.txt").string()});
  ASSERT_EQ(ids.size(), one.size() + two.size());
  EXPECT_EQ(ids.front(), 1);
  EXPECT_EQ(ids[one.size()], 1);  // the second document starts with its own BOS
  EXPECT_TRUE(
      std::equal(two.begin(), two.end(), ids.begin() + static_cast<std::ptrdiff_t>(one.size())));
}

}  // namespace
}  // namespace eagle2::train

// The folder layering of src/ (docs/ARCHITECTURE.md): every quoted include of a file in src/ names
// a file of its own folder or of a lower layer, never a peer or a layer above. Checked on the
// source text, so an upward include fails here before it can grow into a dependency cycle.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "support/shared_data.h"

namespace eagle2 {
namespace {

namespace fs = std::filesystem;

// Lower numbers are lower layers; a folder may include from layers strictly below its own.
const std::map<std::string, int> kLayer = {
    {"core", 0},        {"report", 0},   {"kernels", 1}, {"io", 1},
    {"tokenizer", 1},   {"sampling", 1}, {"model", 2},   {"draft", 3},
    {"speculative", 4}, {"bench", 5},    {"train", 5},   {"tokenizer_load", 2},
};

// The folder of a quoted include with a folder part ('#include "model/batch.h"' -> "model"), or ""
// for any other line. Plain string scanning: std::regex trips GCC 12's -Wmaybe-uninitialized in
// the sanitizer build.
std::string included_folder(const std::string& line) {
  size_t i = line.find_first_not_of(" \t");
  if (i == std::string::npos || line[i] != '#') return "";
  i = line.find_first_not_of(" \t", i + 1);
  if (i == std::string::npos || line.compare(i, 7, "include") != 0) return "";
  i = line.find_first_not_of(" \t", i + 7);
  if (i == std::string::npos || line[i] != '"') return "";
  const size_t slash = line.find('/', i + 1), quote = line.find('"', i + 1);
  if (slash == std::string::npos || quote == std::string::npos || slash > quote) return "";
  const std::string folder = line.substr(i + 1, slash - i - 1);
  if (folder.empty() || folder.find_first_not_of("abcdefghijklmnopqrstuvwxyz_0123456789") !=
                            std::string::npos)
    return "";
  return folder;
}

TEST(Layering, IncludedFolderReadsOnlyQuotedFolderIncludes) {
  EXPECT_EQ(included_folder("#include \"model/batch.h\""), "model");
  EXPECT_EQ(included_folder("  #  include \"core/error.h\"  // why"), "core");
  EXPECT_EQ(included_folder("#include <nlohmann/json.hpp>"), "");
  EXPECT_EQ(included_folder("#include \"batch.h\""), "");
  EXPECT_EQ(included_folder("// #include \"train/x.h\""), "");
}

TEST(Layering, EveryFolderHasALayer) {
  for (const auto& dir : fs::directory_iterator(fs::path(EAGLE2_SOURCE_DIR) / "src")) {
    if (!dir.is_directory()) continue;
    EXPECT_TRUE(kLayer.count(dir.path().filename().string()))
        << "src/" << dir.path().filename().string()
        << " has no layer: add it to kLayer here and to docs/ARCHITECTURE.md";
  }
}

TEST(Layering, NoIncludeOfAPeerOrAHigherLayer) {
  std::vector<std::string> violations;
  int files = 0;
  for (const auto& entry : fs::recursive_directory_iterator(fs::path(EAGLE2_SOURCE_DIR) / "src")) {
    const std::string ext = entry.path().extension().string();
    if (!entry.is_regular_file() || (ext != ".h" && ext != ".cpp")) continue;
    const std::string folder = entry.path().parent_path().filename().string();
    auto own = kLayer.find(folder);
    if (own == kLayer.end()) continue;  // reported by EveryFolderHasALayer
    ++files;
    const std::string text = test::read_file(entry.path().string());
    size_t begin = 0;
    while (begin < text.size()) {
      size_t end = text.find('\n', begin);
      if (end == std::string::npos) end = text.size();
      const std::string line = text.substr(begin, end - begin);
      begin = end + 1;
      const std::string target = included_folder(line);
      if (target.empty()) continue;
      if (target == folder) continue;
      auto to = kLayer.find(target);
      if (to == kLayer.end() || to->second >= own->second) {
        violations.push_back("src/" + folder + "/" + entry.path().filename().string() +
                             " includes " + target + "/");
      }
    }
  }
  EXPECT_GT(files, 50);
  EXPECT_TRUE(violations.empty()) << ::testing::PrintToString(violations);
}

}  // namespace
}  // namespace eagle2

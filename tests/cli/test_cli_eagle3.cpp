// EAGLE-3 heads on the command line: --draft-vocab with one is one clear error (it has its own
// draft vocabulary) from every command that takes the flag; `--draft HEAD` detects the kind and
// drafts with it (the same greedy text as plain decoding, "eagle3-..." on the stats line).
#include <gtest/gtest.h>

#include <string>

#include "model/llama_model.h"
#include "support/cli.h"
#include "support/eagle3_heads.h"
#include "support/shared_data.h"

namespace eagle2 {
namespace {

using test::CliRun;

// A random EAGLE-3 head for the bundled model (narrow MLP, 256 draft tokens: a few MB).
const std::string& random_head() {
  static const std::string dir = [] {
    const auto target = LlamaModel::load(test::kBundledModel);
    return test::write_head_folder(
        "cli", test::random_eagle3_head(*target, {.draft_vocab = 256, .intermediate = 64}));
  }();
  return dir;
}

void expect_one_error(const std::string& args, const std::string& message) {
  const CliRun run = test::run_cli_split(args);
  std::string why;
  EXPECT_TRUE(test::is_one_clean_error(run, &why)) << args << ": " << why;
  EXPECT_NE(run.err.find(message), std::string::npos) << args << ": " << run.err;
}

const std::string kVocabError =
    "--draft-vocab: this is an EAGLE-3 head with its own draft vocabulary of ";

TEST(CliEagle3, DraftVocabIsOneClearError) {
  const std::string head = random_head();
  const std::string gen =
      "generate -m " + test::kBundledModel + " --draft " + head + " -p 'def f():' -n 4 -t 1 ";
  expect_one_error(gen + "--draft-vocab 512", kVocabError + "256 tokens");
  expect_one_error(gen + "--spec dynamic:16:3:4 --draft-vocab 8", kVocabError + "256 tokens");
  expect_one_error(
      "serve --port 0 -t 1 -m " + test::kBundledModel + " --draft " + head + " --draft-vocab 512",
      kVocabError + "256 tokens");
}

// 0 means the full vocabulary: nothing to refuse, and the head drafts (the default spec).
TEST(CliEagle3, DraftVocabZeroDrafts) {
  const std::string gen = "generate -m " + test::kBundledModel + " --draft " + random_head() +
                          " -p 'def f():' -n 8 -t 1 --temp 0 ";
  const CliRun plain = test::run_cli_split(gen + "--spec plain");
  ASSERT_EQ(plain.code, 0) << plain.err;
  const CliRun r = test::run_cli_split(gen + "--draft-vocab 0");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, plain.out);
  EXPECT_NE(r.err.find("[stats] drafter eagle3-"), std::string::npos) << r.err;
}

TEST(CliEagle3, ReferenceHead) {
  EAGLE2_SHARED_FILE(cfg, "data/models/code-lm-eagle3-ref/config.json");
  const std::string head = cfg.substr(0, cfg.rfind('/'));
  const std::string gen =
      "generate -m " + test::kBundledModel + " --draft " + head + " -p 'def f():' -n 4 -t 1 ";
  expect_one_error(gen + "--draft-vocab 512", kVocabError + "1024 tokens");
}

// The reference head on the bundled model: plain decoding's text, the kind on the stats line.
TEST(CliEagle3, ReferenceHeadPrintsThePlainText) {
  EAGLE2_SHARED_FILE(cfg, "data/models/code-lm-eagle3-ref/config.json");
  const std::string head = cfg.substr(0, cfg.rfind('/'));
  const std::string gen = "generate -m " + test::kBundledModel + " --draft " + head +
                          " -p 'def fibonacci(n):' -n 32 -t 1 --temp 0 --spec ";
  const CliRun plain = test::run_cli_split(gen + "plain");
  ASSERT_EQ(plain.code, 0) << plain.err;
  const CliRun r = test::run_cli_split(gen + "dynamic:16:3:4");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, plain.out);
  EXPECT_NE(r.err.find("[stats] drafter eagle3-dynamic | "), std::string::npos) << r.err;
}

}  // namespace
}  // namespace eagle2

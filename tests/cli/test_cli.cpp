// The eagle2 command line, run as a user would: exit codes, one-line errors, streamed text.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "support/cli.h"
#include "support/shared_data.h"

namespace eagle2 {
namespace {

using test::CliRun;
using test::run_cli;

std::string stories_dir() {
  return test::shared_dir() + "/data/models/stories260K-hf";
}

TEST(Cli, UnknownFlagIsAUsageError) {
  CliRun r = test::run_cli_split("generate -m x --no-such-flag");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "error: --no-such-flag: unknown flag (eagle2 generate --help lists them)\n");
  EXPECT_EQ(r.out, "");
}

TEST(Cli, MissingModelDirectoryIsOneClearLine) {
  CliRun r = run_cli("generate -m /nonexistent/model -p hi");
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.out, "error: /nonexistent/model: model directory not found\n");
}

TEST(Cli, BadSamplingFlagsAreRejected) {
  EAGLE2_SHARED_FILE(cfg, "data/models/stories260K-hf/config.json");
  CliRun r = run_cli("generate -m " + stories_dir() + " -p hi --temp -1");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("error: --temp must be >= 0"), std::string::npos) << r.out;
  r = run_cli("generate -m " + stories_dir() + " -p hi --top-p 1.5");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("error: --top-p must be in (0, 1]"), std::string::npos) << r.out;
}

TEST(Cli, PromptLongerThanContextIsRefused) {
  EAGLE2_SHARED_FILE(cfg, "data/models/stories260K-hf/config.json");
  CliRun r = run_cli("generate -m " + stories_dir() + " -p 'Once upon a time there was' --ctx 4");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("tokens but --ctx is 4"), std::string::npos) << r.out;
}

TEST(Cli, InvalidUtf8PromptIsRefused) {
  EAGLE2_SHARED_FILE(cfg, "data/models/stories260K-hf/config.json");
  CliRun r = run_cli("generate -m " + stories_dir() + " -p \"$(printf 'ab\\377')\"");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("not valid UTF-8 at byte 2"), std::string::npos) << r.out;
}

TEST(Cli, GenerateStreamsTheGoldenGreedyText) {
  EAGLE2_SHARED_FILE(cfg, "data/models/stories260K-hf/config.json");
  CliRun r = run_cli("generate -m " + stories_dir() + " -p 'Once upon a time' -n 20 -t 2");
  ASSERT_EQ(r.code, 0) << r.out;
  // The golden greedy continuation of "Once upon a time" (llama2.c run, reference_greedy.json).
  EXPECT_EQ(r.out.rfind("Once upon a time, there was a little", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("[stats] prompt 5 tokens"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("decode 20 tokens"), std::string::npos) << r.out;
}

TEST(Cli, InfoDescribesTheModel) {
  EAGLE2_SHARED_FILE(cfg, "data/models/stories260K-hf/config.json");
  CliRun r = run_cli("info -m " + stories_dir());
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("LlamaForCausalLM"), std::string::npos);
  EXPECT_NE(r.out.find("layers         5"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("F32"), std::string::npos);
}

TEST(Cli, MakeRandomThenGenerateWithIds) {
  const std::string dir = test::temp_dir("cli-random");
  CliRun r = run_cli("make-random -o " + dir + "/m --preset tiny --dtype bf16 --seed 3");
  ASSERT_EQ(r.code, 0) << r.out;
  r = run_cli("generate -m " + dir + "/m --ids 1,5,9 -n 8 --ignore-eos");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("decode 8 tokens"), std::string::npos) << r.out;
  r = run_cli("generate -m " + dir + "/m --ids 1,x");
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.out, "error: --ids: 'x' is not a token id\n");
}

// cost-curve --sequences adds the table of B sequences x 1 token in one forward (timings are not
// checked: only that every asked-for B has its row, and B = 1 costs 1.00 of itself).
TEST(Cli, CostCurveWithSequencesPrintsTheMultiSequenceTable) {
  const std::string dir = test::temp_dir("cli-cost-seq");
  CliRun r = run_cli("make-random -o " + dir + "/m --preset tiny --seed 3");
  ASSERT_EQ(r.code, 0) << r.out;
  r = run_cli("cost-curve -m " + dir + "/m --ks 1,2 --context 8 --reps 1 --sequences 1,3,16 -t 1");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("sequences   ms/forward   cost/B=1   tokens/s (B)"), std::string::npos)
      << r.out;
  for (const char* row : {"\n        1 ", "\n        3 ", "\n       16 "})
    EXPECT_NE(r.out.find(row), std::string::npos) << row << "\n" << r.out;
  EXPECT_NE(r.out.find("1.00"), std::string::npos) << r.out;
}

// cost-curve --csv writes the k table for scripts: a header, one row per asked-for k in order, k =
// 1 costing exactly 1 of itself and tokens/s = k / seconds; the printed table stays as it was. An
// unwritable path is one clear error before any timing.
TEST(Cli, CostCurveCsvWritesTheKTable) {
  const std::string dir = test::temp_dir("cli-cost-csv");
  CliRun r = run_cli("make-random -o " + dir + "/m --preset tiny --seed 3");
  ASSERT_EQ(r.code, 0) << r.out;
  const std::string csv = dir + "/curve.csv";
  r = run_cli("cost-curve -m " + dir + "/m --ks 1,2,5 --context 8 --reps 1 -t 1 --csv " + csv);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("     k   ms/forward   cost/k=1   tokens/s (k)\n"), std::string::npos)
      << r.out;
  std::ifstream in(csv);
  std::string line;
  ASSERT_TRUE(std::getline(in, line));
  EXPECT_EQ(line, "k,ms_per_forward,cost_relative,tokens_per_second");
  std::vector<long> ks;
  while (std::getline(in, line)) {
    std::stringstream row(line);
    long k = 0;
    double ms = 0, cost = 0, rate = 0;
    char c1 = 0, c2 = 0, c3 = 0;
    ASSERT_TRUE(row >> k >> c1 >> ms >> c2 >> cost >> c3 >> rate) << line;
    ASSERT_EQ(std::string({c1, c2, c3}), ",,,") << line;
    EXPECT_GT(ms, 0) << line;
    EXPECT_NEAR(rate, static_cast<double>(k) / (ms / 1e3), 0.01 * rate) << line;
    if (k == 1) {
      EXPECT_DOUBLE_EQ(cost, 1.0);
    }
    ks.push_back(k);
  }
  EXPECT_EQ(ks, (std::vector<long>{1, 2, 5}));
  r = test::run_cli_split("cost-curve -m " + dir + "/m --ks 1 --reps 1 -t 1 --csv " + dir +
                          "/no/such/dir/curve.csv");
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, "error: " + dir + "/no/such/dir/curve.csv: cannot write\n");
}

// draft-vocab counts a corpus into a head's draft_vocab.tsv; generate --draft-vocab then drafts
// from the most frequent tokens, with the same greedy text as plain decoding.
TEST(Cli, DraftVocabThenGenerateWithAReducedDraftVocabulary) {
  EAGLE2_SHARED_FILE(head, "data/models/stories260K-eagle-head/config.json");
  const std::string shared = test::shared_dir() + "/data/";
  const std::string dir = test::temp_dir("cli-draft-vocab");
  const std::string head_dir = dir + "/head";
  std::filesystem::create_directories(head_dir);
  for (const char* f : {"config.json", "pytorch_model.bin", "model.safetensors"})
    if (std::filesystem::exists(shared + "models/stories260K-eagle-head/" + f))
      std::filesystem::copy_file(shared + "models/stories260K-eagle-head/" + f, head_dir + "/" + f);
  CliRun r = run_cli("draft-vocab -m " + stories_dir() + " --draft " + head_dir + " --corpus " +
                     shared + "corpora/tinystories_valid_head.txt");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("wrote " + head_dir + "/draft_vocab.tsv"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("most frequent cover"), std::string::npos) << r.out;
  r = run_cli("draft-vocab -m " + stories_dir() + " --corpus " + shared +
              "corpora/tinystories_valid_head.txt");
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(
      r.out,
      "error: draft-vocab: pass --draft HEAD_DIR (writes HEAD_DIR/draft_vocab.tsv) or -o FILE\n");

  const std::string gen = "generate -m " + stories_dir() + " -p 'Once upon a time' -n 20 -t 2";
  const CliRun plain = run_cli(gen);
  r = run_cli(gen + " --draft " + head_dir + " --tree chain --depth 3 --draft-vocab 64");
  ASSERT_EQ(r.code, 0) << r.out;
  ASSERT_EQ(plain.code, 0) << plain.out;
  EXPECT_EQ(r.out.substr(0, r.out.find("[stats]")), plain.out.substr(0, plain.out.find("[stats]")));
  r = run_cli(gen + " --draft " + shared + "models/stories260K-eagle-head --draft-vocab 64");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("stories260K-eagle-head/draft_vocab.tsv: cannot open (write it with: eagle2 "
                       "draft-vocab)"),
            std::string::npos)
      << r.out;
}

}  // namespace
}  // namespace eagle2

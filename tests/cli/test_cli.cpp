// The eagle2 command line, run as a user would: exit codes, one-line errors, streamed text.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <sys/wait.h>

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
  CliRun r = run_cli("generate -m x --no-such-flag");
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.out.find("--no-such-flag"), std::string::npos) << r.out;
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

}  // namespace
}  // namespace eagle2

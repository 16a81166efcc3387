// The command line on mixtures of experts: make-random --arch mixtral|qwen3moe with --experts and
// --experts-used writes one GGUF file that generate runs, and bad expert counts are one error line.
#include <gtest/gtest.h>

#include <string>

#include "support/cli.h"
#include "support/shared_data.h"

namespace eagle2 {
namespace {

TEST(CliMoe, MakeRandomWritesOneGgufFileThatGenerateRuns) {
  const std::string dir = test::temp_dir("cli-moe");
  const std::string file = dir + "/mixtral.gguf";
  const test::CliRun made = test::run_cli("make-random --arch mixtral -o " + file +
                                          " --dtype q8_0 --experts 4 --experts-used 3 --vocab 512");
  ASSERT_EQ(made.code, 0) << made.out;
  EXPECT_NE(made.out.find("3 of 4 experts, Q8_0"), std::string::npos) << made.out;
  const test::CliRun gen = test::run_cli("generate -m " + file + " -p 'def f(x):' -n 8 -t 2");
  EXPECT_EQ(gen.code, 0) << gen.out;
  // The experts column of cost-curve: MoeModel.CostCurveCountsTheExpertsAForwardReads.
}

TEST(CliMoe, BadExpertCountsAreOneErrorLine) {
  const std::string out = test::temp_dir("cli-moe-bad") + "/m.gguf";
  const test::CliRun more =
      test::run_cli("make-random --arch mixtral -o " + out + " --experts 2 --experts-used 3");
  EXPECT_EQ(more.code, 1);
  EXPECT_NE(more.out.find("--experts-used (3) is more than --experts (2)"), std::string::npos)
      << more.out;
  const test::CliRun dense = test::run_cli("make-random -o " + out + " --experts 4");
  EXPECT_EQ(dense.code, 1);
  EXPECT_NE(dense.out.find("--experts/--experts-used: only with --arch mixtral or qwen3moe"),
            std::string::npos)
      << dense.out;
  const test::CliRun folder = test::run_cli("make-random --arch mixtral -o " + out + "-dir");
  EXPECT_EQ(folder.code, 1) << folder.out;
}

}  // namespace
}  // namespace eagle2

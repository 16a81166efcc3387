// The command line on mixtures of experts: make-random --arch mixtral|qwen3moe with --experts and
// --experts-used writes one GGUF file that generate runs, bad expert counts are one error line, and
// cost-curve reports the distinct experts a forward of k tokens reads per layer (k tokens of one
// prompt reach the union of their experts, not k times as many).
#include <gtest/gtest.h>

#include <string>

#include "support/cli.h"
#include "support/shared_data.h"

namespace eagle2 {
namespace {

TEST(CliMoe, MakeRandomGenerateAndCostCurveReportExpertsRead) {
  const std::string dir = test::temp_dir("cli-moe");
  const std::string file = dir + "/mixtral.gguf";
  const test::CliRun made = test::run_cli("make-random --arch mixtral -o " + file +
                                          " --dtype q8_0 --experts 4 --experts-used 3 --vocab 512");
  ASSERT_EQ(made.code, 0) << made.out;
  EXPECT_NE(made.out.find("3 of 4 experts, Q8_0"), std::string::npos) << made.out;
  const test::CliRun gen = test::run_cli("generate -m " + file + " -p 'def f(x):' -n 8 -t 2");
  EXPECT_EQ(gen.code, 0) << gen.out;
  const test::CliRun cost =
      test::run_cli("cost-curve -m " + file + " --ks 1,64 --context 8 --reps 1 -t 1");
  ASSERT_EQ(cost.code, 0) << cost.out;
  const size_t at = cost.out.find("experts read per layer (4 experts, 3 per token):\n");
  ASSERT_NE(at, std::string::npos) << cost.out;
  // One token reads exactly its 3 experts; 64 tokens read more, at most all 4.
  const std::string rows = cost.out.substr(at);
  EXPECT_NE(rows.find("\n     1         3.00\n"), std::string::npos) << cost.out;
  EXPECT_EQ(rows.find("\n    64         3.00\n"), std::string::npos) << cost.out;
  EXPECT_NE(rows.find("\n    64         "), std::string::npos) << cost.out;
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

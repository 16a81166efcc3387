// scripts/quantized_ranges.py and scripts/quantized_charts.py (what scripts/bench_quantized.sh
// runs after its timings) on hand-made runs: the bench CSV comes from summaries_to_csv itself, so
// a change of its columns that the scripts cannot read fails here, not in the lead's long run.
// Without python3 the test skips, saying so.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "bench/bench_runner.h"
#include "support/cli.h"
#include "support/shared_data.h"

namespace eagle2 {
namespace {

void write_text(const std::string& path, const std::string& text) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

Summary row(const std::string& drafter, double rate, double speedup, double tau, double tree) {
  Summary s;
  s.prompt_set = "HumanEval";
  s.drafter = drafter;
  s.runs = 2;
  s.tokens_per_second = rate;
  s.speedup = speedup;
  s.tau = tau;
  s.tree_tokens = tree;
  return s;
}

// Two runs of two files: "a" (the auto budget picks trees of 6-7) and "b" (it stops drafting).
void write_quantized_runs(const std::string& out) {
  for (int r = 1; r <= 2; ++r) {
    const std::string run = ".run" + std::to_string(r) + ".csv";
    const double a_cost = r == 1 ? 1.5 : 1.6;
    write_text(out + "/a/cost" + run,
               "k,ms_per_forward,cost_relative,tokens_per_second\n1,1.000000,1.000000,1000.000\n"
               "8," +
                   std::to_string(a_cost) + "," + std::to_string(a_cost) + ",5000.000\n");
    write_text(out + "/b/cost" + run,
               "k,ms_per_forward,cost_relative,tokens_per_second\n1,0.500000,1.000000,2000.000\n"
               "8,4.000000,8.000000,2000.000\n");
    write_text(
        out + "/a/bench" + run,
        summaries_to_csv({row("plain", r == 1 ? 500 : 600, 1, 1, 1),
                          row("dynamic:auto:8:1:cal", 900, r == 1 ? 1.8 : 1.5, 4, r == 1 ? 6 : 7),
                          row("chain:2", 800, 1.6, 3, 4)}));
    write_text(out + "/b/bench" + run,
               summaries_to_csv({row("plain", 1000, 1, 1, 1),
                                 row("dynamic:auto:8:1:cal", 990, 0.99, 1.05, 1),
                                 row("chain:2", 1100, 1.1, 3, 4)}));
  }
}

TEST(QuantizedScripts, RangesAndChartsFromTheRunFiles) {
  if (test::run_shell("python3 -c pass >/dev/null 2>&1").code != 0)
    GTEST_SKIP() << "python3 is absent: skipping the scripts of bench_quantized.sh";
  const std::string out = test::temp_dir("quantized-scripts");
  write_quantized_runs(out);
  const std::string scripts = std::string(EAGLE2_SOURCE_DIR) + "/scripts/";
  const test::CliRun ranges =
      test::run_shell("python3 " + scripts + "quantized_ranges.py " + out + " a b 2>&1");
  ASSERT_EQ(ranges.code, 0) << ranges.out;
  for (const std::string& line : std::vector<std::string>{
           "Ranges over 2 runs", "| k | a | b |", "| 1 (ms) | 1.000 | 0.500 |",
           "| 8 | 1.50-1.60 | 8.00 |", "| plain tokens/s | 500-600 | 1000 |",
           "| `dynamic:auto:8:1:cal` | 1.50-1.80x | 0.99x |", "| `chain:2` | 1.60x | 1.10x |",
           "The auto budget `dynamic:auto:8:1:cal` verified on average a 6.0-7.0, b 1.0 tokens "
           "per cycle (root included).",
           "**a**: plain decoding 500-600 tokens/s",
           "| `dynamic:auto:8:1:cal` | 1.50-1.80x | 4.00 | 900 | 6.0-7.0 | 2 |",
           "| `chain:2` | 1.10x | 3.00 | 1100 | 4.0 | 2 |"})
    EXPECT_NE(ranges.out.find(line), std::string::npos) << line << "\n" << ranges.out;

  const test::CliRun charts =
      test::run_shell("python3 " + scripts + "quantized_charts.py " + out + " a b 2>&1");
  ASSERT_EQ(charts.code, 0) << charts.out;
  EXPECT_EQ(charts.out, "wrote " + out + "/cost_curve.svg\nwrote " + out + "/speedup.svg\n");
  // Well-formed XML, and the figures in the tooltips.
  const test::CliRun parsed = test::run_shell(
      "python3 -c 'import sys, xml.dom.minidom as m; [m.parse(p) for p in sys.argv[1:]]' " + out +
      "/cost_curve.svg " + out + "/speedup.svg 2>&1");
  EXPECT_EQ(parsed.code, 0) << parsed.out;
  std::ifstream cost_in(out + "/cost_curve.svg"), speed_in(out + "/speedup.svg");
  const std::string cost((std::istreambuf_iterator<char>(cost_in)), {});
  const std::string speed((std::istreambuf_iterator<char>(speed_in)), {});
  EXPECT_NE(cost.find("<title>b at k = 8: 8.00 (8.00-8.00)</title>"), std::string::npos) << cost;
  EXPECT_NE(speed.find("<title>dynamic:auto:8:1:cal on a: 1.65x (1.50-1.80)</title>"),
            std::string::npos)
      << speed;
  EXPECT_NE(speed.find(">a (plain 550 tok/s)<"), std::string::npos) << speed;
}

}  // namespace
}  // namespace eagle2

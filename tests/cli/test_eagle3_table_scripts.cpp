// scripts/eagle3_table.sh's table (EAGLE-2 head vs EAGLE-3 head on the same trees) on hand-made
// runs whose figures are known: ranges over the runs, the draft time per cycle, the per-run tau
// and speedup ratios, each head's fastest setting per run. The bench CSV comes from
// summaries_to_csv itself, so a change of its columns that the script cannot read fails here.
// Also scripts/accept_by_depth.py (where accepted paths stop, depth by depth) on a JSON from
// bench_to_json. Without python3 the tests skip, saying so.
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

Summary row(const std::string& drafter, float temp, double rate, double speedup, double tau,
            double draft_share) {
  Summary s;
  s.prompt_set = "heldout_prompts";
  s.drafter = drafter;
  s.temperature = temp;
  s.runs = 40;
  s.tokens_per_second = rate;
  s.speedup = speedup;
  s.tau = tau;
  s.draft_share = draft_share;
  return s;
}

// Two runs at T = 0 and one tree. Run r (0, 1): plain 1000 + 10r tok/s; EAGLE-2 tau 4.0 + 0.2r at
// 2.0x; EAGLE-3 tau 5.0 + 0.4r at 2.5x + 0.1r, its draft share 0.25 at 2500 tok/s: 0.25 x 5.0 /
// 2500 s = 0.500 ms per cycle in run 0. The EAGLE-2 head also drafts chain:6, at 1.9x in run 0
// and 2.8x in run 1: its fastest setting differs between the runs.
std::string write_runs() {
  const std::string dir = test::temp_dir("eagle3-table");
  for (int r = 0; r < 2; ++r) {
    std::vector<Summary> rows = {
        row("plain", 0, 1000 + 10 * r, 1, 1, 0),
        row("dynamic:8:6:2", 0, 2000, 2.0, 4.0 + 0.2 * r, 0.2),
        row("dynamic:8:6:2@h3", 0, 2500, 2.5 + 0.1 * r, 5.0 + 0.4 * r, 0.25),
        row("chain:6", 0, 2000, r == 0 ? 1.9 : 2.8, 5.0, 0.2),
    };
    std::ofstream(dir + "/bench.run" + std::to_string(r + 1) + ".csv") << summaries_to_csv(rows);
  }
  return dir;
}

TEST(Eagle3TableScript, RangesAndRatiosOverTheRuns) {
  if (!test::have_python()) GTEST_SKIP() << "python3 is absent: skipping the table script test";
  const std::string dir = write_runs();
  const auto r = test::run_shell("python3 " + test::kScriptsDir + "eagle3_table.py --head3 h3 " +
                                 dir + "/bench.run1.csv " + dir + "/bench.run2.csv");
  ASSERT_EQ(r.code, 0) << r.out;
  for (const char* line :
       {"## EAGLE-2 head vs EAGLE-3 head (2 runs)", "### T = 0",
        "Plain decoding: 1000-1010 tokens/s (2 runs).",
        "| `dynamic:8:6:2` (8 tokens, published ranking, uncalibrated) | EAGLE-2 | 4.00-4.20 | "
        "2.00x | 0.400-0.420 | 2000 |",
        "| `dynamic:8:6:2` (8 tokens, published ranking, uncalibrated) | EAGLE-3 | 5.00-5.40 | "
        "2.50-2.60x | 0.500-0.540 | 2500 |",
        // Ratios per run: 5.0/4.0 = 1.25, 5.4/4.2 = 1.29; 2.5/2.0 = 1.25, 2.6/2.0 = 1.30.
        "| `dynamic:8:6:2` | 1.25-1.29x | 1.25-1.30x |",
        // Each head's fastest setting per run, whatever the tree: 2.5/2.0; 2.6/2.8.
        "| 1 | 2.00x (`dynamic:8:6:2`) | 2.50x (`dynamic:8:6:2`) | 1.25x |",
        "| 2 | 2.80x (`chain:6`) | 2.60x (`dynamic:8:6:2`) | 0.93x |"})
    EXPECT_NE(r.out.find(line), std::string::npos) << line << "\n" << r.out;
}

RunRecord record(const std::string& drafter, float temp, std::vector<int64_t> histogram) {
  RunRecord r;
  r.prompt_set = "heldout_prompts";
  r.drafter = drafter;
  r.temperature = temp;
  r.accept_histogram = std::move(histogram);
  return r;
}

// scripts/accept_by_depth.py on a bench JSON written by bench_to_json itself. chain:2 over two
// prompts: cycles by accepted drafts [1, 1, 2] + [0, 1, 1] = [1, 2, 3]; 5 of 6 cycles reach depth
// 1, 3 of those 5 depth 2; tau 1 + (2 + 6) / 6. Plain decoding (no histogram) is left out; a
// drafter that never passes depth 1 stops there.
TEST(AcceptByDepthScript, ConditionalAcceptancePerDepth) {
  if (!test::have_python()) GTEST_SKIP() << "python3 is absent: skipping the depth script test";
  const std::string dir = test::temp_dir("accept-by-depth");
  const std::vector<RunRecord> records = {record("plain", 0, {}), record("chain:2", 0, {1, 1, 2}),
                                          record("chain:2", 0, {0, 1, 1}),
                                          record("chain:2", 1, {2, 0, 0})};
  std::ofstream(dir + "/bench.json") << bench_to_json({}, records);
  const std::string script = "python3 " + test::kScriptsDir + "accept_by_depth.py ";
  const auto r = test::run_shell(script + dir + "/bench.json");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(r.out,
            "chain:2 at T = 0: 6 cycles, tau 2.33\n"
            "  cycles by accepted drafts 0..2: 1 2 3\n"
            "  depth reached given the one above, from depth 1: 0.833 0.600\n"
            "chain:2 at T = 1: 2 cycles, tau 1.00\n"
            "  cycles by accepted drafts 0..2: 2 0 0\n"
            "  depth reached given the one above, from depth 1: 0.000\n");
  const auto only = test::run_shell(script + "--drafter nothing " + dir + "/bench.json 2>&1");
  EXPECT_EQ(only.code, 1);
  EXPECT_EQ(only.out, "error: no drafter in the file has an accepted-length histogram\n");
  std::ofstream(dir + "/bad.json") << "{\"runs\": 3";
  const auto bad = test::run_shell(script + dir + "/bad.json 2>&1");
  EXPECT_EQ(bad.code, 1);
  EXPECT_NE(bad.out.find("not an eagle2 bench JSON file"), std::string::npos) << bad.out;
}

TEST(Eagle3TableScript, ShellScriptParsesAndRefusesBadCounts) {
  EXPECT_EQ(test::run_shell("bash -n " + test::kScriptsDir + "eagle3_table.sh").code, 0);
  const auto bad =
      test::run_shell("env RUNS=x bash " + test::kScriptsDir + "eagle3_table.sh /tmp/x 2>&1");
  EXPECT_NE(bad.code, 0);
  EXPECT_NE(bad.out.find("error: 'x' is not a positive whole number"), std::string::npos)
      << bad.out;
}

}  // namespace
}  // namespace eagle2

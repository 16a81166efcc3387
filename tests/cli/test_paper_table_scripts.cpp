// The scripts of scripts/paper_table.sh (the EAGLE-2 paper's table on this engine) on hand-made
// inputs: the table and charts from three runs whose group means are known, the method rows with
// missing folders, and the prompt sets cut to fit. The bench CSV comes from summaries_to_csv
// itself, so a change of its columns that the scripts cannot read fails here, not in the lead's
// long run. Without python3 the tests skip, saying so.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "bench/bench_runner.h"
#include "eagle2/tokenizer.h"
#include "support/cli.h"
#include "support/shared_data.h"

namespace eagle2 {
namespace {

void write(const std::string& path, const std::string& text) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

Summary row(const std::string& set, const std::string& drafter, float temp, int prompts,
            double rate, double speedup, double tau, double tree_tokens = 0, double draft_share = 0,
            double verify_share = 0) {
  Summary s;
  s.prompt_set = set;
  s.drafter = drafter;
  s.temperature = temp;
  s.runs = prompts;
  s.tokens_per_second = rate;
  s.speedup = speedup;
  s.tau = tau;
  s.tree_tokens = tree_tokens;
  s.draft_share = draft_share;
  s.verify_share = verify_share;
  return s;
}

// Three runs, two in-domain sets (held-out code, HumanEval) and two out-of-domain ones (MT-bench,
// CNN/DM), T = 0 and 1. Group means per run: plain in-domain 860/870/880 tok/s at T = 0, 100 less
// at T = 1; out-of-domain 660/670/680; lookup's in-domain speedup 1.75/1.90/2.00 at T = 0.
void write_runs(const std::string& out) {
  for (int r = 1; r <= 3; ++r) {
    std::vector<Summary> rows;
    for (const float t : {0.0f, 1.0f}) {
      const double slower = t == 0 ? 0 : 100;
      const double heldout_lookup[] = {2.0, 2.3, 2.5};
      const double tau60 = 5 + 0.5 * (r - 1);
      rows.push_back(row("heldout_prompts", "plain", t, 12, 800 + 10 * r - slower, 1, 1));
      const double lookup = t == 0 ? heldout_lookup[r - 1] : 1.5;
      rows.push_back(row("heldout_prompts", "lookup", t, 12, 1, lookup, t == 0 ? 3 : 2));
      rows.push_back(row("heldout_prompts", "dynamic:60:5:10", t, 12, 1, 0.5, tau60));
      rows.push_back(row("heldout_prompts", "chain:2", t, 12, 1, 1.2, 3, 3, 0.25, 0.75));
      rows.push_back(row("HumanEval", "plain", t, 12, 900 + 10 * r - slower, 1, 1));
      rows.push_back(row("HumanEval", "lookup", t, 12, 1, t == 0 ? 1.5 : 1.0, t == 0 ? 2 : 1));
      rows.push_back(row("HumanEval", "dynamic:60:5:10", t, 12, 1, 0.5, tau60));
      rows.push_back(row("HumanEval", "chain:2", t, 12, 1, 1.2, 3, 3, 0.25, 0.75));
      rows.push_back(row("mt_bench_question", "plain", t, 8, 600 + 20 * r - slower, 1, 1));
      rows.push_back(
          row("mt_bench_question", "lookup", t, 8, 1, t == 0 ? 1.25 : 1.0, t == 0 ? 2 : 1.5));
      rows.push_back(row("mt_bench_question", "dynamic:60:5:10", t, 8, 1, 0.5, 4));
      rows.push_back(row("mt_bench_question", "chain:2", t, 8, 1, 1.2, 3, 3, 0.25, 0.75));
      rows.push_back(row("sum_question", "plain", t, 8, 700 - slower, 1, 1));
      rows.push_back(row("sum_question", "lookup", t, 8, 1, t == 0 ? 0.75 : 0.5, t == 0 ? 1.5 : 1));
      rows.push_back(row("sum_question", "dynamic:60:5:10", t, 8, 1, 0.5, 4));
      rows.push_back(row("sum_question", "chain:2", t, 8, 1, 1.2, 3, 3, 0.5, 0.5));
    }
    write(out + "/bench.run" + std::to_string(r) + ".csv", summaries_to_csv(rows));
  }
  // Hydra was left out for its folder; EAGLE-1 was meant to run but has no rows; chain:2 ran
  // without a method row of its own.
  write(out + "/methods.tsv",
        "plain decoding\tplain\tthe baseline\t\n"
        "PLD\tlookup\tprompt lookup\t\n"
        "Hydra\thydra:models/code-lm-hydra\tHydra heads\tnot run: models/code-lm-hydra not found\n"
        "EAGLE-1\tstatic\tEAGLE-1's tree\t\n"
        "EAGLE-2\tdynamic:60:5:10\tthe paper's setting, 60 tokens\t\n");
  write(out + "/prompts.txt", "heldout_prompts: the first 12 prompts of somewhere\n");
}

TEST(PaperTableScripts, TableFromThreeRuns) {
  if (!test::have_python())
    GTEST_SKIP() << "python3 is absent: skipping the scripts of paper_table.sh";
  const std::string out = test::temp_dir("paper-table");
  write_runs(out);
  const std::string runs =
      out + "/bench.run1.csv " + out + "/bench.run2.csv " + out + "/bench.run3.csv";
  const test::CliRun table =
      test::run_shell("python3 " + test::kScriptsDir + "paper_table.py --methods " + out +
                      "/methods.tsv --prompt-notes " + out + "/prompts.txt " + runs + " 2>&1");
  ASSERT_EQ(table.code, 0) << table.out;
  for (const std::string& line : std::vector<std::string>{
           "Ranges over 3 runs (bench.run1.csv, bench.run2.csv, bench.run3.csv).",
           "Prompt sets: in-domain: held-out code, HumanEval; out-of-domain: MT-bench, CNN/DM.",
           "Prompts per set: held-out code 12, HumanEval 12, MT-bench 8, CNN/DM 8.",
           "- heldout_prompts: the first 12 prompts of somewhere",
           // The paper-style table: group means, ranges over the runs, plain tokens/s first.
           "| method | drafter | in-domain, T = 0: speedup | τ | out-of-domain, T = 0: speedup "
           "| τ | in-domain, T = 1: speedup | τ | out-of-domain, T = 1: speedup | τ |",
           "| plain decoding: tokens/s | `plain` | 860-880 tok/s | | 660-680 tok/s | | "
           "760-780 tok/s | | 560-580 tok/s | |",
           "| PLD | `lookup` (prompt lookup) | 1.75-2.00x | 2.50 | 1.00x | 1.75 | 1.25x | 1.50 | "
           "0.75x | 1.25 |",
           "| Hydra | `hydra:models/code-lm-hydra` (Hydra heads) | not run: models/code-lm-hydra "
           "not found |",
           "| EAGLE-1 | `static` (EAGLE-1's tree) | not run: no rows in the CSVs |",
           "| EAGLE-2 | `dynamic:60:5:10` (the paper's setting, 60 tokens) | 0.50x | 5.00-6.00 | "
           "0.50x | 4.00 | 0.50x | 5.00-6.00 | 0.50x | 4.00 |",
           "| chain:2 | `chain:2` | 1.20x | 3.00 | 1.20x | 3.00 | 1.20x | 3.00 | 1.20x | 3.00 |",
           // Every set.
           "**Every prompt set, T = 0**: speedup / τ",
           "| method | drafter | held-out code (in-domain) | HumanEval (in-domain) | MT-bench | "
           "CNN/DM |",
           "| plain decoding: tokens/s | `plain` | 810-830 | 910-930 | 620-660 | 700 |",
           "| PLD | `lookup` | 2.00-2.50x / 3.00 | 1.50x / 2.00 | 1.25x / 2.00 | 0.75x / 1.50 |",
           "**Every prompt set, T = 1**: speedup / τ",
           "| plain decoding: tokens/s | `plain` | 710-730 | 810-830 | 520-560 | 600 |",
           // Where a cycle's time goes: chain:2 commits 3 tokens at 1 tok/s, so a cycle lasts 3 s,
           // drafting a quarter of it on three sets and half on the fourth (mean 937.5 ms), for the
           // 2 drafted tokens; plain decoding's 760/770/780 tok/s are 1.28-1.32 ms per token.
           "**Where a cycle's time goes, T = 0**",
           "| method | drafter | rows verified | draft ms / cycle | verify ms / cycle | draft ms / "
           "drafted token |",
           "| plain decoding | `plain` | 1 | 0 | 1.28-1.32 (ms per token) | |",
           "| chain:2 | `chain:2` | 3.0 | 937.50 | 2062.50 | 468.750 |",
           "| PLD | `lookup` | 0.0 | 0.00 | 0.00 | — |",
           // The published figures, labelled as not ours, with their sources.
           "GPU figures on 7B-70B models (not ours)",
           "| EAGLE-2 | mean of 6 tasks, T = 0 | Vicuna-7B | GPU (the paper's) | 3.39x | 4.68 | "
           "[1] |",
           "| Hydra | Spec-Bench overall | Vicuna-7B-v1.3 | A100 | 2.09x | 3.24 | [3] |",
           "| chain:2 | no figure found | | | | | |",
           "hemingkx/Spec-Bench@5544fd7a98df8aaf0662381f0c96e8696207e93d"})
    EXPECT_NE(table.out.find(line), std::string::npos) << line << "\n" << table.out;
  // A method that did not run has no row in the per-set tables.
  EXPECT_EQ(table.out.find("| Hydra | `hydra"), table.out.rfind("| Hydra | `hydra")) << table.out;
}

TEST(PaperTableScripts, ChartsFromThreeRuns) {
  if (!test::have_python())
    GTEST_SKIP() << "python3 is absent: skipping the scripts of paper_table.sh";
  const std::string out = test::temp_dir("paper-charts");
  write_runs(out);
  const test::CliRun charts =
      test::run_shell("python3 " + test::kScriptsDir + "paper_charts.py " + out + " --methods " +
                      out + "/methods.tsv " + out + "/bench.run1.csv " + out + "/bench.run2.csv " +
                      out + "/bench.run3.csv 2>&1");
  ASSERT_EQ(charts.code, 0) << charts.out;
  EXPECT_EQ(charts.out, "wrote " + out + "/speedup.svg\nwrote " + out + "/tau.svg\nwrote " + out +
                            "/speedup_t1.svg\nwrote " + out + "/tau_t1.svg\n");
  const test::CliRun parsed = test::run_shell(
      "python3 -c 'import sys, xml.dom.minidom as m; [m.parse(p) for p in sys.argv[1:]]' " + out +
      "/speedup.svg " + out + "/tau.svg " + out + "/speedup_t1.svg " + out + "/tau_t1.svg 2>&1");
  EXPECT_EQ(parsed.code, 0) << parsed.out;
  const std::string speedup = read(out + "/speedup.svg");
  for (const std::string& s : std::vector<std::string>{
           "<title>PLD lookup, in-domain: 1.90x (1.75-2.00)</title>",
           "<title>PLD lookup, out-of-domain: 1.00x (1.00-1.00)</title>",
           ">in-domain (plain 870 tok/s)<", ">out-of-domain (plain 670 tok/s)<", ">PLD<",
           ">EAGLE-2<", ">dynamic:60:5:10<", ">Hydra<", ">not run<", ">chain:2<"})
    EXPECT_NE(speedup.find(s), std::string::npos) << s << "\n" << speedup;
  const std::string tau_t1 = read(out + "/tau_t1.svg");
  EXPECT_NE(tau_t1.find("<title>EAGLE-2 dynamic:60:5:10, in-domain: 5.50 (5.00-6.00)</title>"),
            std::string::npos)
      << tau_t1;
  EXPECT_NE(tau_t1.find(">in-domain (plain 770 tok/s)<"), std::string::npos) << tau_t1;
}

TEST(PaperTableScripts, MethodRowsLeaveOutMissingFolders) {
  if (!test::have_python())
    GTEST_SKIP() << "python3 is absent: skipping the scripts of paper_table.sh";
  // The folders in the specs are relative to where it runs: only these two exist there.
  const std::string dir = test::temp_dir("paper-methods");
  std::filesystem::create_directories(dir + "/models/code-lm-draft");
  std::filesystem::create_directories(dir + "/models/code-lm-eagle");
  const std::string run = "env -C " + dir + " -u DRAFTERS -u HEAD ";
  const test::CliRun plan =
      test::run_shell(run + "python3 " + test::kScriptsDir + "paper_methods.py 2>&1");
  ASSERT_EQ(plan.code, 0) << plan.out;
  EXPECT_EQ(std::count(plan.out.begin(), plan.out.end(), '\n'), 16) << plan.out;
  for (const std::string& line : std::vector<std::string>{
           "plain decoding\tplain\tthe baseline\t\n",
           "SpS\tsps:models/code-lm-draft\ta separate draft model\t\n",
           "Medusa\tmedusa:models/code-lm-medusa\tMedusa heads\tnot run: models/code-lm-medusa not "
           "found\n",
           "Lookahead\tlookahead:15:5:15\tthe paper's W, N, G\t\n",
           "EAGLE-2 w/o reranking\tdynamic:16:6:2:norerank\t16 tokens\t\n"})
    EXPECT_NE(plan.out.find(line), std::string::npos) << line << "\n" << plan.out;

  // DRAFTERS: METHOD=SPEC or a bare SPEC (named as in the default list, else by itself); plain
  // first even when not asked for; a folder read without the numbers after it; no EAGLE head.
  const test::CliRun custom =
      test::run_shell(run +
                      "DRAFTERS='PLD=lookup;sps:/nonexistent/d:3:4, dynamic:16:6:2:novalue' "
                      "HEAD=/nonexistent python3 " +
                      test::kScriptsDir + "paper_methods.py 2>&1");
  ASSERT_EQ(custom.code, 0) << custom.out;
  EXPECT_EQ(custom.out,
            "plain decoding\tplain\tthe baseline\t\n"
            "PLD\tlookup\tprompt lookup\t\n"
            "sps:/nonexistent/d:3:4\tsps:/nonexistent/d:3:4\t\tnot run: /nonexistent/d not found\n"
            "EAGLE-2 w/o value\tdynamic:16:6:2:novalue\t16 tokens\tnot run: the EAGLE head "
            "/nonexistent not found\n");
  const test::CliRun twice = test::run_shell(run + "DRAFTERS='lookup;PLD=lookup' python3 " +
                                             test::kScriptsDir + "paper_methods.py 2>&1");
  EXPECT_NE(twice.code, 0);
  EXPECT_NE(twice.out.find("error: DRAFTERS: 'lookup' twice"), std::string::npos) << twice.out;
}

TEST(PaperTableScripts, PromptSetsCutToFit) {
  if (!test::have_python())
    GTEST_SKIP() << "python3 is absent: skipping the scripts of paper_table.sh";
  const std::string dir = test::temp_dir("paper-prompts");
  std::string long_text;
  for (int i = 0; i < 300; ++i) long_text += "alpha beta gamma ";
  write(dir + "/in/x.question.jsonl",
        nlohmann::json({{"turns", nlohmann::json::array({"def f():"})}}).dump() + "\n" +
            nlohmann::json({{"prompt", long_text}}).dump() + "\n" +
            nlohmann::json({{"question", "third"}}).dump() + "\n");
  const test::CliRun cut =
      test::run_shell("python3 " + test::kScriptsDir + "paper_prompts.py --eagle2 " +
                      EAGLE2_CLI_PATH + " --model " + test::kBundledModel + " --tokens 40 " + dir +
                      "/out 2:" + dir + "/in/x.question.jsonl 2>&1");
  ASSERT_EQ(cut.code, 0) << cut.out;
  EXPECT_EQ(cut.out, "x: the first 2 prompts of " + dir +
                         "/in/x.question.jsonl, 1 cut to their first 40 tokens\n");
  // Bench names the set by the stem: x.jsonl keeps it. The short prompt as it was, the long one
  // its beginning, at most 40 tokens with BOS (and not much fewer).
  std::istringstream lines(read(dir + "/out/x.jsonl"));
  std::string first, second, third;
  std::getline(lines, first);
  std::getline(lines, second);
  EXPECT_FALSE(std::getline(lines, third)) << third;
  EXPECT_EQ(nlohmann::json::parse(first).dump(), R"({"turns":["def f():"]})");
  const std::string text = nlohmann::json::parse(second).at("turns").at(0).get<std::string>();
  EXPECT_EQ(long_text.rfind(text, 0), 0u) << text;
  const size_t n = api::Tokenizer::open(test::kBundledModel).encode(text, true).size();
  EXPECT_LE(n, 40u) << text;
  EXPECT_GE(n, 30u) << text;
}

TEST(PaperTableScripts, ShellScriptParses) {
  const test::CliRun syntax =
      test::run_shell("bash -n " + test::kScriptsDir + "paper_table.sh 2>&1");
  EXPECT_EQ(syntax.code, 0) << syntax.out;
}

}  // namespace
}  // namespace eagle2

// generate --spec SPEC (the spec strings of bench --drafters and demo --tree) against the
// shorthand flags that build the same spec: the same drafter, so byte-equal greedy output and the
// same drafter name and tau on the [stats] line; and sampled output that is the same text whatever
// the spec, since the token at each output position comes from the seed and the position alone.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "support/cli.h"

namespace eagle2 {
namespace {

using test::CliRun;
using test::run_cli_split;

const std::string& kModel = test::kBundledModel;
const std::string& kHead = test::kBundledHead;

// "[stats] drafter NAME | tau T over N cycles": what the drafter did, without the timings.
std::string drafter_and_tau(const std::string& err) {
  const size_t at = err.find("[stats] drafter ");
  if (at == std::string::npos) return "(no [stats] drafter line) " + err;
  return err.substr(at, err.find(" | prompt", at) - at);
}

TEST(CliSpec, SpecAndShorthandFlagsGenerateTheSame) {
  const std::string gen =
      "generate -m " + kModel + " --draft " + kHead + " -p 'def add(a, b):' -n 16 -t 1 ";
  for (const auto& [shorthand, spec] : std::vector<std::pair<std::string, std::string>>{
           {"", "dynamic:60:5:10"},
           {"--tree dynamic --total-tokens 12 --depth 3 --draft-top-k 4 --calibrate",
            "dynamic:12:3:4:cal"},
           {"--tree chain --depth 3", "chain:3"},
           {"--tree static --choices '[[0],[1],[0,0]]'", "static:[[0],[1],[0,0]]"},
           {"--tree lookup", "lookup"},
           {"--tree lookup --depth 2", "lookup:2"},
           {"--tree none", "plain"},
       }) {
    const CliRun a = run_cli_split(gen + shorthand);
    const CliRun b = run_cli_split(gen + "--spec '" + spec + "'");
    ASSERT_EQ(a.code, 0) << shorthand << ": " << a.err;
    ASSERT_EQ(b.code, 0) << spec << ": " << b.err;
    EXPECT_EQ(a.out, b.out) << shorthand << " vs " << spec;
    if (spec != "plain") {
      EXPECT_EQ(drafter_and_tau(a.err), drafter_and_tau(b.err)) << spec;
    }
  }
}

// With --temp and --seed, plain decoding and every drafter print the same text (and the seed
// matters: another seed, another text).
TEST(CliSpec, SampledOutputIsTheSameForEverySpec) {
  const std::string gen = "generate -m " + kModel + " --draft " + kHead +
                          " -p 'def add(a, b):' -n 24 -t 1 --temp 0.8 --top-p 0.95 --seed ";
  const CliRun plain = run_cli_split(gen + "7 --spec plain");
  ASSERT_EQ(plain.code, 0) << plain.err;
  for (const std::string spec : {"dynamic:60:5:10", "chain:3", "lookup", "dynamic:16:3:4:novalue",
                                 "dynamic:16:3:4:norerank", "lookahead:4:3:2"}) {
    const CliRun r = run_cli_split(gen + "7 --spec '" + spec + "'");
    ASSERT_EQ(r.code, 0) << spec << ": " << r.err;
    EXPECT_EQ(r.out, plain.out) << spec;
  }
  const CliRun other = run_cli_split(gen + "8 --spec plain");
  ASSERT_EQ(other.code, 0) << other.err;
  EXPECT_NE(other.out, plain.out);
}

// The EAGLE-2 paper's ablation through --spec: other trees from the same head, the same greedy
// text as plain decoding, and the variant named on the stats line.
TEST(CliSpec, AblationSpecsPrintThePlainText) {
  const std::string gen =
      "generate -m " + kModel + " --draft " + kHead + " -p 'def add(a, b):' -n 24 -t 1 --spec ";
  const CliRun plain = run_cli_split(gen + "plain");
  ASSERT_EQ(plain.code, 0) << plain.err;
  for (const auto& [spec, name] : std::vector<std::pair<std::string, std::string>>{
           {"dynamic:16:3:4:novalue", "eagle2-dynamic-novalue"},
           {"dynamic:16:3:4:norerank", "eagle2-dynamic-norerank"},
           {"dynamic:16:3:4:norerank:cal", "eagle2-dynamic-norerank"}}) {
    const CliRun r = run_cli_split(gen + spec);
    ASSERT_EQ(r.code, 0) << spec << ": " << r.err;
    EXPECT_EQ(r.out, plain.out) << spec;
    EXPECT_NE(r.err.find("[stats] drafter " + name + " | "), std::string::npos) << r.err;
  }
  const CliRun both = run_cli_split(gen + "dynamic:16:3:4:novalue:norerank");
  EXPECT_EQ(both.code, 2);
  EXPECT_EQ(both.err,
            "error: --spec: drafter 'dynamic:16:3:4:novalue:norerank': at most one of :novalue "
            "and :norerank\n");
}

TEST(CliSpec, SpecWithAShorthandFlagExitsTwo) {
  const CliRun r = run_cli_split("generate -m " + kModel + " --draft " + kHead +
                                 " -p hi -n 2 --spec chain:3 --depth 3");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "error: --spec: cannot be combined with --depth (the spec says it all)\n");
  EXPECT_EQ(r.out, "");
  const CliRun bad = run_cli_split("generate -m " + kModel + " -p hi -n 2 --spec magic");
  EXPECT_EQ(bad.code, 2);
  EXPECT_EQ(bad.err.rfind("error: --spec: unknown drafter 'magic'", 0), 0u) << bad.err;
}

// Lookahead decoding needs no head: greedy output equal to plain decoding, its own name on the
// [stats] line, and a spec out of range is a flag error.
TEST(CliSpec, LookaheadWithoutAHead) {
  const std::string gen = "generate -m " + kModel + " -p 'def add(a, b):' -n 24 -t 1 ";
  const CliRun plain = run_cli_split(gen + "--spec plain");
  ASSERT_EQ(plain.code, 0) << plain.err;
  for (const std::string spec : {"lookahead", "lookahead:15:5:15"}) {
    const CliRun r = run_cli_split(gen + "--spec " + spec);
    ASSERT_EQ(r.code, 0) << spec << ": " << r.err;
    EXPECT_EQ(r.out, plain.out) << spec;
    EXPECT_EQ(drafter_and_tau(r.err).rfind("[stats] drafter lookahead | tau ", 0), 0u) << r.err;
  }
  const CliRun bad = run_cli_split(gen + "--spec lookahead:0:3:2");
  EXPECT_EQ(bad.code, 2);
  EXPECT_EQ(bad.err,
            "error: --spec: drafter 'lookahead:0:3:2': lookahead needs W >= 1, N >= 2, G >= 0 and "
            "a tree of (W + G) * (N - 1) <= 512 tokens (got W = 0, N = 3, G = 2)\n");
}

// Suffix decoding needs no head either: greedy output equal to plain decoding on a prompt that
// repeats itself (so it drafts), and one flag error for a spec out of range.
TEST(CliSpec, SuffixWithoutAHead) {
  const std::string gen =
      "generate -m " + kModel + " -p 'def add(a, b):\n    return a + b\n\ndef add(' -n 32 -t 1 ";
  const CliRun plain = run_cli_split(gen + "--spec plain");
  ASSERT_EQ(plain.code, 0) << plain.err;
  for (const std::string spec : {"suffix", "suffix:4:2:50"}) {
    const CliRun r = run_cli_split(gen + "--spec " + spec);
    ASSERT_EQ(r.code, 0) << spec << ": " << r.err;
    EXPECT_EQ(r.out, plain.out) << spec;
    EXPECT_EQ(drafter_and_tau(r.err).rfind("[stats] drafter suffix | tau ", 0), 0u) << r.err;
  }
  const CliRun bad = run_cli_split(gen + "--spec suffix:8:64");
  EXPECT_EQ(bad.code, 2);
  EXPECT_EQ(bad.err,
            "error: --spec: drafter 'suffix:8:64': suffix needs T in [1, 1024], D in [0, 63] and P "
            "in [0, 100] (got T = 8, D = 64, P = 10)\n");
}

TEST(CliSpec, EagleSpecsNeedAHead) {
  const CliRun r = run_cli_split("generate -m " + kModel + " -p hi -n 2 --spec chain:3");
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, "error: --spec chain:3 needs an EAGLE head: pass --draft HEAD_DIR\n");
  // "@HEAD_DIR" is bench's (two heads in one run); generate and serve name theirs with --draft.
  const CliRun at = run_cli_split("generate -m " + kModel + " -p hi -n 2 --spec dynamic@h");
  EXPECT_EQ(at.code, 1);
  EXPECT_EQ(at.err,
            "error: --spec dynamic@h: a head folder after '@' is for eagle2 bench "
            "--drafters (two heads side by side); here pass --draft HEAD_DIR\n");
}

// sps:DIR, the bundled draft model: greedy text equals plain decoding's with the drafter named on
// the stats line; sampled text follows from the seed (the draft samples its chain from its own q,
// so it is not plain sampling's text, but two runs with one seed print the same); no head needed;
// a missing folder is one error line.
TEST(CliSpec, DraftModelSpec) {
  const std::string draft = std::string(EAGLE2_SOURCE_DIR) + "/models/code-lm-draft";
  const std::string gen = "generate -m " + kModel + " -p 'def add(a, b):' -n 24 -t 1 ";
  const CliRun plain = run_cli_split(gen + "--spec plain");
  const CliRun sps = run_cli_split(gen + "--spec sps:" + draft);
  ASSERT_EQ(plain.code, 0) << plain.err;
  ASSERT_EQ(sps.code, 0) << sps.err;
  EXPECT_EQ(sps.out, plain.out);
  EXPECT_NE(sps.err.find("[stats] drafter sps | tau "), std::string::npos) << sps.err;
  const std::string hot = gen + "--temp 0.8 --seed 5 --spec sps:" + draft;
  const CliRun a = run_cli_split(hot), b = run_cli_split(hot);
  ASSERT_EQ(a.code, 0) << a.err;
  EXPECT_EQ(a.out, b.out);
  const CliRun missing = run_cli_split(gen + "--spec sps:/nonexistent/draft");
  EXPECT_EQ(missing.code, 1);
  EXPECT_EQ(missing.err.rfind("error: ", 0), 0u) << missing.err;
  EXPECT_EQ(std::count(missing.err.begin(), missing.err.end(), '\n'), 1) << missing.err;
}

}  // namespace
}  // namespace eagle2

// The command line's flag contract (issue #9): a flag syntax error (unknown flag, missing or
// malformed value, value out of the flag's range, missing required flag, unknown command) is one
// stderr line "error: <flag>: <reason>" and exit code 2; any other user error is one "error: "
// line and exit code 1; --help prints to stdout and exits 0.
#include <gtest/gtest.h>
#include <sched.h>

#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "support/cli.h"
#include "support/shared_data.h"

namespace eagle2 {
namespace {

using test::CliRun;
using test::run_cli_split;

const std::string& kModel = test::kBundledModel;
const std::string& kHead = test::kBundledHead;

// Counted as the CLI counts them (its affinity mask), independently of its code.
int cpus_available() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) return CPU_COUNT(&set);
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

// Exit 2 and exactly one stderr line, starting "error: <flag>: ".
::testing::AssertionResult is_flag_error(const CliRun& r, const std::string& flag) {
  const std::string prefix = "error: " + flag + ": ";
  if (r.timed_out) return ::testing::AssertionFailure() << "timed out (a hang)";
  if (r.code != 2)
    return ::testing::AssertionFailure() << "exit " << r.code << ", stderr: " << r.err;
  if (r.err.rfind(prefix, 0) != 0 || r.err.find('\n') + 1 != r.err.size())
    return ::testing::AssertionFailure()
           << "stderr is not one '" << prefix << "...' line: " << r.err;
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult is_clean_error(const CliRun& r) {
  std::string why;
  if (!test::is_one_clean_error(r, &why)) return ::testing::AssertionFailure() << why;
  return ::testing::AssertionSuccess();
}

TEST(CliFlags, ThreadsBeyondTheAvailableCpusAreRefusedByEveryCommand) {
  const int cpus = cpus_available();
  const std::string too_many = std::to_string(cpus + 1);
  const std::string expected = "error: --threads: '" + too_many + "' is more than the " +
                               std::to_string(cpus) + " CPUs this process may use\n";
  for (const std::string& cmd : std::vector<std::string>{
           "generate -m " + kModel + " -p hi -n 2", "info -m " + kModel, "demo -n 2",
           "bench -m " + kModel + " --prompts x", "cost-curve -m " + kModel,
           "train-head -m " + kModel + " -o /tmp/none",
           "train-lm --corpus . --config " + kModel + "/config.json -o x",
           "logprobs -m " + kModel + " --tokens 1,2"}) {
    const CliRun r = run_cli_split(cmd + " -t " + too_many);
    EXPECT_EQ(r.code, 2) << cmd;
    EXPECT_EQ(r.err, expected) << cmd;
  }
  // -t 1000 (issue #9: 16 tokens took a minute) as the user typed it.
  EXPECT_TRUE(
      is_flag_error(run_cli_split("generate -m " + kModel + " -p hi -n 2 -t 1000"), "--threads"));
  const CliRun ok =
      run_cli_split("generate -m " + kModel + " -p hi -n 2 -t " + std::to_string(cpus));
  EXPECT_EQ(ok.code, 0) << ok.err;
}

TEST(CliFlags, ChoicesAreInlineJsonWhenTheyStartWithABracketElseAFile) {
  const std::string gen = "generate -m " + kModel + " --draft " + kHead +
                          " -p 'def f(x):' -n 2 --tree static --choices ";
  // 80 paths, ~480 bytes: longer than a file name may be, so never tried as one.
  std::string tree = "[";
  for (int i = 0; i < 10; ++i) tree += std::string(i ? "," : "") + "[" + std::to_string(i) + "]";
  for (int i = 0; i < 10; ++i)
    for (int j = 0; j < 7; ++j) tree += ",[" + std::to_string(i) + "," + std::to_string(j) + "]";
  tree += "]";
  ASSERT_GT(tree.size(), 255u);
  CliRun r = run_cli_split(gen + "'  " + tree + "'");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("[stats] drafter"), std::string::npos) << r.err;

  const std::string dir = test::temp_dir("cli_flags_choices");
  test::write_file(dir + "/tree.json", tree);
  r = run_cli_split(gen + dir + "/tree.json");
  EXPECT_EQ(r.code, 0) << r.err;

  r = run_cli_split(gen + dir + "/missing.json");
  EXPECT_TRUE(is_clean_error(r));
  EXPECT_EQ(r.err, "error: " + dir + "/missing.json: cannot open: No such file or directory\n");
  EXPECT_EQ(r.out, "");  // the head and the tree load before the prompt is echoed

  r = run_cli_split(gen + dir);
  EXPECT_EQ(r.err, "error: " + dir + ": not a regular file\n");
  EXPECT_EQ(r.code, 1);

  r = run_cli_split(gen + "'[[0],[1]'");
  EXPECT_EQ(
      r.err,
      "error: --choices: tree choices are not valid JSON (expected e.g. [[0], [1], [0, 0]])\n");
  EXPECT_EQ(r.code, 1);

  test::write_file(dir + "/bad.json", "[[0], [1]");
  r = run_cli_split(gen + dir + "/bad.json");
  EXPECT_EQ(r.err,
            "error: --choices " + dir +
                "/bad.json: tree choices are not valid JSON (expected e.g. [[0], [1], [0, 0]])\n");

  r = run_cli_split(gen + "''");
  EXPECT_EQ(r.err, "error: --choices: empty (give JSON such as [[0], [1], [0, 0]] or a file)\n");
}

TEST(CliFlags, ResumeWithABadTrainLogNamesTheLineAndTheColumn) {
  const std::string dir = test::temp_dir("cli_flags_resume");
  const std::string out = dir + "/run";
  std::filesystem::create_directories(out);
  test::write_file(dir + "/corpus.txt", "the king rides to the sea.\n");
  test::write_file(dir + "/cfg.json", R"({"model": {"hidden": 64, "layers": 1, "heads": 4,
      "intermediate": 128, "vocab": 300, "ctx": 64}, "train": {"batch": 2, "seq_len": 16,
      "steps": 4}})");
  // Only their presence is checked before the log: the log must fail first, on its own.
  test::write_file(out + "/tokenizer.model", "x");
  test::write_file(out + "/checkpoint.safetensors", "x");
  const std::string cmd = "train-lm --corpus " + dir + "/corpus.txt --config " + dir +
                          "/cfg.json -o " + out + " --resume -t 1";
  const std::string header = "step\ttokens\tloss\tlr\theld_out_loss\n";

  test::write_file(out + "/train_log.tsv", header + "1\t32\t5.5\t1e-3\t\nabc\t64\t5.0\t1e-3\t\n");
  CliRun r = run_cli_split(cmd);
  EXPECT_TRUE(is_clean_error(r));
  EXPECT_EQ(r.err, "error: " + out + "/train_log.tsv:3: column 'step': 'abc' is not an integer\n");
  EXPECT_EQ(r.out, "");

  test::write_file(out + "/train_log.tsv", header + "1\t32\t5.5x\t1e-3\t\n");
  r = run_cli_split(cmd);
  EXPECT_EQ(r.err, "error: " + out + "/train_log.tsv:2: column 'loss': '5.5x' is not a number\n");

  test::write_file(out + "/train_log.tsv", header + "1\t99999999999999999999\t5.5\t1e-3\t\n");
  r = run_cli_split(cmd);
  EXPECT_EQ(r.err,
            "error: " + out +
                "/train_log.tsv:2: column 'tokens': '99999999999999999999' is out of range\n");

  test::write_file(out + "/train_log.tsv", header + "1\t32\t5.5\t1e-3\tnope\n");
  r = run_cli_split(cmd);
  EXPECT_EQ(r.err,
            "error: " + out + "/train_log.tsv:2: column 'held_out_loss': 'nope' is not a number\n");

  // A partial last row (a run killed while writing it) is past the last checkpoint: ignored, so
  // the run gets as far as the (fake) tokenizer, which fails as one clean line.
  test::write_file(out + "/train_log.tsv", header + "1\t32\t5.5\t1e-3\t\n2\t6");
  r = run_cli_split(cmd);
  EXPECT_TRUE(is_clean_error(r));
  EXPECT_EQ(r.err.find("train_log.tsv"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("tokenizer.model"), std::string::npos) << r.err;

  test::write_file(out + "/train_log.tsv", header + "1\t32\n");
  r = run_cli_split(cmd);
  EXPECT_EQ(r.err, "error: " + out +
                       "/train_log.tsv:2: expected 5 tab-separated columns (step, "
                       "tokens, loss, lr, held_out_loss), got 2\n");
}

TEST(CliFlags, AnEmptyPromptHasItsOwnMessage) {
  CliRun r = run_cli_split("generate -m " + kModel + " -p '' -n 2");
  EXPECT_TRUE(is_clean_error(r));
  EXPECT_EQ(r.err, "error: -p/--prompt: the prompt is empty\n");
  r = run_cli_split("generate -m " + kModel + " -n 2");
  EXPECT_EQ(r.err, "error: give exactly one of -p/--prompt and --ids\n");
  r = run_cli_split("generate -m " + kModel + " -p hi --ids 1 -n 2");
  EXPECT_EQ(r.err, "error: give exactly one of -p/--prompt and --ids\n");
  r = run_cli_split("generate -m " + kModel + " --ids '' -n 2");
  EXPECT_EQ(r.err, "error: --ids: no token ids given\n");
  r = run_cli_split("generate -m " + kModel + " --ids 1,-2 -n 2");
  EXPECT_EQ(r.err, "error: --ids: '-2' is not a token id\n");
  r = run_cli_split("generate -m " + kModel + " --ids 1,4294967297 -n 2");
  EXPECT_EQ(r.err, "error: --ids: '4294967297' is not a token id\n");
}

TEST(CliFlags, SeedsCoverExactlyTheUint64Range) {
  const std::string gen = "generate -m " + kModel + " -p hi -n 2 --temp 1 --seed ";
  CliRun r = run_cli_split(gen + "18446744073709551616");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err,
            "error: --seed: '18446744073709551616' is out of range (a seed is an integer in "
            "[0, 18446744073709551615])\n");
  r = run_cli_split(gen + "-1");
  EXPECT_EQ(r.err,
            "error: --seed: '-1' is not a non-negative integer (a seed is an integer in "
            "[0, 18446744073709551615])\n");
  r = run_cli_split(gen + "18446744073709551615");
  EXPECT_EQ(r.code, 0) << r.err;
}

TEST(CliFlags, LimitsAreBounded) {
  CliRun r = run_cli_split("bench -m " + kModel + " --prompts x --limit -1");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "error: --limit: '-1' is out of range [0, 2147483647]\n");
  r = run_cli_split("generate -m " + kModel + " -p hi -n abc");
  EXPECT_EQ(r.err,
            "error: --n-predict: 'abc' is not an integer (expected an integer in [0, "
            "1073741824])\n");
}

// Every numeric flag of every command, with values that are not numbers, negative, zero where
// zero means nothing, or past the type: each is one "error: <flag>: ..." line and exit 2, before
// anything is loaded.
TEST(CliFlags, EveryNumericFlagRefusesBadValuesAsFlagErrors) {
  struct Case {
    std::string command;  // with its required flags
    std::string flag;     // as CLI11 names it in the message (the long name)
    std::string spelled;  // as passed
    std::vector<std::string> bad;
  };
  const std::string gen = "generate -m " + kModel + " -p hi";
  const std::string bench = "bench -m " + kModel + " --prompts x";
  const std::string head = "train-head -m " + kModel + " -o /tmp/none --prompts x";
  const std::string lm = "train-lm --corpus . --config " + kModel + "/config.json -o /tmp/none";
  const std::string big = "18446744073709551616";
  const std::vector<std::string> count = {"-1", "0", big, "abc", "''", "1.5"};
  const std::vector<std::string> size = {"-1", big, "abc", "''", "1e3"};
  const std::vector<std::string> real = {"abc", "''", "nan", "inf", "1e999"};
  const std::vector<std::string> seed = {"-1", big, "abc", "''", "1.0"};
  const std::vector<Case> cases = {
      {gen, "--threads", "-t", count},
      {gen, "--ctx", "--ctx", count},
      {gen, "--n-predict", "-n", size},
      {gen, "--temp", "--temp", real},
      {gen, "--top-p", "--top-p", real},
      {gen, "--top-k", "--top-k", {big, "abc", "''", "0.5"}},
      {gen, "--seed", "--seed", seed},
      {gen, "--depth", "--depth", {"-1", "65", big, "abc", "''"}},
      {gen, "--draft-top-k", "--draft-top-k", count},
      {gen, "--draft-vocab", "--draft-vocab", size},
      {gen, "--total-tokens", "--total-tokens", {"-1", "0", "4097", big, "abc", "''"}},
      {"info -m " + kModel, "--ctx", "--ctx", count},
      {"demo", "--threads", "-t", count},
      {"demo", "--ctx", "--ctx", {"-1", "0", "15", big, "abc", "''"}},
      {"demo", "--n-predict", "-n", count},
      {"demo", "--draft-vocab", "--draft-vocab", size},
      {bench, "--ctx", "--ctx", count},
      {"cost-curve -m " + kModel, "--ctx", "--ctx", count},
      {bench, "--limit", "--limit", size},
      {bench, "--opening-words", "--opening-words", size},
      {bench, "--max-new-tokens", "--max-new-tokens", count},
      {bench, "--reps", "--reps", count},
      {bench, "--warmup", "--warmup", {"-1", "1001", big, "abc", "''"}},
      {bench, "--seed", "--seed", seed},
      {bench, "--draft-vocab", "--draft-vocab", size},
      {"cost-curve -m " + kModel, "--context", "--context", size},
      {"cost-curve -m " + kModel, "--reps", "--reps", count},
      {"make-random -o /tmp/none", "--seed", "--seed", seed},
      {"make-random -o /tmp/none", "--hidden", "--hidden", count},
      {"make-random -o /tmp/none", "--layers", "--layers", count},
      {"make-random -o /tmp/none", "--intermediate", "--intermediate", count},
      {"make-random -o /tmp/none", "--heads", "--heads", count},
      {"make-random -o /tmp/none", "--kv-heads", "--kv-heads", count},
      {"make-random -o /tmp/none", "--vocab", "--vocab", count},
      {"make-random -o /tmp/none", "--max-positions", "--max-positions", count},
      {head, "--eval-last", "--eval-last", size},
      {head, "--eval-count", "--eval-count", size},
      {head, "--limit", "--limit", size},
      {head, "--opening-words", "--opening-words", size},
      {head, "--max-new-tokens", "--max-new-tokens", count},
      {head, "--sampled", "--sampled", size},
      {head, "--steps", "--steps", count},
      {head, "--lr", "--lr", {"-1", "0", "abc", "''", "nan"}},
      {head, "--warmup", "--warmup", size},
      {head, "--batch", "--batch", count},
      {head, "--seq-len", "--seq-len", {"1", "-1", big, "abc", "''"}},
      {head, "--noise", "--noise", {"-1", "abc", "''", "nan"}},
      {head, "--weight-decay", "--weight-decay", {"-1", "abc", "''", "nan"}},
      {head, "--clip", "--clip", {"-1", "abc", "''", "inf"}},
      {head, "--seed", "--seed", seed},
      {head, "--tau-tokens", "--tau-tokens", count},
      {lm, "--threads", "-t", count},
      {lm, "--stop-after", "--stop-after", count},
  };
  for (const Case& c : cases)
    for (const std::string& v : c.bad)
      EXPECT_TRUE(is_flag_error(run_cli_split(c.command + " " + c.spelled + " " + v), c.flag))
          << c.command << " " << c.spelled << " " << v;
}

// Values that are numbers of the right type but wrong for the run are the library's to judge:
// one "error: " line and exit 1.
TEST(CliFlags, SemanticValueErrorsAreOneLineAndExitOne) {
  const std::string gen = "generate -m " + kModel + " -p hi -n 2";
  for (const auto& [args, message] : std::vector<std::pair<std::string, std::string>>{
           {gen + " --temp -1", "--temp must be >= 0 (got -1)"},
           {gen + " --top-p 1.5", "--top-p must be in (0, 1] (got 1.5)"},
           {gen + " --top-k -1", "--top-k must be >= 0 (got -1)"},
           {"cost-curve -m " + kModel + " --ks 1,0", "--ks: '0' is not a batch size in [1, 4096]"},
           {"cost-curve -m " + kModel + " --ks 1,x", "--ks: 'x' is not a batch size in [1, 4096]"},
           {"cost-curve -m " + kModel + " --sequences 1,0",
            "--sequences: '0' is not a sequence count in [1, 256]"},
           {"cost-curve -m " + kModel + " --sequences 257",
            "--sequences: '257' is not a sequence count in [1, 256]"},
       }) {
    const CliRun r = run_cli_split(args);
    EXPECT_TRUE(is_clean_error(r)) << args;
    EXPECT_EQ(r.err, "error: " + message + "\n") << args;
  }
}

TEST(CliFlags, FlagSyntaxErrorsNameTheFlagAndExitTwo) {
  const std::string commands =
      "demo, generate, info, make-random, quantize, cost-curve, bench, train-lm, train-head, "
      "draft-vocab, chat-template, tokenize, serve, bench-serve, perplexity, logprobs, acceptance";
  for (const auto& [args, message] : std::vector<std::pair<std::string, std::string>>{
           {"generate -m x --no-such-flag",
            "--no-such-flag: unknown flag (eagle2 generate --help lists them)"},
           {"generate -m x -p hi extra",
            "extra: unexpected argument (eagle2 generate --help lists the flags)"},
           {"generate -m x -p", "--prompt: 1 required TEXT missing"},
           {"generate -p hi", "--model: is required"},
           {"generate -m x -p hi --tree bogus",
            "--tree: bogus not in {dynamic,static,chain,lookup,none}"},
           {"nosuch -m x", "nosuch: unknown command; give one of " + commands},
           {"", "COMMAND: missing; give one of " + commands},
       }) {
    const CliRun r = run_cli_split(args);
    EXPECT_EQ(r.code, 2) << args;
    EXPECT_EQ(r.err, "error: " + message + "\n") << args;
    EXPECT_EQ(r.out, "") << args;
  }
}

TEST(CliFlags, HelpGoesToStdoutAndExitsZero) {
  for (const char* args : {"--help", "generate --help", "bench -h", "train-lm --help"}) {
    const CliRun r = run_cli_split(args);
    EXPECT_EQ(r.code, 0) << args;
    EXPECT_EQ(r.err, "") << args;
    EXPECT_NE(r.out.find("Usage:"), std::string::npos) << args << "\n" << r.out;
  }
}

// A command that fails while loading prints nothing before its error line (no prompt echo, no
// progress line on stderr).
TEST(CliFlags, LoadFailuresPrintOnlyTheErrorLine) {
  CliRun r = run_cli_split("generate -m " + kModel + " -p hi -n 2 --draft /nonexistent/head");
  EXPECT_TRUE(is_clean_error(r));
  EXPECT_EQ(r.out, "");
  r = run_cli_split("generate -m " + kModel + " -p hi -n 2 --tree chain");
  EXPECT_TRUE(is_clean_error(r));
  EXPECT_EQ(r.err, "error: --tree chain needs an EAGLE head: pass --draft HEAD_DIR\n");
  EXPECT_EQ(r.out, "");
}

}  // namespace
}  // namespace eagle2

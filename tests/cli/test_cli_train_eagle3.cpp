// eagle2 train-head --arch eagle3: the folder it writes is an EAGLE-3 head EagleHead loads, with
// the asked-for draft vocabulary and MLP width; flags of other archs, and too few unrolled steps,
// are one clear error each.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "draft/eagle_head.h"
#include "model/llama_model.h"
#include "support/cli.h"
#include "support/shared_data.h"

namespace eagle2 {
namespace {

using test::CliRun;
using test::run_cli;
using test::run_cli_split;

TEST(CliTrainEagle3, FlagErrors) {
  std::string why;
  const CliRun few =
      run_cli_split("train-head -m /x --prompts p --arch eagle3 --ttt-steps 2 -o /tmp/y");
  EXPECT_TRUE(test::is_one_clean_error(few, &why)) << why;
  EXPECT_EQ(few.err,
            "error: --ttt-steps 2 is too few for --arch eagle3 (at least 3; the "
            "reference unrolls 7)\n");
  const CliRun warm = run_cli_split(
      "train-head -m /x --prompts p --arch eagle3 --steps 100 --ttt-warmup 91 -o /tmp/y");
  EXPECT_TRUE(test::is_one_clean_error(warm, &why)) << why;
  EXPECT_EQ(warm.err,
            "error: --ttt-warmup 91 leaves too few of the 100 --steps unrolled (at most "
            "90: the last 10 % train every unrolled step)\n");
  const CliRun deep = run_cli_split(
      "train-head -m /x --prompts p --arch eagle3 --ttt-steps 4 --ttt-short-steps 5 -o /tmp/y");
  EXPECT_TRUE(test::is_one_clean_error(deep, &why)) << why;
  EXPECT_EQ(deep.err, "error: --ttt-short-steps 5 exceeds --ttt-steps 4\n");
  for (const std::string bad :
       {"--ttt-short-steps 0", "--ttt-full-every 0", "--ttt-full-every x"}) {
    const CliRun r =
        run_cli_split("train-head -m /x --prompts p --arch eagle3 " + bad + " -o /tmp/y");
    EXPECT_EQ(r.code, 2) << bad << ": " << r.err;
  }
  const CliRun noise =
      run_cli_split("train-head -m /x --prompts p --arch eagle3 --noise 0.2 -o /tmp/y");
  EXPECT_EQ(noise.err,
            "error: --noise, --noise-relative and --fc-identity apply to --arch eagle only\n");
  for (const std::string flag : {"--ce-weight 0.5", "--ce-temperature 0.7"}) {
    const CliRun ce =
        run_cli_split("train-head -m /x --prompts p --arch eagle3 " + flag + " -o /tmp/y");
    EXPECT_EQ(ce.err, "error: --ce-weight and --ce-temperature apply to --arch eagle only\n");
  }
  EXPECT_EQ(run_cli_split("train-head -m /x --prompts p --ce-temperature 0 -o /tmp/y").code, 2);
  const CliRun heads =
      run_cli_split("train-head -m /x --prompts p --arch eagle3 --heads 3 -o /tmp/y");
  EXPECT_EQ(heads.err, "error: --heads and --head-layers apply to --arch medusa and hydra only\n");
  for (const std::string flag :
       {"--ttt-steps 4", "--draft-vocab-size 8", "--intermediate 8", "--feature-layers 1,2,3",
        "--ttt-warmup 5", "--ttt-short-steps 3", "--ttt-full-every 4", "--state-loss 1",
        "--scale-features", "--teacher-temperature 0"}) {
    const CliRun other = run_cli_split("train-head -m /x --prompts p " + flag + " -o /tmp/y");
    EXPECT_EQ(other.err,
              "error: --ttt-steps, --ttt-warmup, --ttt-short-steps, --ttt-full-every, "
              "--state-loss, --scale-features, --teacher-temperature, "
              "--draft-vocab-size, --feature-layers and --intermediate apply to "
              "--arch eagle3 only\n")
        << flag;
  }
  const CliRun two =
      run_cli_split("train-head -m /x --prompts p --arch eagle3 --feature-layers 1,2 -o /tmp/y");
  EXPECT_EQ(two.code, 2) << two.err;
  const CliRun cold = run_cli_split(
      "train-head -m /x --prompts p --arch eagle3 --teacher-temperature -1 -o /tmp/y");
  EXPECT_EQ(cold.code, 2) << cold.err;
  EXPECT_NE(cold.err.find("--teacher-temperature"), std::string::npos) << cold.err;
}

// A random 8-layer target (the default feature layers {2, 4, 5} need 7) with the bundled
// tokenizer, trained on given text for a few steps with --scale-features, the state term (its
// SmoothL1 reported per unrolled step), the one-hot teacher and short steps between full ones; tau
// is measured by drafting with the saved folder.
TEST(CliTrainEagle3, WritesAnEagle3HeadTheLoaderReads) {
  const std::string dir = test::temp_dir("cli-train-eagle3");
  CliRun r = run_cli("make-random -o " + dir + "/m --preset tiny --layers 8 --vocab 4096 --seed 3");
  ASSERT_EQ(r.code, 0) << r.out;
  std::filesystem::copy_file(test::kBundledModel + "/tokenizer.model", dir + "/m/tokenizer.model",
                             std::filesystem::copy_options::overwrite_existing);
  {
    std::mt19937 rng(1);
    const char* words[] = {"def", "return", "for", "in", "if", "else", "print", "value", "list"};
    std::ofstream text(dir + "/t.txt");
    for (int doc = 0; doc < 8; ++doc) {
      for (int w = 0; w < 60; ++w) text << words[rng() % 9] << ' ';
      text << "\n\n";
    }
  }
  r = run_cli("train-head -m " + dir + "/m --text " + dir +
              "/t.txt --arch eagle3 --ttt-steps 3 "
              "--draft-vocab-size 64 --intermediate 48 --scale-features --state-loss 0.5 "
              "--teacher-temperature 0 "
              "--eval-count 2 --ttt-short-steps 2 --ttt-full-every 2 "
              "--steps 6 "
              "--batch 2 "
              "--seq-len 32 --seed 2 -t 2 --dtype bf16 --tau-tokens 12 -o " +
              dir + "/h");
  ASSERT_EQ(r.code, 0) << r.out;
  for (const char* line :
       {"draft vocabulary: 64 tokens of 4096",
        "feature layers' RMS (fc trains on them divided by it; the export "
        "folds it in): ",
        "teacher: one-hot on the target's argmax (--teacher-temperature 0)",
        "trained an EAGLE-3 head (3 unrolled steps) 6 steps",
        // steps 1, 3 and 5 full (every 2nd counted back from the last)
        "optimizer steps x unrolled steps: 3 x 2, 3 x 3\n",
        "last steps per unrolled step (soft CE/top-1): s0 ", "; state 0.",
        "held-out unrolled step 2 over ",
        "held-out tau (temperature 0, dynamic tree 60/5/10, 2 prompts, 12 new tokens): ",
        "cpu time of the whole run"})
    EXPECT_NE(r.out.find(line), std::string::npos) << line << "\n" << r.out;
  const auto target = LlamaModel::load(dir + "/m");
  const auto head = EagleHead::load(dir + "/h", *target);
  EXPECT_EQ(head->kind(), EagleHead::Kind::Eagle3);
  EXPECT_EQ(head->draft_vocab_size(), 64);
  EXPECT_EQ(head->config().intermediate_size, 48);
  EXPECT_EQ(head->weights_dtype(), "BF16");
}

}  // namespace
}  // namespace eagle2

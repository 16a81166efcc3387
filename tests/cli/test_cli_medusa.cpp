// Medusa and Hydra heads through the CLI: `generate --spec medusa:DIR` / `hydra:DIR` prints the
// same text as plain decoding (greedy, and sampled with a seed) on the bundled model and its
// bundled heads; `train-head --arch medusa|hydra` trains heads that the spec then drafts with; and
// the errors.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "support/cli.h"
#include "support/shared_data.h"

namespace eagle2 {
namespace {

using test::CliRun;
using test::run_cli;
using test::run_cli_split;

const std::string kMedusa = std::string(EAGLE2_SOURCE_DIR) + "/models/code-lm-medusa";
const std::string kHydra = std::string(EAGLE2_SOURCE_DIR) + "/models/code-lm-hydra";

std::string stats_drafter(const std::string& err) {
  const size_t at = err.find("[stats] drafter ");
  return at == std::string::npos ? "(none)" : err.substr(at + 16, err.find(' ', at + 16) - at - 16);
}

// The bundled heads (skipped when a checkout lacks them): greedy and sampled output equal plain
// decoding's, and the [stats] line names the drafter.
void expect_plain_text(const std::string& kind, const std::string& dir) {
  const std::string gen = "generate -m " + test::kBundledModel + " -p 'def add(a, b):' -n 32 -t 1 ";
  const CliRun plain = run_cli_split(gen + "--spec plain");
  ASSERT_EQ(plain.code, 0) << plain.err;
  const CliRun heads = run_cli_split(gen + "--spec " + kind + ":" + dir);
  ASSERT_EQ(heads.code, 0) << heads.err;
  EXPECT_EQ(heads.out, plain.out);
  EXPECT_EQ(stats_drafter(heads.err), kind) << heads.err;
  const CliRun wide = run_cli_split(gen + "--spec " + kind + ":" + dir + ":20");
  ASSERT_EQ(wide.code, 0) << wide.err;
  EXPECT_EQ(wide.out, plain.out);
  const std::string sampled = gen + "--temp 0.8 --seed 3 ";
  const CliRun plain_s = run_cli_split(sampled + "--spec plain");
  const CliRun heads_s = run_cli_split(sampled + "--spec " + kind + ":" + dir);
  ASSERT_EQ(heads_s.code, 0) << heads_s.err;
  EXPECT_EQ(heads_s.out, plain_s.out);
}

TEST(CliMedusa, BundledHeadsGenerateWhatPlainDecodingGenerates) {
  if (!std::filesystem::exists(kMedusa + "/model.safetensors"))
    GTEST_SKIP() << kMedusa << " is absent";
  expect_plain_text("medusa", kMedusa);
}

TEST(CliMedusa, BundledHydraHeadsGenerateWhatPlainDecodingGenerates) {
  if (!std::filesystem::exists(kHydra + "/model.safetensors"))
    GTEST_SKIP() << kHydra << " is absent";
  expect_plain_text("hydra", kHydra);
}

TEST(CliMedusa, Errors) {
  std::string why;
  const CliRun missing = run_cli_split("generate -m " + test::kBundledModel +
                                       " -p hi -n 2 --spec medusa:/nonexistent");
  EXPECT_TRUE(test::is_one_clean_error(missing, &why)) << why;
  EXPECT_EQ(missing.err, "error: /nonexistent: Medusa head directory not found\n");
  const CliRun bad_t =
      run_cli_split("generate -m " + test::kBundledModel + " -p hi -n 2 --spec medusa:/x:0");
  EXPECT_EQ(bad_t.code, 2);
  EXPECT_NE(bad_t.err.find("expected medusa:HEADS_DIR[:T] with T in [1, 1024]"), std::string::npos)
      << bad_t.err;
  const CliRun noise =
      run_cli_split("train-head -m /x --prompts p --arch medusa --noise 0.2 -o /tmp/y");
  EXPECT_EQ(noise.err,
            "error: --noise, --noise-relative and --fc-identity apply to --arch eagle only\n");
  const CliRun heads = run_cli_split("train-head -m /x --prompts p --heads 3 -o /tmp/y");
  EXPECT_EQ(heads.err, "error: --heads and --head-layers apply to --arch medusa and hydra only\n");
}

double number_after(const std::string& text, const std::string& key) {
  const size_t at = text.find(key);
  return at == std::string::npos ? -1 : std::atof(text.c_str() + at + key.size());
}

// A few steps of --arch medusa / hydra on the stories model: per-head agreement and tau reported,
// and the folder drafts through --spec with plain decoding's output.
TEST(CliMedusa, TrainHeadArchMedusaAndHydraWriteHeadsTheSpecDraftsWith) {
  EAGLE2_SHARED_FILE(model_cfg, "data/models/stories260K-hf/config.json");
  EAGLE2_SHARED_FILE(corpus, "data/corpora/tinystories_valid_head.txt");
  const std::string model_dir = model_cfg.substr(0, model_cfg.rfind('/'));
  for (const std::string arch : {"medusa", "hydra"}) {
    SCOPED_TRACE(arch);
    const std::string dir = test::temp_dir("cli-" + arch + "-train") + "/heads";
    const CliRun run =
        run_cli("train-head -m " + model_dir + " --text " + corpus + " --arch " + arch +
                " --heads 3 --limit 24 --eval-count 4 --steps 20 --batch 4 "
                "--seq-len 64 --tau-tokens 16 --seed 2 -t 2 -o " +
                dir);
    ASSERT_EQ(run.code, 0) << run.out;
    EXPECT_NE(run.out.find("trained 3 " + arch + " heads"), std::string::npos) << run.out;
    EXPECT_GE(number_after(run.out, "held-out head 3 (predicts x_{t+4}) over "), 1) << run.out;
    EXPECT_GE(number_after(run.out, "new tokens): "), 1.0) << run.out;
    EXPECT_NE(run.out.find("cpu time of the whole run"), std::string::npos) << run.out;
    const std::string gen = "generate -m " + model_dir + " -p 'Once upon a time' -n 24 -t 1 ";
    const CliRun plain = run_cli_split(gen + "--spec plain");
    const CliRun heads = run_cli_split(gen + "--spec " + arch + ":" + dir + ":6");
    ASSERT_EQ(heads.code, 0) << heads.err;
    EXPECT_EQ(heads.out, plain.out);
  }
}

}  // namespace
}  // namespace eagle2

// Non-finite numbers and over-wide requests on the drafting side: a head with a NaN/inf weight is
// refused at load (naming the tensor), draft log-probs that are not finite are an Error, the
// acceptance calibration bins any float safely, top-k never silently returns fewer entries than
// its callers read, and a target with NaN weights stops greedy and sampled decoding with the same
// Error instead of a silent token.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/error.h"
#include "draft/eagle_head.h"
#include "model/random_model.h"
#include "speculative/eagle_drafter.h"
#include "speculative/tree_budget.h"
#include "support/cli.h"
#include "support/decoding.h"
#include "support/errors.h"
#include "support/random_models.h"
#include "support/shared_data.h"

namespace eagle2 {
namespace {

using test::error_of;

constexpr float kInf = std::numeric_limits<float>::infinity();

// Overwrites element `index` of F32 tensor `name` in a safetensors file with `value`, the way a
// corrupted or diverged checkpoint carries a NaN or inf.
void poison_tensor(const std::string& path, const std::string& name, int64_t index, float value) {
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_GE(bytes.size(), 8u);
  uint64_t header_len = 0;
  std::memcpy(&header_len, bytes.data(), 8);  // little-endian on every supported machine
  const nlohmann::json header = nlohmann::json::parse(bytes.substr(8, header_len));
  ASSERT_TRUE(header.contains(name)) << name;
  ASSERT_EQ(header[name]["dtype"], "F32");
  const auto begin = header[name]["data_offsets"][0].get<uint64_t>();
  const size_t at = 8 + header_len + begin + static_cast<uint64_t>(index) * sizeof(float);
  ASSERT_LE(at + sizeof(float), bytes.size());
  std::memcpy(&bytes[at], &value, sizeof(float));
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

class HostileNumerics : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    target_ = test::load_random_model("hostile-numerics", test::tiny_config()).release();
  }
  static void TearDownTestSuite() {
    delete target_;
    target_ = nullptr;
  }
  static LlamaModel* target_;
  ThreadPool pool_{2};
};
LlamaModel* HostileNumerics::target_ = nullptr;

TEST_F(HostileNumerics, HeadWithNonFiniteWeightIsRefusedAtLoadNamingTheTensor) {
  struct Case {
    const char* tensor;
    int64_t element;
    float value;
    const char* shown;
  };
  const Case cases[] = {{"layers.0.mlp.up_proj.weight", 7, NAN, "nan"},
                        {"fc.bias", 3, -kInf, "-inf"},
                        {"layers.0.post_attention_layernorm.weight", 0, kInf, "inf"}};
  int i = 0;
  for (const Case& c : cases) {
    const std::string dir = test::write_random_head("poisoned-" + std::to_string(i++), *target_);
    poison_tensor(dir + "/model.safetensors", c.tensor, c.element, c.value);
    EXPECT_EQ(error_of([&] { EagleHead::load(dir, *target_); }),
              dir + "/model.safetensors: tensor '" + c.tensor + "' has a non-finite value (" +
                  c.shown + ") at element " + std::to_string(c.element));
  }
  // The untouched head loads.
  EXPECT_NO_THROW(EagleHead::load(test::write_random_head("clean", *target_), *target_));
}

// The CLI path of the original crash: --calibrate with a NaN head ended in a float->int conversion
// of NaN in the calibration. It is now one clean error before anything is drafted.
TEST_F(HostileNumerics, CliWithNanHeadAndCalibrationIsOneCleanError) {
  const std::string model_dir = test::temp_dir("hostile-numerics-cli") + "/m";
  write_random_model(model_dir, test::tiny_config(), DType::F32, 3, 0.15f);
  const std::string head = test::write_random_head("poisoned-cli", *target_);
  poison_tensor(head + "/model.safetensors", "fc.weight", 11, NAN);
  const test::CliRun run =
      test::run_cli_split("generate -m " + model_dir + " --ids 1,5,9 -n 8 --draft " + head +
                          " --tree dynamic --calibrate");
  std::string why;
  EXPECT_TRUE(test::is_one_clean_error(run, &why)) << why;
  EXPECT_NE(run.err.find("tensor 'fc.weight' has a non-finite value (nan) at element 11"),
            std::string::npos)
      << run.err;
}

TEST(TopKOf, RefusesKBeyondTheRowAndNonFiniteLogProbs) {
  const std::vector<float> row = {-1.0f, -0.5f, -2.0f};
  std::vector<int32_t> tokens(4, -7);
  std::vector<float> values(4, 0);
  EXPECT_EQ(error_of([&] { top_k_of(row.data(), 3, 4, tokens.data(), values.data()); }),
            "draft head: asked for the top 4 of 3 draft tokens (--draft-top-k and tree widths "
            "must be in [1, 3], the draft vocabulary)");
  EXPECT_EQ(error_of([&] { top_k_of(row.data(), 3, 0, tokens.data(), values.data()); }),
            "draft head: asked for the top 0 of 3 draft tokens (--draft-top-k and tree widths "
            "must be in [1, 3], the draft vocabulary)");
  top_k_of(row.data(), 3, 3, tokens.data(), values.data());
  EXPECT_EQ(std::vector<int32_t>(tokens.begin(), tokens.begin() + 3),
            (std::vector<int32_t>{1, 0, 2}));

  for (float bad : {NAN, -kInf, kInf}) {
    const std::vector<float> poisoned = {-1.0f, bad, -2.0f};
    const std::string message =
        error_of([&] { top_k_of(poisoned.data(), 3, 2, tokens.data(), values.data()); });
    EXPECT_EQ(message.rfind("draft head: draft log-prob of draft token 1 is ", 0), 0u) << message;
  }
}

// A draft vocabulary narrower than the tree's width: refused when the drafter is made, and when
// the vocabulary is narrowed after that, drafting stops with an Error instead of reading top-k
// entries that were never written. A width that fits decodes losslessly.
TEST_F(HostileNumerics, TinyDraftVocabulary) {
  auto head = EagleHead::load(test::write_random_head("tiny-vocab", *target_), *target_);
  GenerationOptions opt;
  opt.max_new_tokens = 12;
  opt.stop_at_eos = false;
  const std::vector<int32_t> prompt = {1, 17, 42, 5};
  const std::vector<int32_t> plain = test::plain_tokens(*target_, prompt, opt, 64, pool_);

  head->restrict_vocab({3, 5, 7});
  EagleDrafterOptions wide;
  wide.context = 64;
  wide.dynamic.top_k = 4;
  EXPECT_EQ(error_of([&] { EagleDrafter d(*head, pool_, wide); }),
            "--draft-top-k must be in [1, 3] (the draft vocabulary; got 4)");

  EagleDrafterOptions fits = wide;
  fits.dynamic.top_k = 3;
  fits.dynamic.depth = 3;
  fits.dynamic.total_tokens = 8;
  EagleDrafter dynamic(*head, pool_, fits);
  EXPECT_EQ(test::speculative_tokens(*target_, dynamic, prompt, opt, 64, pool_), plain);
  EagleDrafterOptions chain = fits;
  chain.shape = EagleDrafterOptions::Shape::Chain;
  EagleDrafter chained(*head, pool_, chain);
  EXPECT_EQ(test::speculative_tokens(*target_, chained, prompt, opt, 64, pool_), plain);

  head->restrict_vocab({3, 5});  // narrower than `dynamic` was made for
  EXPECT_EQ(error_of([&] { test::speculative_tokens(*target_, dynamic, prompt, opt, 64, pool_); }),
            "draft head: asked for the top 3 of 2 draft tokens (--draft-top-k and tree widths "
            "must be in [1, 2], the draft vocabulary)");
}

TEST(AcceptanceCalibration, AnyLogProbLandsInAValidBin) {
  // +inf counts as probability 1 (the top bin), NaN and -inf as probability 0 (the bottom bin).
  AcceptanceCalibration inf_seen, one_seen;
  inf_seen.record(kInf, 0, false);
  one_seen.record(0.0f, 0, false);
  EXPECT_EQ(inf_seen.estimate(0.0f, 0), one_seen.estimate(0.0f, 0));
  AcceptanceCalibration nan_seen, zero_seen;
  nan_seen.record(NAN, 1, true);
  zero_seen.record(-kInf, 1, true);
  EXPECT_EQ(nan_seen.estimate(-30.0f, 1), zero_seen.estimate(-30.0f, 1));

  for (const AcceptanceCalibration* c : {&inf_seen, &nan_seen}) {
    for (float logp : {NAN, -kInf, kInf, 0.0f, -3.0f}) {
      for (int rank : {-1, 0, 1, 5}) {
        const double e = c->estimate(logp, rank);
        EXPECT_TRUE(e >= 0.0 && e <= 1.0) << logp << " rank " << rank << ": " << e;
        const float lc = c->log_confidence(logp, rank);
        EXPECT_TRUE(lc <= 0.0f && !std::isnan(lc)) << logp << " rank " << rank << ": " << lc;
      }
    }
  }
}

// NaN weights in the target make every logit NaN: greedy used to pick a token anyway in some
// paths; now plain and speculative decoding, greedy and sampled, all stop with the same Error.
TEST_F(HostileNumerics, TargetWithNanWeightsIsTheSameErrorGreedyAndSampled) {
  const std::string dir = test::temp_dir("hostile-numerics-nan-target") + "/m";
  write_random_model(dir, test::tiny_config(), DType::F32, 9, 0.15f);
  poison_tensor(dir + "/model.safetensors", "model.norm.weight", 0, NAN);
  auto model = LlamaModel::load(dir);
  const std::vector<int32_t> prompt = {1, 17, 42};
  const std::string want =
      "the model produced a NaN logit (token 0): its weights or activations are not finite";
  for (float temperature : {0.0f, 0.8f}) {
    GenerationOptions opt;
    opt.max_new_tokens = 4;
    opt.sampling.temperature = temperature;
    EXPECT_EQ(error_of([&] { test::plain_tokens(*model, prompt, opt, 32, pool_); }), want);
    NoDrafter none;
    EXPECT_EQ(error_of([&] { test::speculative_tokens(*model, none, prompt, opt, 32, pool_); }),
              want);
  }
}

}  // namespace
}  // namespace eagle2

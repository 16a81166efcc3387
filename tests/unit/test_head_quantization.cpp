// A draft head quantized to Q8_0 / Q4_0 (EagleHead::quantize_weights): its matrices change type,
// its outputs stay close to the float head's (the quantization error, not a broken layout), and
// the default follows the target's quantization.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <vector>

#include "core/error.h"
#include "draft/eagle_head.h"
#include "support/random_models.h"
#include "support/shared_data.h"

namespace eagle2 {
namespace {

// Head outputs for a fixed causal batch of 6 rows on a fresh cache.
std::vector<float> outputs(EagleHead& head, ThreadPool& pool) {
  const int64_t d = head.config().hidden_size, n = 6;
  std::vector<float> features(static_cast<size_t>(n * d));
  for (size_t i = 0; i < features.size(); ++i)
    features[i] = std::sin(0.37f * static_cast<float>(i));
  const std::vector<int32_t> tokens = {5, 17, 3, 60, 9, 44};
  KvCache kv = head.make_cache(32);
  std::vector<float> out(static_cast<size_t>(n * d));
  head.forward_causal(features.data(), tokens, kv, out.data(), pool);
  return out;
}

double relative_error(const std::vector<float>& a, const std::vector<float>& b) {
  double num = 0, den = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    num += (a[i] - b[i]) * static_cast<double>(a[i] - b[i]);
    den += static_cast<double>(a[i]) * a[i];
  }
  return std::sqrt(num / den);
}

TEST(HeadQuantization, OutputsStayCloseToTheFloatHeads) {
  auto target = test::load_random_model("head-quant", test::tiny_config());
  const std::string dir = test::write_random_head("head-quant", *target);
  ThreadPool pool(2);
  auto reference = EagleHead::load(dir, *target);
  const std::vector<float> want = outputs(*reference, pool);
  EXPECT_EQ(reference->weights_dtype(), "F32");
  // Measured on this random head (weights and activations both quantized): 2.0 % of the output's
  // norm for Q8_0, 18.5 % for Q4_0. A scrambled layout or a wrong scale gives errors near 100 %.
  for (const auto& [type, bound] : {std::pair{DType::Q8_0, 0.04}, std::pair{DType::Q4_0, 0.35}}) {
    auto head = EagleHead::load(dir, *target);
    head->quantize_weights(type);
    EXPECT_EQ(head->weights_dtype(), dtype_name(type));
    const double err = relative_error(want, outputs(*head, pool));
    EXPECT_GT(err, 0.0) << dtype_name(type);  // the weights did change
    EXPECT_LT(err, bound) << dtype_name(type);
  }
  auto head = EagleHead::load(dir, *target);
  try {
    head->quantize_weights(DType::Q6_K);
    FAIL() << "Q6_K accepted";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "draft head: cannot quantize to Q6_K (Q8_0 or Q4_0)");
  }
}

// Quantizing twice (a head already quantized) leaves the blocks alone.
TEST(HeadQuantization, QuantizingAgainChangesNothing) {
  auto target = test::load_random_model("head-quant", test::tiny_config());
  const std::string dir = test::write_random_head("head-quant", *target);
  ThreadPool pool(1);
  auto head = EagleHead::load(dir, *target);
  head->quantize_weights(DType::Q4_0);
  const std::vector<float> once = outputs(*head, pool);
  head->quantize_weights(DType::Q8_0);
  EXPECT_EQ(head->weights_dtype(), "Q4_0");
  EXPECT_EQ(outputs(*head, pool), once);
}

TEST(HeadQuantization, DefaultFollowsTheTarget) {
  auto f32 = test::load_random_model("head-quant", test::tiny_config());
  EXPECT_FALSE(EagleHead::weights_type_for(*f32).has_value());
  for (const auto& [file, want] :
       {std::pair{"code-lm-bf16.gguf", "none"}, std::pair{"code-lm-q8_0.gguf", "Q8_0"},
        std::pair{"code-lm-q4_0.gguf", "Q4_0"}, std::pair{"code-lm-q4_k_m.gguf", "Q4_0"}}) {
    EAGLE2_SHARED_FILE(path, std::string("data/gguf/") + file);
    auto target = LlamaModel::load(path);
    const std::optional<DType> t = EagleHead::weights_type_for(*target);
    EXPECT_EQ(t ? std::string(dtype_name(*t)) : "none", want) << file;
  }
}

}  // namespace
}  // namespace eagle2

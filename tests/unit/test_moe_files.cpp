// Mixture-of-experts GGUF files through the tools that write and read them: `eagle2 quantize`
// retypes the stacked experts and keeps the router F32 (as llama-quantize does), and a qwen3moe
// file loads with its top-k probabilities renormalised.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "io/gguf.h"
#include "io/gguf_weights.h"
#include "model/llama_model.h"
#include "quantize/quantize_model.h"
#include "support/decoding.h"
#include "support/random_models.h"
#include "support/shared_data.h"

namespace eagle2 {
namespace {

// make-random of one seed writes the same draws as F32 or quantized, so quantizing its F32 file
// must give, tensor for tensor, the bytes of its file written directly in the type.
void check_moe_requantize(bool qwen3moe, DType type) {
  const std::string tag = std::string(qwen3moe ? "q3-" : "mix-") + dtype_name(type);
  const LlamaConfig cfg = test::tiny_moe_config(qwen3moe);
  const std::string f32 = test::load_random_moe_model("requant-f32-" + tag, cfg)->dir();
  auto direct = test::load_random_moe_model("requant-direct-" + tag, cfg, type);
  const std::string out = test::temp_dir("moe-requantize-" + tag) + "/q.gguf";
  quantize_model(f32, out, type);
  const GgufFile q(out), want(direct->dir());
  ASSERT_EQ(q.tensors().size(), want.tensors().size());
  int experts = 0, routers = 0;
  for (size_t i = 0; i < q.tensors().size(); ++i) {
    const GgufTensorInfo &t = q.tensors()[i], &w = want.tensors()[i];
    ASSERT_EQ(t.name, w.name);
    const std::string name(t.name);
    if (name.find("_exps.weight") != std::string::npos) {
      ++experts;
      EXPECT_EQ(t.type, ggml_type_of(type)) << name;
    }
    if (name.ends_with("ffn_gate_inp.weight")) {
      ++routers;
      EXPECT_EQ(t.type, 0u) << name << ": the router stays F32";
    }
    EXPECT_EQ(t.type, w.type) << name;
    ASSERT_EQ(t.bytes, w.bytes) << name;
    EXPECT_EQ(std::memcmp(q.tensor_data(t), want.tensor_data(w), t.bytes), 0) << name;
  }
  EXPECT_EQ(experts, 3 * cfg.num_layers) << tag;
  EXPECT_EQ(routers, cfg.num_layers) << tag;
  // It loads and generates the tokens of the file written in the type directly.
  auto model = LlamaModel::load(out);
  ThreadPool pool(2);
  GenerationOptions opt;
  opt.max_new_tokens = 8;
  const std::vector<int32_t> prompt = {5, 17, 230, 41};
  const std::vector<int32_t> got = test::plain_tokens(*model, prompt, opt, 64, pool);
  EXPECT_EQ(got.size(), 8u) << tag;
  EXPECT_EQ(got, test::plain_tokens(*direct, prompt, opt, 64, pool)) << tag;
}

TEST(MoeQuantize, StackedExpertsAreRetypedAndTheRouterStaysF32) {
  check_moe_requantize(false, DType::Q8_0);
  check_moe_requantize(true, DType::Q4_0);
}

// qwen3moe GGUF files carry no norm_topk_prob key; every published Qwen3-MoE renormalises, and
// llama.cpp's qwen3moe graph does, so the loader sets it.
TEST(MoeQuantize, Qwen3MoeFilesLoadWithTheirTopKRenormalised) {
  EXPECT_TRUE(
      test::load_random_moe_model("q3-norm", test::tiny_moe_config(true))->config().norm_topk_prob);
}

}  // namespace
}  // namespace eagle2

// Random-weight models: the folder a loader sees, determinism, tied and untied heads.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "core/error.h"
#include "io/safetensors.h"
#include "model/llama_config.h"
#include "model/random_model.h"
#include "support/shared_data.h"

namespace eagle2 {
namespace {

namespace fs = std::filesystem;

LlamaConfig small_config(bool tie) {
  LlamaConfig c;
  c.architecture = "LlamaForCausalLM";
  c.hidden_size = 32;
  c.intermediate_size = 88;
  c.num_layers = 2;
  c.num_heads = 4;
  c.num_kv_heads = 2;
  c.head_dim = 8;
  c.vocab_size = 100;
  c.max_position_embeddings = 256;
  c.rms_norm_eps = 1e-5f;
  c.tie_word_embeddings = tie;
  c.eos_token_ids = {2};
  return c;
}

std::vector<float> as_f32(const TensorView& v) {
  std::vector<float> out(static_cast<size_t>(v.numel()));
  convert_to_f32(v.dtype, v.data, out.data(), out.size());
  return out;
}

TEST(RandomModel, LayoutShapesAndDtypes) {
  for (DType dtype : {DType::F32, DType::F16, DType::BF16}) {
    SCOPED_TRACE(dtype_name(dtype));
    const std::string dir =
        test::temp_dir(std::string("random_layout_") + dtype_name(dtype)) + "/m";
    const LlamaConfig cfg = small_config(false);
    write_random_model(dir, cfg, dtype, 5);
    EXPECT_TRUE(fs::exists(dir + "/config.json"));
    EXPECT_FALSE(fs::exists(dir + "/tokenizer.model"));
    const LlamaConfig back = LlamaConfig::load(dir + "/config.json");
    EXPECT_EQ(back.hidden_size, 32);
    EXPECT_EQ(back.num_kv_heads, 2);
    EXPECT_EQ(back.eos_token_ids, std::vector<int32_t>{2});

    const TensorStore s = TensorStore::open_dir(dir);
    EXPECT_EQ(s.tensors().size(), 2u * 9 + 3);
    const int64_t d = 32, q = 4 * 8, kv = 2 * 8, I = 88, V = 100;
    s.get("model.embed_tokens.weight", {V, d}, dtype);
    s.get("lm_head.weight", {V, d}, dtype);
    s.get("model.norm.weight", {d}, dtype);
    for (int l = 0; l < 2; ++l) {
      const std::string p = "model.layers." + std::to_string(l) + ".";
      s.get(p + "input_layernorm.weight", {d}, dtype);
      s.get(p + "post_attention_layernorm.weight", {d}, dtype);
      s.get(p + "self_attn.q_proj.weight", {q, d}, dtype);
      s.get(p + "self_attn.k_proj.weight", {kv, d}, dtype);
      s.get(p + "self_attn.v_proj.weight", {kv, d}, dtype);
      s.get(p + "self_attn.o_proj.weight", {d, q}, dtype);
      s.get(p + "mlp.gate_proj.weight", {I, d}, dtype);
      s.get(p + "mlp.up_proj.weight", {I, d}, dtype);
      s.get(p + "mlp.down_proj.weight", {d, I}, dtype);
    }
    EXPECT_EQ(llama_tensor_specs(cfg, dtype).size(), s.tensors().size());
  }
}

TEST(RandomModel, Statistics) {
  const std::string dir = test::temp_dir("random_stats");
  LlamaConfig cfg = small_config(true);
  cfg.hidden_size = 256;
  cfg.num_heads = 8;
  cfg.num_kv_heads = 8;
  cfg.head_dim = 32;
  cfg.vocab_size = 1000;
  write_random_model(dir, cfg, DType::F32, 1, 0.05f);
  const TensorStore s = TensorStore::open_dir(dir);

  auto moments = [](const std::vector<float>& v) {
    double sum = 0, sq = 0;
    for (float x : v) sum += x;
    const double mean = sum / v.size();
    for (float x : v) sq += (x - mean) * (x - mean);
    return std::pair<double, double>(mean, std::sqrt(sq / v.size()));
  };
  const auto [emb_mean, emb_std] = moments(as_f32(s.get("model.embed_tokens.weight")));
  EXPECT_NEAR(emb_mean, 0.0, 0.001);
  EXPECT_NEAR(emb_std, 0.05, 0.001);
  std::vector<float> norms;
  for (int l = 0; l < 2; ++l) {
    for (const char* n : {"input_layernorm", "post_attention_layernorm"}) {
      const std::vector<float> w =
          as_f32(s.get("model.layers." + std::to_string(l) + "." + n + ".weight"));
      norms.insert(norms.end(), w.begin(), w.end());
    }
  }
  const auto [norm_mean, norm_std] = moments(norms);
  EXPECT_NEAR(norm_mean, 1.0, 0.02);
  EXPECT_NEAR(norm_std, 0.1, 0.01);
  // Different tensors get different values.
  const std::vector<float> q0 = as_f32(s.get("model.layers.0.self_attn.q_proj.weight"));
  const std::vector<float> q1 = as_f32(s.get("model.layers.1.self_attn.q_proj.weight"));
  EXPECT_NE(q0, q1);
}

TEST(RandomModel, DeterministicAndTied) {
  const std::string base = test::temp_dir("random_det");
  write_random_model(base + "/a", small_config(false), DType::BF16, 42);
  write_random_model(base + "/b", small_config(false), DType::BF16, 42);
  write_random_model(base + "/c", small_config(false), DType::BF16, 43);
  write_random_model(base + "/tied", small_config(true), DType::BF16, 42);
  const std::string a = test::read_file(base + "/a/model.safetensors");
  EXPECT_EQ(a, test::read_file(base + "/b/model.safetensors"));
  EXPECT_NE(a, test::read_file(base + "/c/model.safetensors"));
  EXPECT_EQ(test::read_file(base + "/a/config.json"), test::read_file(base + "/b/config.json"));

  const TensorStore untied = TensorStore::open_dir(base + "/a");
  const TensorStore tied = TensorStore::open_dir(base + "/tied");
  EXPECT_TRUE(untied.has("lm_head.weight"));
  EXPECT_FALSE(tied.has("lm_head.weight"));
  EXPECT_TRUE(LlamaConfig::load(base + "/tied/config.json").tie_word_embeddings);
  EXPECT_FALSE(LlamaConfig::load(base + "/a/config.json").tie_word_embeddings);
  EXPECT_EQ(tied.tensors().size() + 1, untied.tensors().size());
  // A tensor's values depend on its name and the seed only, so tying changes nothing else.
  for (const auto& [name, v] : tied.tensors()) {
    const TensorView& u = untied.get(name, v.shape, v.dtype);
    EXPECT_EQ(std::memcmp(u.data, v.data, v.nbytes()), 0) << name;
  }
  EXPECT_NE(as_f32(untied.get("lm_head.weight")), as_f32(untied.get("model.embed_tokens.weight")));
}

TEST(RandomModel, PinnedValues) {
  // Values are a file format (tests and benchmarks regenerate models from a seed): pinned to an
  // independent re-implementation (Python, float32 rounding per operation) of SplitMix64 over
  // (seed, FNV-1a of the name, element index) and the sum of four 16-bit uniforms.
  const std::string dir = test::temp_dir("random_pinned");
  write_random_model(dir, small_config(false), DType::F32, 5);
  const TensorStore s = TensorStore::open_dir(dir);
  auto first_bits = [&](const std::string& name) {
    const TensorView& v = s.get(name);
    std::vector<uint32_t> bits(4);
    std::memcpy(bits.data(), v.data, sizeof(uint32_t) * bits.size());
    return bits;
  };
  EXPECT_EQ(first_bits("model.layers.0.self_attn.q_proj.weight"),
            (std::vector<uint32_t>{0x3cb74393, 0x3c594b60, 0x3cc0bac9, 0xbc3b25e9}));
  EXPECT_EQ(first_bits("model.norm.weight"),
            (std::vector<uint32_t>{0x3f5bf34a, 0x3f59fd57, 0x3f8f6bb1, 0x3f669561}));
}

TEST(RandomModel, RefusesInvalidConfig) {
  const std::string dir = test::temp_dir("random_bad") + "/m";
  LlamaConfig c = small_config(false);
  c.num_kv_heads = 3;
  try {
    write_random_model(dir, c, DType::F32, 1);
    ADD_FAILURE() << "did not throw";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), dir +
                                         "/config.json: num_attention_heads (4) is not a multiple "
                                         "of num_key_value_heads (3)");
  }
  EXPECT_FALSE(fs::exists(dir));
}

}  // namespace
}  // namespace eagle2

#include "support/random_models.h"

#include <filesystem>

#include "model/random_model.h"
#include "quantize/random_gguf.h"
#include "support/shared_data.h"

namespace eagle2::test {

LlamaConfig deep_tiny_config() {
  LlamaConfig c = tiny_config();
  c.num_layers = 8;
  return c;
}

LlamaConfig tiny_config() {
  LlamaConfig c;
  c.architecture = "LlamaForCausalLM";
  c.hidden_size = 64;
  c.intermediate_size = 96;
  c.num_layers = 2;
  c.num_heads = 8;
  c.num_kv_heads = 4;
  c.head_dim = 8;
  c.vocab_size = 96;
  c.max_position_embeddings = 512;
  c.rms_norm_eps = 1e-5f;
  c.bos_token_id = 1;
  c.eos_token_ids = {2};
  return c;
}

std::unique_ptr<LlamaModel> load_random_model(const std::string& name, const LlamaConfig& cfg,
                                              DType dtype, uint64_t seed, float init_std) {
  const std::string dir = temp_dir("model-" + name);
  write_random_model(dir, cfg, dtype, seed, init_std);
  return LlamaModel::load(dir);
}

LlamaConfig tiny_moe_config(bool qwen3moe) {
  LlamaConfig c = tiny_config();
  c.vocab_size = 512;
  c.norm_topk_prob = true;
  if (qwen3moe) {
    c.architecture = "Qwen3MoeForCausalLM";
    c.qk_norm = true;
    c.num_experts = 6;
    c.num_experts_used = 3;
    c.expert_intermediate_size = 32;
  } else {
    c.architecture = "MixtralForCausalLM";
    c.intermediate_size = 64;
    c.num_experts = 8;
    c.num_experts_used = 2;
    c.expert_intermediate_size = 64;
  }
  return c;
}

std::unique_ptr<LlamaModel> load_random_moe_model(const std::string& name, const LlamaConfig& cfg,
                                                  DType dtype, uint64_t seed, float init_std) {
  const std::string path = temp_dir("moe-" + name) + "/model.gguf";
  if (!std::filesystem::exists(path))
    write_random_gguf(path, cfg, dtype, seed,
                      std::string(EAGLE2_SOURCE_DIR) + "/models/code-lm/tokenizer.model",
                      RandomScales{init_std, 4.0f});
  return LlamaModel::load(path);
}

}  // namespace eagle2::test

#include <fstream>
#include <random>

#include "io/safetensors.h"

namespace eagle2::test {

std::string write_random_head(const std::string& name, const LlamaModel& target, uint64_t seed,
                              float init_std, bool keep_expert_fields) {
  const std::string dir = temp_dir("head-" + name);
  LlamaConfig c = target.config();
  c.num_layers = 1;
  if (c.is_moe() &&
      !keep_expert_fields) {  // an EAGLE head's layer is dense, whatever its target's MLP
    c.architecture = c.qk_norm ? "Qwen3ForCausalLM" : "LlamaForCausalLM";
    c.num_experts = c.num_experts_used = c.expert_intermediate_size = 0;
    c.norm_topk_prob = false;
  }
  c.tie_word_embeddings = false;
  {
    std::string json = c.to_json();
    // The published heads carry "bias": true for fc.
    json.insert(json.rfind('}'), ", \"bias\": true");
    std::ofstream(dir + "/config.json") << json;
  }
  const int64_t d = c.hidden_size, hd = c.head_dim, I = c.intermediate_size;
  const int64_t qd = c.num_heads * hd, kvd = c.num_kv_heads * hd;
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, init_std);
  std::vector<std::vector<float>> data;
  std::vector<TensorToWrite> tensors;
  auto add = [&](const std::string& tname, std::vector<int64_t> shape, float mean, float std) {
    int64_t n = 1;
    for (int64_t s : shape) n *= s;
    std::vector<float> v(static_cast<size_t>(n));
    for (auto& x : v) x = mean + std * normal(rng) / init_std;
    data.push_back(std::move(v));
    tensors.push_back({tname, DType::F32, shape, nullptr});
  };
  add("fc.weight", {d, 2 * d}, 0, init_std);
  add("fc.bias", {d}, 0, init_std);
  add("layers.0.self_attn.q_proj.weight", {qd, d}, 0, init_std);
  add("layers.0.self_attn.k_proj.weight", {kvd, d}, 0, init_std);
  add("layers.0.self_attn.v_proj.weight", {kvd, d}, 0, init_std);
  add("layers.0.self_attn.o_proj.weight", {d, qd}, 0, init_std);
  add("layers.0.mlp.gate_proj.weight", {I, d}, 0, init_std);
  add("layers.0.mlp.up_proj.weight", {I, d}, 0, init_std);
  add("layers.0.mlp.down_proj.weight", {d, I}, 0, init_std);
  add("layers.0.post_attention_layernorm.weight", {d}, 1, 0.1f);
  // The checkpoint's copy of the target's embedding.
  std::vector<float> emb(static_cast<size_t>(c.vocab_size * d));
  for (int64_t t = 0; t < c.vocab_size; ++t) target.embed(static_cast<int32_t>(t), &emb[t * d]);
  data.push_back(std::move(emb));
  tensors.push_back({"embed_tokens.weight", DType::F32, {c.vocab_size, d}, nullptr});
  for (size_t i = 0; i < tensors.size(); ++i) tensors[i].data = data[i].data();
  write_safetensors(dir + "/model.safetensors", tensors);
  return dir;
}

}  // namespace eagle2::test

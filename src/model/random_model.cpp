#include "model/random_model.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string_view>
#include <thread>

#include "core/error.h"
#include "core/splitmix64.h"

namespace eagle2 {

namespace fs = std::filesystem;

namespace {

uint64_t name_key(uint64_t seed, std::string_view name) {
  uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a
  for (unsigned char c : name) h = (h ^ c) * 0x100000001b3ull;
  return splitmix64_mix(h ^ splitmix64_at(seed, 1));
}

// Element i of a tensor is a function of (key, i) alone: a counter-based stream, so generation
// order and chunking can never change the values.
template <class Store>
void fill_normal(uint64_t key, size_t begin, size_t n, float mean, float stddev, Store store) {
  // Four 16-bit uniforms summed: variance 4 * (65536^2 - 1) / 12, taken as 65536^2 / 3.
  const float scale = stddev * std::sqrt(3.0f) / 65536.0f;
  auto range = [&](size_t from, size_t end) {
    for (size_t i = from; i < end; ++i) {
      const uint64_t r = splitmix64_at(key, begin + i + 1);
      const int32_t s = static_cast<int32_t>((r & 0xffff) + ((r >> 16) & 0xffff) +
                                             ((r >> 32) & 0xffff) + (r >> 48)) -
                        131070;
      store(i, mean + static_cast<float>(s) * scale);
    }
  };
  // Large tensors are split over plain threads (a one-off tool, so no persistent pool is needed);
  // the values cannot depend on the split because each is a function of its index.
  const size_t threads =
      std::min<size_t>(std::max(1u, std::thread::hardware_concurrency()), n / (1u << 20) + 1);
  if (threads <= 1) {
    range(0, n);
    return;
  }
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t)
    pool.emplace_back(range, n * t / threads, n * (t + 1) / threads);
  range(0, n / threads);
  for (std::thread& th : pool) th.join();
}

// Norm weights scatter around 1 (so that the norms are not the identity; the final norm around
// scales.final_norm), biases (Qwen2's q/k/v) around 0, as large as a few weights' sum.
bool is_bias(const TensorSpec& t) {
  return t.name.ends_with(".bias");
}
float norm_scale(const TensorSpec& t, const RandomScales& scales) {
  return t.name == "model.norm.weight" ? scales.final_norm : 1.0f;
}
float tensor_mean(const TensorSpec& t, const RandomScales& scales) {
  return t.shape.size() == 1 && !is_bias(t) ? norm_scale(t, scales) : 0.0f;
}
float tensor_stddev(const TensorSpec& t, const RandomScales& scales) {
  // A mixture of experts' router 4x the other matrices: random routers otherwise give experts
  // nearly equal probabilities, so that any rounding (another engine's f16 KV cache) swaps a
  // token's experts and the comparison with another engine measures near-ties, not the model.
  if (t.name.ends_with("mlp.gate.weight")) return 4.0f * scales.init_std;
  return is_bias(t) ? 0.5f : t.shape.size() == 1 ? 0.1f * norm_scale(t, scales) : scales.init_std;
}

}  // namespace

void check_random_scales(const RandomScales& scales, const std::string& where) {
  if (!(scales.init_std >= 0) || !std::isfinite(scales.init_std))
    fail(where, ": random model init_std must be a finite non-negative number, got ",
         scales.init_std);
  if (!(scales.final_norm > 0) || !std::isfinite(scales.final_norm))
    fail(where, ": random model final norm scale must be a finite positive number, got ",
         scales.final_norm);
}

void random_tensor_values(uint64_t seed, const TensorSpec& spec, const RandomScales& scales,
                          size_t begin, size_t n, float* out) {
  fill_normal(name_key(seed, spec.name), begin, n, tensor_mean(spec, scales),
              tensor_stddev(spec, scales), [out](size_t i, float v) { out[i] = v; });
}

std::vector<TensorSpec> llama_tensor_specs(const LlamaConfig& cfg, DType dtype) {
  const int64_t d = cfg.hidden_size, hd = cfg.head_dim, I = cfg.intermediate_size;
  const int64_t q = cfg.num_heads * hd, kv = cfg.num_kv_heads * hd;
  std::vector<TensorSpec> specs;
  specs.push_back({"model.embed_tokens.weight", dtype, {cfg.vocab_size, d}});
  for (int64_t l = 0; l < cfg.num_layers; ++l) {
    const std::string p = "model.layers." + std::to_string(l) + ".";
    specs.push_back({p + "input_layernorm.weight", dtype, {d}});
    specs.push_back({p + "self_attn.q_proj.weight", dtype, {q, d}});
    specs.push_back({p + "self_attn.k_proj.weight", dtype, {kv, d}});
    specs.push_back({p + "self_attn.v_proj.weight", dtype, {kv, d}});
    if (cfg.qkv_bias) {  // Qwen2
      specs.push_back({p + "self_attn.q_proj.bias", dtype, {q}});
      specs.push_back({p + "self_attn.k_proj.bias", dtype, {kv}});
      specs.push_back({p + "self_attn.v_proj.bias", dtype, {kv}});
    }
    if (cfg.qk_norm) {  // Qwen3
      specs.push_back({p + "self_attn.q_norm.weight", dtype, {hd}});
      specs.push_back({p + "self_attn.k_norm.weight", dtype, {hd}});
    }
    specs.push_back({p + "self_attn.o_proj.weight", dtype, {d, q}});
    specs.push_back({p + "post_attention_layernorm.weight", dtype, {d}});
    if (cfg.is_moe()) {  // the router and the stacked experts, as GGUF holds them
      const int64_t E = cfg.num_experts, W = cfg.expert_intermediate_size;
      specs.push_back({p + "mlp.gate.weight", dtype, {E, d}});
      specs.push_back({p + "mlp.experts.gate_proj.weight", dtype, {E, W, d}});
      specs.push_back({p + "mlp.experts.up_proj.weight", dtype, {E, W, d}});
      specs.push_back({p + "mlp.experts.down_proj.weight", dtype, {E, d, W}});
      continue;
    }
    specs.push_back({p + "mlp.gate_proj.weight", dtype, {I, d}});
    specs.push_back({p + "mlp.up_proj.weight", dtype, {I, d}});
    specs.push_back({p + "mlp.down_proj.weight", dtype, {d, I}});
  }
  specs.push_back({"model.norm.weight", dtype, {d}});
  if (!cfg.tie_word_embeddings) specs.push_back({"lm_head.weight", dtype, {cfg.vocab_size, d}});
  return specs;
}

void write_random_model(const std::string& dir, const LlamaConfig& cfg, DType dtype, uint64_t seed,
                        const RandomScales& scales) {
  if (is_block_dtype(dtype))
    fail("make-random writes safetensors as F32, F16 or BF16, not ", dtype_name(dtype));
  const std::string config_path = (fs::path(dir) / "config.json").string();
  // The same checks a reader will apply, before anything is written.
  const std::string config_text = cfg.to_json();
  // (The parsed config also derives the architecture's extras, e.g. Qwen2's q/k/v biases.)
  const LlamaConfig parsed = LlamaConfig::parse(config_text, config_path);
  // Hugging Face folders hold one tensor per expert; the stacked experts here are GGUF's layout.
  if (parsed.is_moe())
    fail(dir, ": a random mixture-of-experts model is written as one GGUF file (-o NAME.gguf)");
  check_random_scales(scales, dir);

  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) fail(dir, ": cannot create directory: ", ec.message());
  {
    std::ofstream out(config_path, std::ios::binary | std::ios::trunc);
    out << config_text;
    out.close();
    if (!out) fail(config_path, ": cannot write");
  }

  const std::vector<TensorSpec> specs = llama_tensor_specs(parsed, dtype);
  write_safetensors_streaming(
      (fs::path(dir) / "model.safetensors").string(), specs,
      [&](size_t index, void* dst) {
        const TensorSpec& t = specs[index];
        size_t n = 1;
        for (int64_t x : t.shape) n *= static_cast<size_t>(x);
        const float mean = tensor_mean(t, scales), stddev = tensor_stddev(t, scales);
        const uint64_t key = name_key(seed, t.name);
        switch (dtype) {
          case DType::F32: {
            float* out = static_cast<float*>(dst);
            fill_normal(key, 0, n, mean, stddev, [out](size_t i, float v) { out[i] = v; });
            break;
          }
          case DType::F16: {
            uint16_t* out = static_cast<uint16_t*>(dst);
            fill_normal(key, 0, n, mean, stddev,
                        [out](size_t i, float v) { out[i] = f32_to_f16(v); });
            break;
          }
          case DType::BF16: {
            uint16_t* out = static_cast<uint16_t*>(dst);
            fill_normal(key, 0, n, mean, stddev,
                        [out](size_t i, float v) { out[i] = f32_to_bf16(v); });
            break;
          }
          default:
            fail("make-random writes safetensors as F32, F16 or BF16, not ", dtype_name(dtype));
        }
      },
      {{"format", "pt"}});
}

}  // namespace eagle2

// Random-weight models for tests, written once per test binary in the HF layout and loaded
// through the real loader.
#pragma once

#include <memory>
#include <string>

#include "core/dtype.h"
#include "model/llama_config.h"
#include "model/llama_model.h"

namespace eagle2::test {

// A small LLaMA config: hidden 64, 2 layers, 8 heads / 4 kv heads (GQA), vocab 96, ctx 512.
LlamaConfig tiny_config();
// tiny_config() with 8 layers instead of its few (deep enough for a layer index to matter).
LlamaConfig deep_tiny_config();

// Writes cfg with random weights to a temp folder (cached by `name`) and loads it.
std::unique_ptr<LlamaModel> load_random_model(const std::string& name, const LlamaConfig& cfg,
                                              DType dtype = DType::F32, uint64_t seed = 7,
                                              float init_std = 0.15f);

// tiny_config() as a mixture of experts: Mixtral's kind (8 experts of width 64, top 2, LLaMA
// attention) or Qwen3-MoE's (6 experts of width 32, top 3, Qwen3's q/k norms), vocab 512.
LlamaConfig tiny_moe_config(bool qwen3moe = false);

// Writes cfg with random weights as one GGUF file of `dtype` (F32, F16, BF16, Q8_0, Q4_0; the
// bundled model's tokenizer) to a temp folder (cached by `name`) and loads it: the only form a
// random mixture of experts takes (model/random_model.h).
std::unique_ptr<LlamaModel> load_random_moe_model(const std::string& name, const LlamaConfig& cfg,
                                                  DType dtype = DType::F32, uint64_t seed = 7,
                                                  float init_std = 0.15f);

}  // namespace eagle2::test

namespace eagle2::test {

// A random EAGLE head for `target` in the published format (config.json + model.safetensors with
// embed_tokens, fc with bias, one layer without input norm), written to a temp folder.
// For a mixture-of-experts target the head's config drops the expert fields unless
// keep_expert_fields (as train-head writes it: the target's config, its layer still dense).
std::string write_random_head(const std::string& name, const LlamaModel& target, uint64_t seed = 5,
                              float init_std = 0.15f, bool keep_expert_fields = false);

}  // namespace eagle2::test

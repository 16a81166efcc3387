// LLaMA models with random weights, written as a Hugging Face folder (config.json +
// model.safetensors, no tokenizer: callers feed token ids). They let tests and benchmarks run any
// architecture size without downloading weights.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "io/safetensors.h"
#include "model/llama_config.h"

namespace eagle2 {

// The tensors of a LLaMA model under their Hugging Face names, with shapes from cfg: the
// embedding, per layer the two norms, q/k/v/o and gate/up/down projections, the final norm, and
// lm_head.weight unless the embeddings are tied. A mixture-of-experts model has instead of the MLP
// projections the router "mlp.gate.weight" [E, d] and the stacked experts
// "mlp.experts.{gate,up,down}_proj.weight" [E, W, d], [E, W, d], [E, d, W] (GGUF's layout).
std::vector<TensorSpec> llama_tensor_specs(const LlamaConfig& cfg, DType dtype);

// How large the random weights are.
struct RandomScales {
  float init_std = 0.02f;  // matrices: N(0, init_std)
  // model.norm.weight: N(final_norm, 0.1 * final_norm). Above 1 it multiplies every logit, so that
  // the next-token distribution has a clear top (random weights otherwise give a nearly flat one,
  // whose top tokens differ by less than rounding).
  float final_norm = 1.0f;
};

// Error "<where>: ..." for an init_std that is negative or not finite, or a final_norm that is not
// a finite positive number.
void check_random_scales(const RandomScales& scales, const std::string& where);

// Elements [begin, begin + n) of the values write_random_model draws for the tensor `spec` (before
// rounding to its dtype): a random GGUF model (quantize/random_gguf.h) holds the same model.
void random_tensor_values(uint64_t seed, const TensorSpec& spec, const RandomScales& scales,
                          size_t begin, size_t n, float* out);

// Creates dir (and its parents) and writes config.json (cfg.to_json()) and model.safetensors.
// Matrices are drawn from N(0, init_std) and norm weights from N(1, 0.1), so that the norms are not
// the identity. Values depend only on (seed, tensor name, element index): the same seed gives the
// same bytes, and a tensor's values do not depend on which other tensors exist (a tied and an
// untied model share their embedding). The normal is approximated by a sum of four uniforms
// (exact mean and variance, tails cut at 3.46 sigma), which is what makes 1e9 parameters take
// seconds. Tensors are generated and written one at a time. cfg is validated as parse() would.
void write_random_model(const std::string& dir, const LlamaConfig& cfg, DType dtype, uint64_t seed,
                        const RandomScales& scales);
inline void write_random_model(const std::string& dir, const LlamaConfig& cfg, DType dtype,
                               uint64_t seed, float init_std = 0.02f) {
  write_random_model(dir, cfg, dtype, seed, RandomScales{init_std, 1.0f});
}

}  // namespace eagle2

// A LLaMA model held as trainable float32 Parameters: token embedding, N decoder blocks
// (train/decoder_block.h), final RMSNorm and lm_head (or the embedding, when tied), with a
// causal-LM forward/backward. It reads and writes the Hugging Face layout that eagle2::LlamaModel
// loads, under the same tensor names.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "core/thread_pool.h"
#include "model/llama_config.h"
#include "train/decoder_block.h"
#include "train/parameter.h"

namespace eagle2::train {

class LlamaTrainModel {
 public:
  // Parameters shaped from cfg (validated as LlamaConfig::parse would: positive sizes, heads
  // divisible by kv heads, no attention bias), all zero but the norm weights (1) until init()
  // or load_weights().
  explicit LlamaTrainModel(const LlamaConfig& cfg);
  // The optimizer and checkpoints hold pointers to the Parameters: never copied or moved.
  LlamaTrainModel(const LlamaTrainModel&) = delete;
  LlamaTrainModel& operator=(const LlamaTrainModel&) = delete;

  const LlamaConfig& config() const { return cfg_; }
  // Every parameter in a fixed order (embedding, layers in order, final norm, lm_head if untied):
  // the optimizer's and the checkpoint's order.
  ParamList params() const { return params_; }

  // Matrices ~ N(0, std^2), with wo and w_down at std / sqrt(2 * layers) (GPT-2's scaling of the
  // residual branches); norms 1. Deterministic in seed.
  void init(uint64_t seed, float std = 0.02f);

  // Values from a Hugging Face folder (any of f32/f16/bf16, widened exactly); names and shapes are
  // checked, and a missing tensor is an Error.
  void load_weights(const std::string& dir);

  // Writes dir/config.json (cfg.to_json()) and dir/model.safetensors in dtype F32 or BF16
  // (rounded to nearest even), lm_head.weight omitted when tied. Creates dir.
  void export_hf(const std::string& dir, DType dtype) const;

  // Mean next-token cross-entropy over B sequences of T tokens: inputs[B*T] predict
  // targets[B*T]. With backward, ADDS the gradient of that mean loss into every Parameter::grad
  // (zero them first). Positions are 0..T-1 in each sequence.
  double forward_backward(const int32_t* inputs, const int32_t* targets, int64_t B, int64_t T,
                          bool backward, ThreadPool& pool);

  // The final-norm hidden states [B*T, C] of inputs[B*T] (what LlamaModel returns as `hidden`).
  std::vector<float> hidden_states(const int32_t* inputs, int64_t B, int64_t T, ThreadPool& pool);

  // Logits [B*T, V] (for tests and evaluation of small inputs).
  std::vector<float> logits(const int32_t* inputs, int64_t B, int64_t T, ThreadPool& pool);

 private:
  void forward(const int32_t* inputs, int64_t B, int64_t T, ThreadPool& pool);
  Parameter& head() { return cfg_.tie_word_embeddings ? embed_ : *lm_head_; }

  LlamaConfig cfg_;
  DecoderBlockConfig block_cfg_;
  Parameter embed_;  // [V, C]
  std::vector<std::unique_ptr<DecoderBlockWeights>> layers_;
  Parameter final_norm_;                // [C]
  std::unique_ptr<Parameter> lm_head_;  // [V, C]; null when tied
  std::vector<Parameter*> params_;

  // Saved by the latest forward for the backward.
  std::vector<DecoderBlockActivations> acts_;
  DecoderBlockScratch scratch_;
  std::vector<int32_t> positions_;  // [B*T]
  std::vector<float> x_;            // [B*T, C] residual stream, finally the last block's output
  std::vector<float> xf_;           // [B*T, C] final-norm output
  std::vector<float> rstd_f_;       // [B*T]
  std::vector<float> dx_, dxf_;     // [B*T, C]
};

}  // namespace eagle2::train

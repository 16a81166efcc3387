// A LLaMA-family transformer (LLaMA-2/3, Vicuna, Mistral) over memory-mapped weights, with one
// forward function for every caller: prefill, plain decoding, tree verification and feature
// extraction (DESIGN "The data flow").
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "core/thread_pool.h"
#include "io/safetensors.h"
#include "model/batch.h"
#include "model/checkpoint_checks.h"
#include "model/decoder_stack.h"
#include "model/kv_cache.h"
#include "model/llama_config.h"
#include "model/moe_ffn.h"

namespace eagle2 {

class GgufFile;

struct ForwardResult {
  std::vector<float> logits;    // [rows asked for, vocab], in the order asked for
  std::vector<float> hidden;    // [batch rows, hidden]: the final-norm states (EAGLE features)
  std::vector<float> captured;  // [capture rows, capture layers * hidden] (ForwardCapture)
};

// Residual-stream states a forward also returns (EAGLE-3 features): the INPUT of each decoder
// layer in `layers` (Hugging Face's hidden_states[l]: the output of layer l - 1, no norm; layer 0's
// input is the embedding), for the batch rows in `rows`. ForwardResult::captured row j holds row
// rows[j]'s states, concatenated in the order of `layers` (low -> mid -> high for EAGLE-3). Only
// copies are taken, so a forward with capture is bit-identical to one without.
struct ForwardCapture {
  std::span<const int32_t> layers;
  std::span<const int32_t> rows;
};

struct LoadOptions {
  // Every weight converted once to float32 in memory of the model's own (BF16/F16 upcast,
  // quantized types dequantized). Matmuls over BF16 weights round their activations to bf16
  // (kernels/matmul.h); reference runs that upcast the weights and keep float32 activations
  // (goldens) are only reproduced over F32 weights. Costs 4 bytes per parameter.
  bool upcast_f32 = false;
};

class LlamaModel {
 public:
  // Reads dir/config.json and the safetensors weights; checks every tensor's name and shape.
  static std::unique_ptr<LlamaModel> load(const std::string& dir, const LoadOptions& options = {});

  const LlamaConfig& config() const { return cfg_; }
  const std::string& dir() const { return dir_; }
  int64_t parameter_count() const;
  size_t weight_bytes() const;                     // bytes of the stored weights used
  std::vector<std::string> weight_dtypes() const;  // distinct dtypes, e.g. {"BF16", "F32"}
  const Matrix& lm_head() const { return lm_head_; }
  const TensorView& embedding() const { return embed_; }

  // A KV cache for this model; `capacity` tokens (bounded by max_position_embeddings and, for
  // Mistral, by sliding_window: a larger request is an Error), with a pool of its own.
  KvCache make_cache(int64_t capacity) const;
  // KV memory shared by many sequences: `tokens` slots (rounded up to whole blocks) in blocks of
  // block_size (a power of two); and a sequence's cache over it, holding no memory until used.
  std::shared_ptr<KvPool> make_pool(int64_t tokens,
                                    int64_t block_size = KvCache::kDefaultBlockSize) const;
  KvCache make_cache(std::shared_ptr<KvPool> pool, int64_t capacity) const;

  // Runs the batch on top of kv's committed context. Writes the batch's keys/values to the
  // pending slots (the caller then calls kv.keep(...) or kv.keep_all()). Logits are computed
  // only for logit_rows, layer inputs only for `capture`. Bit-exact whatever else is in the batch
  // (batch invariance). Error for a logit or capture row outside the batch, or a capture layer
  // outside [0, num_hidden_layers).
  void forward(const Batch& batch, KvCache& kv, std::span<const int32_t> logit_rows,
               ForwardResult& out, ThreadPool& pool, const ForwardCapture& capture = {});
  // The same over rows of several sequences (batch.sequences[i] indexes caches; the caches must
  // be distinct). Every projection is one matmul over all rows, so each weight is read once per
  // forward; attention is per sequence. Each cache gets its rows' slots as pending rows in batch
  // order (the caller keeps or drops them per cache), and every row's result is bit-identical to
  // running its sequence alone.
  void forward(const Batch& batch, std::span<KvCache* const> caches,
               std::span<const int32_t> logit_rows, ForwardResult& out, ThreadPool& pool,
               const ForwardCapture& capture = {});
  // Forwards run so far (calls with at least one row, either overload): lets tests assert how
  // many target forwards a decoding loop spends, e.g. one per speculative cycle.
  int64_t forward_calls() const { return forward_calls_.load(std::memory_order_relaxed); }

  // Mixture-of-experts models: distinct experts read by the forwards since the last reset, summed
  // over layers (the verify cost of a tree grows with it, not with its size alone); 0 if dense.
  int64_t experts_touched() const { return stack_ ? stack_->experts_touched() : 0; }
  void reset_experts_touched() {
    if (stack_) stack_->reset_experts_touched();
  }
  // Floats of the dense MLP's scratch (model/decoder_stack.h): 0 for a mixture of experts.
  size_t dense_mlp_scratch() const { return stack_ ? stack_->dense_mlp_scratch() : 0; }

  // Embedding row of a token as floats.
  void embed(int32_t token, float* out) const;

 private:
  struct Layer : DecoderProjections {
    std::vector<float> attn_norm, mlp_norm;
    std::vector<float> q_bias, k_bias, v_bias;  // Qwen2; empty otherwise
    std::vector<float> q_norm, k_norm;          // Qwen3: [head_dim] each; empty otherwise
    MoeWeights moe;  // Mixtral, Qwen3-MoE: the router and experts (the dense MLP is unbound)
  };
  LlamaModel() = default;
  void make_cache_checks(int64_t capacity) const;  // Error for a capacity the model cannot use
  // Q8_0/Q4_0 matrices of a GGUF model into MatrixLayout::kRowGroups16 where it pays; qk_copied:
  // the loader un-interleaved Q and K into memory of its own (writable whatever the residency).
  void group_quantized_rows(const GgufFile* gguf, bool qk_copied);
  LlamaModel(const LlamaModel&) = delete;  // layer_weights_ points into layers_
  LlamaModel& operator=(const LlamaModel&) = delete;

  LlamaConfig cfg_;
  std::string dir_;
  TensorStore store_;
  TensorView embed_;
  Matrix lm_head_;
  std::vector<Layer> layers_;
  std::vector<DecoderLayerWeights> layer_weights_;  // views of layers_ for the decoder stack
  std::optional<DecoderStack> stack_;
  std::vector<float> final_norm_;
  std::atomic<int64_t> forward_calls_{0};

  // Scratch, grown on demand and reused across calls (no allocation per token once warm).
  struct Workspace {
    std::vector<float> x, rows_hidden;
    std::vector<int32_t> slots;    // the KV slot of each batch row
    std::vector<int32_t> visible;  // flattened visible slots per batch row
    std::vector<int32_t> rows;     // one row's visible rows (scratch)
    std::vector<int64_t> visible_begin;
    std::vector<int64_t> count;  // rows per sequence
  } ws_;
};

}  // namespace eagle2

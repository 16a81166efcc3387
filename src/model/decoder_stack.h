// The one LLaMA decoder layer, shared by the target model (llama_model.cpp) and the EAGLE head
// (eagle_head.cpp): norm -> q/k/v (+ Qwen2 biases, Qwen3 per-head norms) -> RoPE -> KV write ->
// attention -> o_proj -> residual -> norm -> gate/up -> SwiGLU -> down -> residual, over the rows
// of one forward. Having one copy keeps the target and the head bit-compatible with each other and
// with the batch-invariance rules of the kernels (every row is computed alone, in a fixed order,
// whatever else is in the batch).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "core/thread_pool.h"
#include "kernels/attention.h"
#include "model/checkpoint_checks.h"
#include "model/kv_cache.h"
#include "model/llama_config.h"
#include "model/moe_ffn.h"

namespace eagle2 {

// One layer's weights. The projections are used in place (memory-mapped); the norms are floats.
struct DecoderLayerWeights {
  const DecoderProjections* proj = nullptr;
  const float* input_norm = nullptr;  // nullptr: no input norm (the EAGLE-1/2 head's layer)
  const float* post_attention_norm = nullptr;
  // Qwen2: added to q, k and v after their projections (nullptr: none).
  const float* q_bias = nullptr;
  const float* k_bias = nullptr;
  const float* v_bias = nullptr;
  // Qwen3: RMSNorm weights ([head_dim]) applied to every q and k head before RoPE (nullptr: none).
  const float* q_norm = nullptr;
  const float* k_norm = nullptr;
  // Mixtral, Qwen3-MoE: the MLP is this mixture of experts instead of proj's gate/up/down.
  const MoeWeights* moe = nullptr;
};

// The rows of one forward and what each sees; the same for every layer of the stack.
// Row i belongs to sequence sequence[i] (an index into caches; nullptr: every row is in
// caches[0]), sits at positions[i], writes its key/value to the logical slot slots[i] of its
// sequence's cache (reserved by that cache's begin_batch), and attends to its sequence's committed
// slots [0, size) and then to visible[visible_begin[i] .. visible_begin[i + 1]) (logical slots of
// the pending area, increasing, its own slot last). Layer l of the stack uses layer l of every
// cache.
struct DecoderRows {
  int64_t n = 0;
  std::span<KvCache* const> caches;
  const int32_t* sequence = nullptr;
  const int32_t* positions = nullptr;
  const int32_t* slots = nullptr;
  const int32_t* visible = nullptr;
  const int64_t* visible_begin = nullptr;  // n + 1 offsets
  // What q/k/v read instead of the (normed) stream, [n, wq.cols] (nullptr: the stream): an
  // EAGLE-3 head's [input_layernorm(embedding) | hidden_norm(x)], whose residual stays x.
  const float* attn_input = nullptr;
};

// Copies of the residual stream x before chosen layers (each layer's input: Hugging Face's
// hidden_states[l], no norm), for chosen rows. out[j, k] (d floats at (j * layers.size() + k) * d)
// gets row rows[j]'s input of layer layers[k]. They are copies only, so a forward computes the
// same bits with or without them.
struct StackCapture {
  std::span<const int32_t> layers;
  std::span<const int32_t> rows;
  float* out = nullptr;
};

class DecoderStack {
 public:
  // The shape (widths, heads, norm epsilon, RoPE frequencies) of the layers it runs.
  explicit DecoderStack(const LlamaConfig& cfg);

  // Runs `layers` over the residual stream x ([rows.n, hidden], in place), copying the inputs
  // `capture` asks for on the way. Error when a row's sequence, slot or visible slots, or a
  // captured layer or row, are out of range (the callers are internal, but a wrong slot would
  // write another sequence's memory).
  void forward(std::span<const DecoderLayerWeights> layers, const DecoderRows& rows, float* x,
               ThreadPool& pool, const StackCapture& capture = {});

  // Mixture-of-experts models: distinct experts the forwards since reset_experts_touched() read,
  // summed over layers (model/moe_ffn.h); 0 for a dense model.
  int64_t experts_touched() const { return moe_ ? moe_->experts_touched() : 0; }
  void reset_experts_touched() {
    if (moe_) moe_->reset_touched();
  }
  // Floats of the dense MLP's scratch grown so far: only dense layers grow it (layer()), so a
  // mixture of experts keeps it empty whatever its unchecked intermediate_size says.
  size_t dense_mlp_scratch() const { return ws_.gate.size() + ws_.up.size(); }

 private:
  void check(const DecoderRows& rows, int64_t n_layers) const;
  void layer(const DecoderLayerWeights& w, int64_t l, const DecoderRows& rows, float* x,
             ThreadPool& pool);

  int64_t d_, head_dim_, intermediate_, n_heads_, n_kv_heads_;
  float eps_;
  std::vector<float> inv_freq_;
  std::optional<MoeFfn> moe_;  // a mixture-of-experts model's MLP (one, shared by its layers)
  // Scratch, grown on demand and reused across calls (no allocation per token once warm).
  struct Workspace {
    std::vector<float> xn, q, k, v, attn, proj, gate, up, cos, sin;
    std::vector<AttentionSequence> sequences;  // per cache: its block table and context
  } ws_;
};

// Grows v to at least n elements (never shrinks: workspaces keep their largest size).
template <class T>
void grow_to(std::vector<T>& v, size_t n) {
  if (v.size() < n) v.resize(n);
}

}  // namespace eagle2

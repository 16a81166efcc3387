// One LLaMA decoder layer for training, forward and backward, assembled from the train/ ops:
//
//   h   = input_norm ? rmsnorm(x, w_in) : x
//   q,k,v = h Wq^T, h Wk^T, h Wv^T;  rope(q), rope(k) at the given positions
//   mid = x + attention(q, k, v) Wo^T                          (GQA, causal within each sequence)
//   out = mid + down( silu(rmsnorm(mid, w_post) Wg^T) * (rmsnorm(mid, w_post) Wu^T) )
//
// Rows are tokens of B sequences of T tokens each, b-major (row = b * T + t), C = hidden size.
// input_norm = false is EAGLE's single head layer, whose attention reads x directly (its
// input_layernorm does not exist in the checkpoint).
//
// The forward computes the same bits as the inference forward (same kernels, same order) when it
// is given the same weights in float32, up to attention, whose training kernel sums in another
// order (agreement within float tolerance, tested against LlamaModel).
//
// Usage:
//   DecoderBlockWeights w(cfg, "model.layers.0.");         // owns Parameters with HF names
//   DecoderBlockActivations acts; acts.resize(cfg, B, T);  // one per block: saved for backward
//   DecoderBlockScratch scratch;                           // backward scratch, shared by blocks
//   decoder_block_forward(cfg, w.params(), x_out, x_in, positions, acts, pool);
//   ... loss backward gives dx = dL/dx_out ...
//   decoder_block_backward(cfg, w.params(), dx, acts, scratch, pool);  // dx becomes dL/dx_in
// Parameter gradients are ADDED to (train/ convention); zero them before a step.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/thread_pool.h"
#include "model/llama_config.h"
#include "train/parameter.h"
#include "train/train_rng.h"

namespace eagle2::train {

struct DecoderBlockConfig {
  int64_t hidden = 0;        // C
  int64_t intermediate = 0;  // I (MLP width)
  int64_t n_heads = 0;       // H
  int64_t n_kv_heads = 0;    // KV, divides H
  int64_t head_dim = 0;      // hd; q is [M, H*hd], k/v are [M, KV*hd]
  float rms_eps = 1e-6f;
  std::vector<float> inv_freq;  // RoPE inverse frequencies [hd/2] (LlamaConfig::rope_inv_freq())
  bool input_norm = true;       // false: EAGLE's head layer (no input_layernorm)

  int64_t q_dim() const { return n_heads * head_dim; }
  int64_t kv_dim() const { return n_kv_heads * head_dim; }
  void validate() const;  // Error on non-positive sizes, H % KV != 0, inv_freq size != hd/2

  // The block of a model with this config (validated).
  static DecoderBlockConfig from(const LlamaConfig& cfg, bool input_norm);
};

// Non-owning view of a block's parameters (the optimizer and checkpoints hold the same pointers).
// Shapes follow nn.Linear ([out, in]) and Hugging Face's LlamaDecoderLayer.
struct DecoderBlockParams {
  Parameter* input_norm = nullptr;  // [C]; must be null iff !cfg.input_norm
  Parameter* wq = nullptr;          // [H*hd, C]
  Parameter* wk = nullptr;          // [KV*hd, C]
  Parameter* wv = nullptr;          // [KV*hd, C]
  Parameter* wo = nullptr;          // [C, H*hd]
  Parameter* post_norm = nullptr;   // [C]
  Parameter* w_gate = nullptr;      // [I, C]
  Parameter* w_up = nullptr;        // [I, C]
  Parameter* w_down = nullptr;      // [C, I]
};

// Owned parameters named as in Hugging Face checkpoints under `prefix` (for example
// "model.layers.3." or EAGLE's "layers.0."): input_layernorm.weight,
// self_attn.{q,k,v,o}_proj.weight, post_attention_layernorm.weight, mlp.{gate,up,down}_proj.weight.
// Norm weights start at 1 and do not decay; matrices start at zero until init(). Not movable once
// the optimizer holds pointers: keep it in a unique_ptr or a container that never reallocates.
struct DecoderBlockWeights {
  Parameter input_norm, wq, wk, wv, wo, post_norm, w_gate, w_up, w_down;

  DecoderBlockWeights(const DecoderBlockConfig& cfg, const std::string& prefix);
  DecoderBlockWeights(const DecoderBlockWeights&) = delete;
  DecoderBlockWeights& operator=(const DecoderBlockWeights&) = delete;

  DecoderBlockParams params();
  // Appends the parameters in a fixed order (HF order; input_norm only when present).
  void collect(std::vector<Parameter*>& out);
  // Matrices ~ N(0, std^2), except wo and w_down ~ N(0, out_std^2) (GPT-2's residual scaling is
  // out_std = std / sqrt(2 * layers)); norm weights 1. Deterministic given the rng state.
  void init(TrainRng& rng, float std, float out_std);

 private:
  bool has_input_norm_;
};

// What the forward saves for the backward, for one block and B x T tokens (about
// M * (4C + 2*H*hd + 2*KV*hd + 3I) + B*H*T^2 floats, M = B*T).
struct DecoderBlockActivations {
  int64_t batch = 0, seq_len = 0;
  std::vector<float> x_in;       // [M, C] copy of the input (the attention residual, norm input)
  std::vector<float> h;          // [M, C] input_norm(x_in) (empty without input norm)
  std::vector<float> rstd_in;    // [M]
  std::vector<float> cos, sin;   // [M, hd/2] RoPE tables of the rows' positions
  std::vector<float> q;          // [M, H*hd] after RoPE
  std::vector<float> k, v;       // [M, KV*hd] (k after RoPE)
  std::vector<float> probs;      // [B, H, T, T]
  std::vector<float> attn;       // [M, H*hd] attention output (input of wo)
  std::vector<float> mid;        // [M, C] x_in + attn Wo^T
  std::vector<float> h2;         // [M, C] post_norm(mid)
  std::vector<float> rstd_post;  // [M]
  std::vector<float> gate, up;   // [M, I]
  std::vector<float> act;        // [M, I] silu(gate) * up (input of w_down)

  // Sizes every buffer for B sequences of T tokens (no-op when already that size).
  void resize(const DecoderBlockConfig& cfg, int64_t B, int64_t T);
  int64_t rows() const { return batch * seq_len; }
};

// Backward scratch (gradients of intermediate activations); one can serve every block in turn.
struct DecoderBlockScratch {
  std::vector<float> d_h, d_q, d_k, d_v, d_attn, d_h2, d_gate, d_up, d_act;
};

// x_out[M, C] from x_in[M, C] (may alias x_out) at positions[M] (RoPE positions of each row;
// attention is causal by row order within each sequence, whatever the positions). acts must be
// resized for (B, T) first; M = B * T.
void decoder_block_forward(const DecoderBlockConfig& cfg, const DecoderBlockParams& p, float* x_out,
                           const float* x_in, const int32_t* positions,
                           DecoderBlockActivations& acts, ThreadPool& pool);

// In place: dx[M, C] holds dL/dx_out on entry and dL/dx_in on return (the residual paths pass it
// through). Adds every parameter's gradient into its Parameter::grad. acts must be the ones this
// block's latest forward filled.
void decoder_block_backward(const DecoderBlockConfig& cfg, const DecoderBlockParams& p, float* dx,
                            const DecoderBlockActivations& acts, DecoderBlockScratch& scratch,
                            ThreadPool& pool);

// A normal sample N(0, 1) from two uniforms (Box-Muller), for weight initialisation.
float normal_sample(TrainRng& rng);

}  // namespace eagle2::train

// The EAGLE-3 head for training: its one decoder layer, forward and backward per unrolled step,
// and the head's output with its loss (issue 15; conventions of ../shared/golden/EAGLE3.md):
//
//   x_0 = features fc^T                fc [C, F], no bias (F = k target layers x target width)
//   a   = [rmsnorm(e, input_norm) | rmsnorm(x, hidden_norm)]   [N, 2C], the embedding FIRST
//   q, k, v = a Wq^T, a Wk^T, a Wv^T;  rope(q), rope(k) at the rows' positions
//   mid = x + ttt_attention(q, k, v) Wo^T   (train/ttt_attention.h: step s also sees its own
//                                           keys of steps 1..s at the same position)
//   h   = mid + down(silu(gate(post_norm(mid))) * up(post_norm(mid)))   output, pre-norm
//   logits = rmsnorm(h, norm) lm_head^T    over the draft vocabulary [N, Vd]
// x is the hidden stream: the fc output at step 0, the previous step's h at later steps (fc is
// skipped there, as at inference). e are the token embeddings (the target's table, frozen). The
// residual is x itself, never the normed x.
//
// Rows are tokens of B windows of T positions, b-major (row = b * T + t), N = B * T; or ragged
// (Eagle3StepActs::resize with lengths: window b's first lengths[b] rows, packed).
// Usage for S unrolled steps (train/eagle3_unrolled.h does this):
//   Eagle3Weights w(cfg);  std::vector<Eagle3StepActs> acts(S);  resize each for (B, T, s)
//   step s: eagle3_layer_forward(cfg, w, x_s, e_s, pos_s, {&acts[0] .. &acts[s]}, pool)
//           (pos_s: each row's position plus s, as the reference rotates step s)
//   backward in reverse step order (a step's key/value gradients are complete only once every
//   later step's backward has added its share): eagle3_layer_backward(..., steps 0..s, ...).
// Parameter gradients are ADDED (train/ convention); zero them before a step.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/thread_pool.h"
#include "train/parameter.h"
#include "train/train_rng.h"

namespace eagle2::train {

struct Eagle3Config {
  int64_t hidden = 0;         // C, the head's width (= the target's for the heads we train)
  int64_t intermediate = 0;   // I, the MLP width
  int64_t n_heads = 0;        // H
  int64_t n_kv_heads = 0;     // KV, divides H
  int64_t head_dim = 0;       // hd
  int64_t feature_width = 0;  // F, fc's input: the captured target layers, concatenated
  int64_t draft_vocab = 0;    // Vd, lm_head's rows
  float rms_eps = 1e-6f;
  std::vector<float> inv_freq;  // RoPE inverse frequencies [hd / 2] (LlamaConfig::rope_inv_freq())

  int64_t q_dim() const { return n_heads * head_dim; }
  int64_t kv_dim() const { return n_kv_heads * head_dim; }
  void validate() const;  // Error naming the bad size
};

// The head's trainable tensors, named as in published EAGLE-3 checkpoints (issue 15, item 1).
// d2t / t2d and the embedding are not parameters. Norm weights start at 1 and do not decay.
// Not movable (optimizers hold pointers): keep it in a unique_ptr or construct in place.
struct Eagle3Weights {
  Parameter fc;            // fc.weight [C, F]
  Parameter input_norm;    // midlayer.input_layernorm.weight [C], on the token embedding
  Parameter hidden_norm;   // midlayer.hidden_norm.weight [C], on the hidden stream x
  Parameter wq, wk, wv;    // midlayer.self_attn.{q,k,v}_proj.weight [H*hd | KV*hd, 2C]
  Parameter wo;            // midlayer.self_attn.o_proj.weight [C, H*hd]
  Parameter post_norm;     // midlayer.post_attention_layernorm.weight [C]
  Parameter w_gate, w_up;  // midlayer.mlp.{gate,up}_proj.weight [I, C]
  Parameter w_down;        // midlayer.mlp.down_proj.weight [C, I]
  Parameter norm;          // norm.weight [C]
  Parameter lm_head;       // lm_head.weight [Vd, C]

  explicit Eagle3Weights(const Eagle3Config& cfg);
  Eagle3Weights(const Eagle3Weights&) = delete;
  Eagle3Weights& operator=(const Eagle3Weights&) = delete;

  // Appends all 13 parameters in the order above.
  void collect(std::vector<Parameter*>& out);
  // Every matrix ~ U(-1/sqrt(fan_in), 1/sqrt(fan_in)) (PyTorch's nn.Linear default, as the
  // reference's freshly built head), norm weights 1. lm_head is random here as in the reference;
  // a trainer may overwrite it (e.g. with the target's lm_head rows of the kept ids).
  void init(TrainRng& rng);
};

// What one step's layer forward saves for its backward (about N * (6C + 2*H*hd + 4*KV*hd + 3I)
// + H * sum_b T_b (T_b + s) floats, T_b = T unless ragged), plus the gradients of its keys and
// values, which later steps add to.
struct Eagle3StepActs {
  int64_t batch = 0, seq_len = 0, step = 0;  // B, T, s
  std::vector<int64_t> lengths;              // [B] rows of each window (ragged), or empty: T each
  std::vector<float> x;                      // [N, C] input hidden stream (the residual)
  std::vector<float> e;                      // [N, C] token embeddings
  std::vector<float> a;               // [N, 2C] attention input [input_norm(e) | hidden_norm(x)]
  std::vector<float> rstd_e, rstd_x;  // [N]
  std::vector<float> cos, sin;        // [N, hd/2] RoPE tables of the rows' positions
  std::vector<float> q;               // [N, H*hd] after RoPE
  std::vector<float> k, v;            // [N, KV*hd] (k after RoPE)
  std::vector<float> probs;           // [B, H, T, T + s] (ragged: train/ttt_attention.h)
  std::vector<float> attn;            // [N, H*hd] attention output (input of wo)
  std::vector<float> mid;             // [N, C] x + attn Wo^T
  std::vector<float> h2, rstd_post;   // [N, C], [N] post_norm(mid)
  std::vector<float> gate, up, act;   // [N, I]
  std::vector<float> h;               // [N, C] the layer's output
  std::vector<float> dk, dv;          // [N, KV*hd] dL/dk, dL/dv: zeroed by the forward, added
                                      // to by the backward of this step and of later steps

  // lengths: empty, or B entries in [0, T] (window b runs its first lengths[b] rows, packed).
  void resize(const Eagle3Config& cfg, int64_t B, int64_t T, int64_t s,
              std::span<const int64_t> lengths = {});
  int64_t rows() const { return n_rows; }

 private:
  int64_t n_rows = 0;
};

// Backward scratch, shared by the steps in turn.
struct Eagle3Scratch {
  std::vector<float> d_act, d_gate, d_up, d_h2, d_attn, d_q, d_a, d_half;
  std::vector<float> u, g, wt;  // the frozen-embedding path (de == null)
};

// Step s = steps.size() - 1 of the layer: steps[0..s-1] are the earlier steps' saved acts (their
// keys and values are attended to), steps[s] is filled (its output in steps[s]->h). x, e [N, C];
// positions [N] are this step's RoPE positions (the unrolled loss passes t + s).
void eagle3_layer_forward(const Eagle3Config& cfg, const Eagle3Weights& w, const float* x,
                          const float* e, const int32_t* positions,
                          std::span<Eagle3StepActs* const> steps, ThreadPool& pool);

// Backward of step s = steps.size() - 1, in place: dh [N, C] holds dL/dh on entry and dL/dx on
// return. de [N, C] += dL/de when not null (tests only: training freezes the embedding); when
// null the embedding half's input gradient is not computed at all (input_norm's weight gradient
// then comes from the weight-gradient product, eagle3_layer.cpp: the same gradients up to
// rounding). Adds into the weights' gradients, into every earlier step's dk / dv, and uses
// steps[s]->dk / dv as they are (so the backward of every later step must have run).
void eagle3_layer_backward(const Eagle3Config& cfg, Eagle3Weights& w, float* dh, float* de,
                           std::span<Eagle3StepActs* const> steps, Eagle3Scratch& scratch,
                           ThreadPool& pool);

// The head's output and its loss for one step: logits = rmsnorm(h, norm) lm_head^T over the draft
// vocabulary, then the soft cross-entropy against teacher probabilities [N, Vd], mean over the
// rows with mask != 0 (train/cross_entropy.h).
struct Eagle3OutputActs {
  std::vector<float> hn, rstd;  // [N, C], [N] rmsnorm(h, norm)
  std::vector<float> probs;     // [N, Vd] softmax(logits)
};

// Returns the mean soft-CE over counted rows; *correct (if given) = counted rows whose student
// argmax equals the teacher argmax (the reference's per-step accuracy; ties go to the lower id).
double eagle3_output_forward(const Eagle3Config& cfg, const Eagle3Weights& w, const float* h,
                             const float* teacher, const uint8_t* mask, int64_t N,
                             Eagle3OutputActs& acts, int64_t* correct, ThreadPool& pool);

// dh [N, C] += dloss * dL/dh; adds norm's and lm_head's gradients. With `states` [N, C], L also
// holds state_weight * SmoothL1(rmsnorm(h, norm) - states) over the counted rows
// (train/eagle3_unrolled.h's optional state term).
void eagle3_output_backward(const Eagle3Config& cfg, Eagle3Weights& w, float* dh, const float* h,
                            const float* teacher, const uint8_t* mask, int64_t N,
                            const Eagle3OutputActs& acts, float dloss, ThreadPool& pool,
                            const float* states = nullptr, float state_weight = 0.0f);

}  // namespace eagle2::train

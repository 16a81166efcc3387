// A double-precision reference of the EAGLE-3 training head (train/ttt_attention.h,
// train/eagle3_layer.h, train/eagle3_unrolled.h), written from the reference trainer's description
// with plain loops: what the float code is compared with and what the finite differences of the
// gradient checks differentiate. Plus a small random case (weights, window) shared by the tests.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/tensor.h"
#include "train/attention.h"
#include "train/eagle3_layer.h"
#include "train/eagle3_unrolled.h"

namespace eagle2::test::grad_check {

using DVec = std::vector<double>;  // as in support/grad_check.h

// Step s = k.size() - 1 of the training-time-test attention: row t of step s attends to k[0] rows
// t' <= t and to k[u][t], u = 1..s, with one softmax. q [B*T, H*hd], k[u] / v[u] [B*T, KV*hd].
DVec ttt_attention_ref(const DVec& q, const std::vector<DVec>& k, const std::vector<DVec>& v,
                       const train::AttentionShape& s);

// The head's tensors in double, one member per Eagle3Weights parameter.
struct Eagle3RefParams {
  DVec fc, input_norm, hidden_norm, wq, wk, wv, wo, post_norm, w_gate, w_up, w_down, norm, lm_head;
  explicit Eagle3RefParams(const train::Eagle3Weights& w);
};

// (name, member) for every parameter, in Eagle3Weights::collect's order.
std::vector<std::pair<std::string, DVec Eagle3RefParams::*>> eagle3_ref_members();

struct Eagle3RefStep {
  DVec h;     // [N, C] the layer's output
  DVec k, v;  // [N, KV*hd] this step's keys (after RoPE) and values
};

// One step of the layer on x, e [N, C] at RoPE positions pos [N], attending to the earlier steps'
// keys/values (after RoPE). With no earlier step the attention is support/train_references.h's
// plain causal attention_ref, so step 0 is checked against an ordinary causal layer.
Eagle3RefStep eagle3_layer_ref(const train::Eagle3Config& c, const Eagle3RefParams& p,
                               const DVec& x, const DVec& e, const std::vector<int32_t>& pos,
                               const std::vector<DVec>& earlier_k,
                               const std::vector<DVec>& earlier_v, int64_t B, int64_t T);

struct Eagle3RefResult {
  std::vector<DVec> h;  // [S][N, C]
  double loss = 0;      // sum_s 0.8^s * (mean soft-CE over the counted rows of step s
                        //   + state_weight * their mean SmoothL1 when the window has states)
};

// The whole unrolled forward (embed [V, C] as doubles); the window's pointers as in Eagle3Window.
Eagle3RefResult eagle3_unrolled_ref(const train::Eagle3Config& c, const Eagle3RefParams& p,
                                    const DVec& embed, const DVec& features,
                                    const train::Eagle3Window& win);

// A small random case: config (C 8, I 12, H 2, KV 1, hd 4, F 24, Vd 12, V 24), weights with
// non-unit norms, an embedding, and B windows of T positions unrolled S steps. Window 0 starts at
// position 0 and has every offset counted; window 1 starts at position 7 and its sequence ends
// after offset T (the offsets beyond are uncounted padding), plus one uncounted offset inside.
struct Eagle3Case {
  int64_t B = 2, T = 5, S = 3, V = 24;
  train::Eagle3Config cfg;
  std::unique_ptr<train::Eagle3Weights> w;
  std::vector<float> embed;     // [V, C]
  std::vector<float> features;  // [B*T, F]
  std::vector<int32_t> positions, tokens;
  std::vector<float> teacher;    // [B, T+S, Vd]
  std::vector<uint8_t> counted;  // [B, T+S]
  std::vector<float> states;     // [B, T+S, C] targets of the optional state term

  explicit Eagle3Case(int64_t steps = 3, uint32_t seed = 5);
  // state_weight > 0: with the optional state term (eagle3_unrolled.h).
  train::Eagle3Window window(float state_weight = 0.0f);
  Matrix embed_matrix() const;
  int64_t rows() const { return B * T; }
};

}  // namespace eagle2::test::grad_check

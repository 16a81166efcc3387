#include "train/eagle3_layer.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/error.h"
#include "kernels/ops.h"
#include "train/buffers.h"
#include "train/cross_entropy.h"
#include "train/linear.h"
#include "train/rmsnorm.h"
#include "train/rope.h"
#include "train/smooth_l1.h"
#include "train/swiglu.h"
#include "train/ttt_attention.h"

namespace eagle2::train {

namespace {

void check_shape(const Parameter& p, std::vector<int64_t> shape) {
  if (p.shape != shape)
    fail("eagle3 head: parameter '", p.name, "' has shape ", shape_string(p.shape), ", expected ",
         shape_string(shape));
}

// The weights must be the config's (a Weights object built for another config is a bug).
void check_weights(const Eagle3Config& c, const Eagle3Weights& w) {
  const int64_t C = c.hidden, I = c.intermediate;
  check_shape(w.fc, {C, c.feature_width});
  for (const Parameter* p : {&w.input_norm, &w.hidden_norm, &w.post_norm, &w.norm})
    check_shape(*p, {C});
  check_shape(w.wq, {c.q_dim(), 2 * C});
  check_shape(w.wk, {c.kv_dim(), 2 * C});
  check_shape(w.wv, {c.kv_dim(), 2 * C});
  check_shape(w.wo, {C, c.q_dim()});
  check_shape(w.w_gate, {I, C});
  check_shape(w.w_up, {I, C});
  check_shape(w.w_down, {C, I});
  check_shape(w.lm_head, {c.draft_vocab, C});
}

// The step's acts must be sized for it, and the earlier steps for the same window.
Eagle3StepActs& check_steps(const Eagle3Config& c, std::span<Eagle3StepActs* const> steps) {
  if (steps.empty()) fail("eagle3 layer: no step given");
  Eagle3StepActs& a = *steps.back();
  const int64_t s = static_cast<int64_t>(steps.size()) - 1;
  if (a.step != s || static_cast<int64_t>(a.h.size()) != a.rows() * c.hidden ||
      static_cast<int64_t>(a.gate.size()) != a.rows() * c.intermediate)
    fail("eagle3 layer: the acts of step ", s, " are not sized for it (call resize)");
  for (int64_t u = 0; u < s; ++u)
    if (steps[u]->step != u || steps[u]->batch != a.batch || steps[u]->seq_len != a.seq_len ||
        steps[u]->lengths != a.lengths)
      fail("eagle3 layer: earlier step ", u, " does not belong to this window");
  return a;
}

AttentionShape attention_shape(const Eagle3Config& c, const Eagle3StepActs& a) {
  return AttentionShape{a.batch, a.seq_len, c.n_heads, c.n_kv_heads, c.head_dim};
}

// dst[N, C] <- columns [col, col + C) of src[N, 2C], or the reverse.
void take_half(float* dst, const float* src, int64_t N, int64_t C, int64_t col) {
  for (int64_t n = 0; n < N; ++n)
    std::memcpy(dst + n * C, src + n * 2 * C + col, C * sizeof(float));
}
void put_half(float* dst, const float* src, int64_t N, int64_t C, int64_t col) {
  for (int64_t n = 0; n < N; ++n)
    std::memcpy(dst + n * 2 * C + col, src + n * C, C * sizeof(float));
}

// The backward of one projection y = a W^T of the attention input a = [input_norm(e) | x half]
// when the embedding is frozen. The embedding half then needs no input gradient, and that product
// (half the input-gradient product: a quarter of the projections' backward multiply-adds) is
// skipped; the one thing it fed,
// input_norm's weight gradient (sum over rows of d_a * E, E the un-scaled normed embedding, with
// d_a = dY W), comes from the weight-gradient product instead, taken over u = [E | x half]:
//   G = dY^T u,  dW[:, :C] += G[:, :C] * gamma (per column),  dW[:, C:] += G[:, C:],
//   d gamma[c] += sum_o W[o, c] G[o, c],  dx_half [N, C] += dY W[:, C:].
void projection_backward_frozen_embedding(float* dx_half, float* dgamma, Parameter& W,
                                          const float* dy, const float* u, const float* gamma,
                                          int64_t N, int64_t C, Eagle3Scratch& s,
                                          ThreadPool& pool) {
  const int64_t out = W.shape[0], K = 2 * C;
  float* const dW = W.grad.data();
  const float* const w = W.value.data();
  zeroed(s.g, out * K);
  linear_backward_weight(s.g.data(), dy, u, N, out, K, pool);
  for (int64_t o = 0; o < out; ++o) {  // rows in order: a fixed summation order per column
    const float* g = s.g.data() + o * K;
    for (int64_t c = 0; c < C; ++c) {
      dW[o * K + c] += g[c] * gamma[c];
      dgamma[c] += w[o * K + c] * g[c];
    }
    for (int64_t c = C; c < K; ++c) dW[o * K + c] += g[c];
  }
  sized(s.wt, K * out);  // W^T [2C, out]; its rows C.. are the x half's
  transpose(w, out, K, sizeof(float), s.wt.data(), pool);
  linear_backward_input(dx_half, dy, N, Matrix{DType::F32, C, out, s.wt.data() + C * out}, pool);
}

void fill_uniform(Parameter& p, TrainRng& rng) {
  const float bound = 1.0f / std::sqrt(static_cast<float>(p.shape[1]));
  for (float& x : p.value) x = rng.uniform(-bound, bound);
}

}  // namespace

void Eagle3Config::validate() const {
  if (hidden <= 0 || intermediate <= 0 || n_heads <= 0 || n_kv_heads <= 0 || head_dim <= 0 ||
      feature_width <= 0 || draft_vocab <= 0)
    fail("eagle3 head: sizes must be positive (hidden ", hidden, ", intermediate ", intermediate,
         ", heads ", n_heads, ", kv heads ", n_kv_heads, ", head_dim ", head_dim,
         ", feature width ", feature_width, ", draft vocab ", draft_vocab, ")");
  if (n_heads % n_kv_heads != 0)
    fail("eagle3 head: ", n_heads, " heads are not a multiple of ", n_kv_heads, " kv heads");
  if (head_dim % 2 != 0) fail("eagle3 head: head_dim ", head_dim, " is odd (RoPE pairs)");
  if (static_cast<int64_t>(inv_freq.size()) != head_dim / 2)
    fail("eagle3 head: ", inv_freq.size(), " RoPE frequencies, expected ", head_dim / 2);
}

Eagle3Weights::Eagle3Weights(const Eagle3Config& c)
    : fc("fc.weight", {c.hidden, c.feature_width}),
      input_norm("midlayer.input_layernorm.weight", {c.hidden}, false),
      hidden_norm("midlayer.hidden_norm.weight", {c.hidden}, false),
      wq("midlayer.self_attn.q_proj.weight", {c.q_dim(), 2 * c.hidden}),
      wk("midlayer.self_attn.k_proj.weight", {c.kv_dim(), 2 * c.hidden}),
      wv("midlayer.self_attn.v_proj.weight", {c.kv_dim(), 2 * c.hidden}),
      wo("midlayer.self_attn.o_proj.weight", {c.hidden, c.q_dim()}),
      post_norm("midlayer.post_attention_layernorm.weight", {c.hidden}, false),
      w_gate("midlayer.mlp.gate_proj.weight", {c.intermediate, c.hidden}),
      w_up("midlayer.mlp.up_proj.weight", {c.intermediate, c.hidden}),
      w_down("midlayer.mlp.down_proj.weight", {c.hidden, c.intermediate}),
      norm("norm.weight", {c.hidden}, false),
      lm_head("lm_head.weight", {c.draft_vocab, c.hidden}) {
  c.validate();
  for (Parameter* p : {&input_norm, &hidden_norm, &post_norm, &norm})
    std::fill(p->value.begin(), p->value.end(), 1.0f);
}

void Eagle3Weights::collect(std::vector<Parameter*>& out) {
  for (Parameter* p : {&fc, &input_norm, &hidden_norm, &wq, &wk, &wv, &wo, &post_norm, &w_gate,
                       &w_up, &w_down, &norm, &lm_head})
    out.push_back(p);
}

void Eagle3Weights::init(TrainRng& rng) {
  for (Parameter* p : {&fc, &wq, &wk, &wv, &wo, &w_gate, &w_up, &w_down, &lm_head})
    fill_uniform(*p, rng);
  for (Parameter* p : {&input_norm, &hidden_norm, &post_norm, &norm})
    std::fill(p->value.begin(), p->value.end(), 1.0f);
}

void Eagle3StepActs::resize(const Eagle3Config& c, int64_t B, int64_t T, int64_t s,
                            std::span<const int64_t> window_lengths) {
  if (B < 0 || T < 0 || s < 0) fail("eagle3 layer: bad window B=", B, " T=", T, " step ", s);
  if (!window_lengths.empty() && static_cast<int64_t>(window_lengths.size()) != B)
    fail("eagle3 layer: ", window_lengths.size(), " window lengths for ", B, " windows");
  batch = B;
  seq_len = T;
  step = s;
  lengths.assign(window_lengths.begin(), window_lengths.end());
  int64_t N = 0, prob_rows = 0;  // rows, and sum of T_b (T_b + s) for the probabilities
  for (int64_t b = 0; b < B; ++b) {
    const int64_t Tb = lengths.empty() ? T : lengths[static_cast<size_t>(b)];
    if (Tb < 0 || Tb > T) fail("eagle3 layer: window ", b, " has ", Tb, " rows of ", T);
    N += Tb;
    prob_rows += Tb * (Tb + s);
  }
  n_rows = N;
  const int64_t C = c.hidden, I = c.intermediate;
  for (auto* buf : {&x, &e, &mid, &h2, &h}) sized(*buf, N * C);
  sized(a, N * 2 * C);
  for (auto* buf : {&rstd_e, &rstd_x, &rstd_post}) sized(*buf, N);
  sized(cos, N * c.head_dim / 2);
  sized(sin, N * c.head_dim / 2);
  sized(q, N * c.q_dim());
  sized(attn, N * c.q_dim());
  for (auto* buf : {&k, &v, &dk, &dv}) sized(*buf, N * c.kv_dim());
  sized(probs, c.n_heads * prob_rows);
  for (auto* buf : {&gate, &up, &act}) sized(*buf, N * I);
}

void eagle3_layer_forward(const Eagle3Config& c, const Eagle3Weights& w, const float* x,
                          const float* e, const int32_t* positions,
                          std::span<Eagle3StepActs* const> steps, ThreadPool& pool) {
  check_weights(c, w);
  Eagle3StepActs& a = check_steps(c, steps);
  const int64_t N = a.rows(), C = c.hidden, I = c.intermediate;
  std::memcpy(a.x.data(), x, static_cast<size_t>(N * C) * sizeof(float));
  std::memcpy(a.e.data(), e, static_cast<size_t>(N * C) * sizeof(float));

  // a = [input_norm(e) | hidden_norm(x)]: the embedding half first, as the reference concatenates.
  std::vector<float> normed(static_cast<size_t>(N * C));
  rmsnorm_forward(normed.data(), a.rstd_e.data(), a.e.data(), w.input_norm.value.data(), c.rms_eps,
                  N, C, pool);
  put_half(a.a.data(), normed.data(), N, C, 0);
  rmsnorm_forward(normed.data(), a.rstd_x.data(), a.x.data(), w.hidden_norm.value.data(), c.rms_eps,
                  N, C, pool);
  put_half(a.a.data(), normed.data(), N, C, C);

  rope_tables(a.cos.data(), a.sin.data(), positions, N, c.inv_freq.data(), c.head_dim / 2);
  linear_forward(a.q.data(), a.a.data(), N, w.wq.matrix(), nullptr, pool);
  linear_forward(a.k.data(), a.a.data(), N, w.wk.matrix(), nullptr, pool);
  linear_forward(a.v.data(), a.a.data(), N, w.wv.matrix(), nullptr, pool);
  rope_forward(a.q.data(), a.cos.data(), a.sin.data(), N, c.n_heads, c.head_dim, pool);
  rope_forward(a.k.data(), a.cos.data(), a.sin.data(), N, c.n_kv_heads, c.head_dim, pool);

  std::vector<const float*> ks, vs;
  for (const Eagle3StepActs* u : steps) {
    ks.push_back(u->k.data());
    vs.push_back(u->v.data());
  }
  ttt_attention_forward(a.attn.data(), a.probs.data(), a.q.data(), ks, vs, attention_shape(c, a),
                        pool, a.lengths);

  // Residual sums in the inference forward's order (x + projection).
  linear_forward(a.mid.data(), a.attn.data(), N, w.wo.matrix(), nullptr, pool);
  for (int64_t j = 0; j < N * C; ++j) a.mid[j] = a.x[j] + a.mid[j];
  rmsnorm_forward(a.h2.data(), a.rstd_post.data(), a.mid.data(), w.post_norm.value.data(),
                  c.rms_eps, N, C, pool);
  linear_forward(a.gate.data(), a.h2.data(), N, w.w_gate.matrix(), nullptr, pool);
  linear_forward(a.up.data(), a.h2.data(), N, w.w_up.matrix(), nullptr, pool);
  swiglu_forward(a.act.data(), a.gate.data(), a.up.data(), N * I, pool);
  linear_forward(a.h.data(), a.act.data(), N, w.w_down.matrix(), nullptr, pool);
  for (int64_t j = 0; j < N * C; ++j) a.h[j] = a.mid[j] + a.h[j];

  std::fill(a.dk.begin(), a.dk.end(), 0.0f);
  std::fill(a.dv.begin(), a.dv.end(), 0.0f);
}

void eagle3_layer_backward(const Eagle3Config& c, Eagle3Weights& w, float* dh, float* de,
                           std::span<Eagle3StepActs* const> steps, Eagle3Scratch& s,
                           ThreadPool& pool) {
  check_weights(c, w);
  const Eagle3StepActs& a = check_steps(c, steps);
  const int64_t N = a.rows(), C = c.hidden, I = c.intermediate;

  // MLP branch; dh (= dL/dh) is also dL/dmid through the residual, to which the branch adds.
  zeroed(s.d_act, N * I);
  linear_backward(s.d_act.data(), w.w_down.grad.data(), nullptr, dh, a.act.data(), N,
                  w.w_down.matrix(), pool);
  zeroed(s.d_gate, N * I);
  zeroed(s.d_up, N * I);
  swiglu_backward(s.d_gate.data(), s.d_up.data(), s.d_act.data(), a.gate.data(), a.up.data(), N * I,
                  pool);
  zeroed(s.d_h2, N * C);
  linear_backward(s.d_h2.data(), w.w_gate.grad.data(), nullptr, s.d_gate.data(), a.h2.data(), N,
                  w.w_gate.matrix(), pool);
  linear_backward(s.d_h2.data(), w.w_up.grad.data(), nullptr, s.d_up.data(), a.h2.data(), N,
                  w.w_up.matrix(), pool);
  rmsnorm_backward(dh, w.post_norm.grad.data(), s.d_h2.data(), a.mid.data(),
                   w.post_norm.value.data(), a.rstd_post.data(), N, C, pool);

  // Attention branch; dh is now dL/dmid, which passes on to x through the residual. Every step's
  // keys/values get their share; this step's own (a.dk, a.dv) are then complete, since the later
  // steps' backward ran first.
  zeroed(s.d_attn, N * c.q_dim());
  linear_backward(s.d_attn.data(), w.wo.grad.data(), nullptr, dh, a.attn.data(), N, w.wo.matrix(),
                  pool);
  std::vector<const float*> ks, vs;
  std::vector<float*> dks, dvs;
  for (Eagle3StepActs* u : steps) {
    ks.push_back(u->k.data());
    vs.push_back(u->v.data());
    dks.push_back(u->dk.data());
    dvs.push_back(u->dv.data());
  }
  zeroed(s.d_q, N * c.q_dim());
  ttt_attention_backward(s.d_q.data(), dks, dvs, s.d_attn.data(), a.q.data(), ks, vs,
                         a.probs.data(), attention_shape(c, a), pool, a.lengths);
  rope_backward(s.d_q.data(), a.cos.data(), a.sin.data(), N, c.n_heads, c.head_dim, pool);
  // A copy: the saved dk stays dL/d(rotated k).
  std::vector<float> d_k(a.dk);
  rope_backward(d_k.data(), a.cos.data(), a.sin.data(), N, c.n_kv_heads, c.head_dim, pool);

  if (!de) {
    // The embedding is frozen (training): no gradient for the attention input's embedding half.
    sized(s.u, N * 2 * C);  // [E | x half]: E = e * rstd_e, input_norm's output before gamma
    for (int64_t n = 0; n < N; ++n) {
      for (int64_t c = 0; c < C; ++c) s.u[n * 2 * C + c] = a.e[n * C + c] * a.rstd_e[n];
      std::memcpy(&s.u[n * 2 * C + C], &a.a[n * 2 * C + C], C * sizeof(float));
    }
    zeroed(s.d_half, N * C);
    const float* gamma = w.input_norm.value.data();
    float* dgamma = w.input_norm.grad.data();
    for (auto [W, dy] : {std::pair<Parameter*, const float*>{&w.wq, s.d_q.data()},
                         {&w.wk, d_k.data()},
                         {&w.wv, a.dv.data()}})
      projection_backward_frozen_embedding(s.d_half.data(), dgamma, *W, dy, s.u.data(), gamma, N, C,
                                           s, pool);
    rmsnorm_backward(dh, w.hidden_norm.grad.data(), s.d_half.data(), a.x.data(),
                     w.hidden_norm.value.data(), a.rstd_x.data(), N, C, pool);
    return;
  }
  zeroed(s.d_a, N * 2 * C);
  linear_backward(s.d_a.data(), w.wq.grad.data(), nullptr, s.d_q.data(), a.a.data(), N,
                  w.wq.matrix(), pool);
  linear_backward(s.d_a.data(), w.wk.grad.data(), nullptr, d_k.data(), a.a.data(), N, w.wk.matrix(),
                  pool);
  linear_backward(s.d_a.data(), w.wv.grad.data(), nullptr, a.dv.data(), a.a.data(), N,
                  w.wv.matrix(), pool);

  // The two halves of the attention input: x's norm adds into dh (now dL/dx), e's into de.
  sized(s.d_half, N * C);
  take_half(s.d_half.data(), s.d_a.data(), N, C, C);
  rmsnorm_backward(dh, w.hidden_norm.grad.data(), s.d_half.data(), a.x.data(),
                   w.hidden_norm.value.data(), a.rstd_x.data(), N, C, pool);
  take_half(s.d_half.data(), s.d_a.data(), N, C, 0);
  rmsnorm_backward(de, w.input_norm.grad.data(), s.d_half.data(), a.e.data(),
                   w.input_norm.value.data(), a.rstd_e.data(), N, C, pool);
}

double eagle3_output_forward(const Eagle3Config& c, const Eagle3Weights& w, const float* h,
                             const float* teacher, const uint8_t* mask, int64_t N,
                             Eagle3OutputActs& o, int64_t* correct, ThreadPool& pool) {
  check_weights(c, w);
  const int64_t C = c.hidden, V = c.draft_vocab;
  sized(o.hn, N * C);
  sized(o.rstd, N);
  sized(o.probs, N * V);
  rmsnorm_forward(o.hn.data(), o.rstd.data(), h, w.norm.value.data(), c.rms_eps, N, C, pool);
  linear_forward(o.probs.data(), o.hn.data(), N, w.lm_head.matrix(), nullptr, pool);
  if (correct) {
    // On the logits, before the softmax rounds nearby values together.
    *correct = 0;
    for (int64_t m = 0; m < N; ++m) {
      if (mask && !mask[m]) continue;
      const float* l = o.probs.data() + m * V;
      const float* t = teacher + m * V;
      *correct += std::max_element(l, l + V) - l == std::max_element(t, t + V) - t;
    }
  }
  return soft_cross_entropy_forward(o.probs.data(), o.probs.data(), teacher, mask, N, V, pool);
}

void eagle3_output_backward(const Eagle3Config& c, Eagle3Weights& w, float* dh, const float* h,
                            const float* teacher, const uint8_t* mask, int64_t N,
                            const Eagle3OutputActs& o, float dloss, ThreadPool& pool,
                            const float* states, float state_weight) {
  check_weights(c, w);
  const int64_t C = c.hidden, V = c.draft_vocab;
  std::vector<float> dlogits(static_cast<size_t>(N * V), 0.0f),
      dhn(static_cast<size_t>(N * C), 0.0f);
  soft_cross_entropy_backward(dlogits.data(), o.probs.data(), teacher, mask, N, V, dloss, pool);
  linear_backward(dhn.data(), w.lm_head.grad.data(), nullptr, dlogits.data(), o.hn.data(), N,
                  w.lm_head.matrix(), pool);
  if (states && state_weight > 0)
    smooth_l1_backward(dhn.data(), o.hn.data(), states, mask, N, C, dloss * state_weight, pool);
  rmsnorm_backward(dh, w.norm.grad.data(), dhn.data(), h, w.norm.value.data(), o.rstd.data(), N, C,
                   pool);
}

}  // namespace eagle2::train

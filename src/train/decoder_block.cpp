#include "train/decoder_block.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numbers>

#include "core/error.h"
#include "train/attention.h"
#include "train/buffers.h"
#include "train/linear.h"
#include "train/rmsnorm.h"
#include "train/rope.h"
#include "train/swiglu.h"

namespace eagle2::train {

namespace {

void fill_normal(Parameter& p, TrainRng& rng, float std) {
  for (float& x : p.value) x = std * normal_sample(rng);
}

void check_param(const Parameter* p, const char* what, std::vector<int64_t> shape) {
  if (p == nullptr) fail("decoder block: parameter ", what, " is missing");
  if (p->shape != shape)
    fail("decoder block: parameter '", p->name, "' has shape ", shape_string(p->shape),
         ", expected ", shape_string(shape));
}

void check_params(const DecoderBlockConfig& c, const DecoderBlockParams& p) {
  const int64_t C = c.hidden, I = c.intermediate;
  if (c.input_norm)
    check_param(p.input_norm, "input_norm", {C});
  else if (p.input_norm != nullptr)
    fail("decoder block: input_norm given but cfg.input_norm is false");
  check_param(p.wq, "wq", {c.q_dim(), C});
  check_param(p.wk, "wk", {c.kv_dim(), C});
  check_param(p.wv, "wv", {c.kv_dim(), C});
  check_param(p.wo, "wo", {C, c.q_dim()});
  check_param(p.post_norm, "post_norm", {C});
  check_param(p.w_gate, "w_gate", {I, C});
  check_param(p.w_up, "w_up", {I, C});
  check_param(p.w_down, "w_down", {C, I});
}

AttentionShape attention_shape(const DecoderBlockConfig& c, const DecoderBlockActivations& a) {
  return AttentionShape{a.batch, a.seq_len, c.n_heads, c.n_kv_heads, c.head_dim};
}

}  // namespace

DecoderBlockConfig DecoderBlockConfig::from(const LlamaConfig& cfg, bool input_norm) {
  DecoderBlockConfig b;
  b.hidden = cfg.hidden_size;
  b.intermediate = cfg.intermediate_size;
  b.n_heads = cfg.num_heads;
  b.n_kv_heads = cfg.num_kv_heads;
  b.head_dim = cfg.head_dim;
  b.rms_eps = cfg.rms_norm_eps;
  b.inv_freq = cfg.rope_inv_freq();
  b.input_norm = input_norm;
  b.validate();
  return b;
}

void DecoderBlockConfig::validate() const {
  if (hidden <= 0 || intermediate <= 0 || n_heads <= 0 || n_kv_heads <= 0 || head_dim <= 0)
    fail("decoder block: sizes must be positive (hidden ", hidden, ", intermediate ", intermediate,
         ", heads ", n_heads, ", kv heads ", n_kv_heads, ", head_dim ", head_dim, ")");
  if (n_heads % n_kv_heads != 0)
    fail("decoder block: ", n_heads, " heads are not a multiple of ", n_kv_heads, " kv heads");
  if (head_dim % 2 != 0) fail("decoder block: head_dim ", head_dim, " is odd (RoPE pairs)");
  if (static_cast<int64_t>(inv_freq.size()) != head_dim / 2)
    fail("decoder block: ", inv_freq.size(), " RoPE frequencies, expected ", head_dim / 2);
}

DecoderBlockWeights::DecoderBlockWeights(const DecoderBlockConfig& c, const std::string& prefix)
    : input_norm(prefix + "input_layernorm.weight", {c.input_norm ? c.hidden : 0}, false),
      wq(prefix + "self_attn.q_proj.weight", {c.q_dim(), c.hidden}),
      wk(prefix + "self_attn.k_proj.weight", {c.kv_dim(), c.hidden}),
      wv(prefix + "self_attn.v_proj.weight", {c.kv_dim(), c.hidden}),
      wo(prefix + "self_attn.o_proj.weight", {c.hidden, c.q_dim()}),
      post_norm(prefix + "post_attention_layernorm.weight", {c.hidden}, false),
      w_gate(prefix + "mlp.gate_proj.weight", {c.intermediate, c.hidden}),
      w_up(prefix + "mlp.up_proj.weight", {c.intermediate, c.hidden}),
      w_down(prefix + "mlp.down_proj.weight", {c.hidden, c.intermediate}),
      has_input_norm_(c.input_norm) {
  std::fill(input_norm.value.begin(), input_norm.value.end(), 1.0f);
  std::fill(post_norm.value.begin(), post_norm.value.end(), 1.0f);
}

DecoderBlockParams DecoderBlockWeights::params() {
  return DecoderBlockParams{has_input_norm_ ? &input_norm : nullptr,
                            &wq,
                            &wk,
                            &wv,
                            &wo,
                            &post_norm,
                            &w_gate,
                            &w_up,
                            &w_down};
}

void DecoderBlockWeights::collect(std::vector<Parameter*>& out) {
  if (has_input_norm_) out.push_back(&input_norm);
  for (Parameter* p : {&wq, &wk, &wv, &wo, &post_norm, &w_gate, &w_up, &w_down}) out.push_back(p);
}

void DecoderBlockWeights::init(TrainRng& rng, float std, float out_std) {
  std::fill(input_norm.value.begin(), input_norm.value.end(), 1.0f);
  std::fill(post_norm.value.begin(), post_norm.value.end(), 1.0f);
  fill_normal(wq, rng, std);
  fill_normal(wk, rng, std);
  fill_normal(wv, rng, std);
  fill_normal(wo, rng, out_std);
  fill_normal(w_gate, rng, std);
  fill_normal(w_up, rng, std);
  fill_normal(w_down, rng, out_std);
}

void DecoderBlockActivations::resize(const DecoderBlockConfig& c, int64_t B, int64_t T) {
  batch = B;
  seq_len = T;
  const int64_t M = B * T, C = c.hidden, I = c.intermediate;
  sized(x_in, M * C);
  sized(h, c.input_norm ? M * C : 0);
  sized(rstd_in, c.input_norm ? M : 0);
  sized(cos, M * c.head_dim / 2);
  sized(sin, M * c.head_dim / 2);
  sized(q, M * c.q_dim());
  sized(k, M * c.kv_dim());
  sized(v, M * c.kv_dim());
  sized(probs, B * c.n_heads * T * T);
  sized(attn, M * c.q_dim());
  sized(mid, M * C);
  sized(h2, M * C);
  sized(rstd_post, M);
  sized(gate, M * I);
  sized(up, M * I);
  sized(act, M * I);
}

void decoder_block_forward(const DecoderBlockConfig& c, const DecoderBlockParams& p, float* x_out,
                           const float* x_in, const int32_t* positions, DecoderBlockActivations& a,
                           ThreadPool& pool) {
  check_params(c, p);
  const int64_t M = a.rows(), C = c.hidden, I = c.intermediate;
  if (static_cast<int64_t>(a.mid.size()) != M * C || static_cast<int64_t>(a.gate.size()) != M * I)
    fail("decoder block: activations are not sized for this config (call resize)");

  // The copy comes first so that x_in may alias x_out.
  std::memcpy(a.x_in.data(), x_in, static_cast<size_t>(M * C) * sizeof(float));
  rope_tables(a.cos.data(), a.sin.data(), positions, M, c.inv_freq.data(), c.head_dim / 2);

  const float* h = a.x_in.data();
  if (c.input_norm) {
    rmsnorm_forward(a.h.data(), a.rstd_in.data(), a.x_in.data(), p.input_norm->value.data(),
                    c.rms_eps, M, C, pool);
    h = a.h.data();
  }
  linear_forward(a.q.data(), h, M, p.wq->matrix(), nullptr, pool);
  linear_forward(a.k.data(), h, M, p.wk->matrix(), nullptr, pool);
  linear_forward(a.v.data(), h, M, p.wv->matrix(), nullptr, pool);
  rope_forward(a.q.data(), a.cos.data(), a.sin.data(), M, c.n_heads, c.head_dim, pool);
  rope_forward(a.k.data(), a.cos.data(), a.sin.data(), M, c.n_kv_heads, c.head_dim, pool);
  attention_forward(a.attn.data(), a.probs.data(), a.q.data(), a.k.data(), a.v.data(),
                    attention_shape(c, a), pool);

  // Residual sums in the inference forward's order (x + projection) for the same bits.
  linear_forward(a.mid.data(), a.attn.data(), M, p.wo->matrix(), nullptr, pool);
  for (int64_t j = 0; j < M * C; ++j) a.mid[j] = a.x_in[j] + a.mid[j];

  rmsnorm_forward(a.h2.data(), a.rstd_post.data(), a.mid.data(), p.post_norm->value.data(),
                  c.rms_eps, M, C, pool);
  linear_forward(a.gate.data(), a.h2.data(), M, p.w_gate->matrix(), nullptr, pool);
  linear_forward(a.up.data(), a.h2.data(), M, p.w_up->matrix(), nullptr, pool);
  swiglu_forward(a.act.data(), a.gate.data(), a.up.data(), M * I, pool);
  linear_forward(x_out, a.act.data(), M, p.w_down->matrix(), nullptr, pool);
  for (int64_t j = 0; j < M * C; ++j) x_out[j] = a.mid[j] + x_out[j];
}

void decoder_block_backward(const DecoderBlockConfig& c, const DecoderBlockParams& p, float* dx,
                            const DecoderBlockActivations& a, DecoderBlockScratch& s,
                            ThreadPool& pool) {
  check_params(c, p);
  const int64_t M = a.rows(), C = c.hidden, I = c.intermediate;

  // MLP branch; dx (= dL/d out) is also dL/d mid through the residual, to which the branch adds.
  zeroed(s.d_act, M * I);
  linear_backward(s.d_act.data(), p.w_down->grad.data(), nullptr, dx, a.act.data(), M,
                  p.w_down->matrix(), pool);
  zeroed(s.d_gate, M * I);
  zeroed(s.d_up, M * I);
  swiglu_backward(s.d_gate.data(), s.d_up.data(), s.d_act.data(), a.gate.data(), a.up.data(), M * I,
                  pool);
  zeroed(s.d_h2, M * C);
  linear_backward(s.d_h2.data(), p.w_gate->grad.data(), nullptr, s.d_gate.data(), a.h2.data(), M,
                  p.w_gate->matrix(), pool);
  linear_backward(s.d_h2.data(), p.w_up->grad.data(), nullptr, s.d_up.data(), a.h2.data(), M,
                  p.w_up->matrix(), pool);
  rmsnorm_backward(dx, p.post_norm->grad.data(), s.d_h2.data(), a.mid.data(),
                   p.post_norm->value.data(), a.rstd_post.data(), M, C, pool);

  // Attention branch; dx is now dL/d mid, which passes on to x_in through the residual.
  zeroed(s.d_attn, M * c.q_dim());
  linear_backward(s.d_attn.data(), p.wo->grad.data(), nullptr, dx, a.attn.data(), M, p.wo->matrix(),
                  pool);
  zeroed(s.d_q, M * c.q_dim());
  zeroed(s.d_k, M * c.kv_dim());
  zeroed(s.d_v, M * c.kv_dim());
  attention_backward(s.d_q.data(), s.d_k.data(), s.d_v.data(), s.d_attn.data(), a.q.data(),
                     a.k.data(), a.v.data(), a.probs.data(), attention_shape(c, a), pool);
  rope_backward(s.d_q.data(), a.cos.data(), a.sin.data(), M, c.n_heads, c.head_dim, pool);
  rope_backward(s.d_k.data(), a.cos.data(), a.sin.data(), M, c.n_kv_heads, c.head_dim, pool);

  // Without an input norm the projections read x_in itself, so their input gradient lands in dx.
  const float* h = c.input_norm ? a.h.data() : a.x_in.data();
  float* dh = dx;
  if (c.input_norm) {
    zeroed(s.d_h, M * C);
    dh = s.d_h.data();
  }
  linear_backward(dh, p.wq->grad.data(), nullptr, s.d_q.data(), h, M, p.wq->matrix(), pool);
  linear_backward(dh, p.wk->grad.data(), nullptr, s.d_k.data(), h, M, p.wk->matrix(), pool);
  linear_backward(dh, p.wv->grad.data(), nullptr, s.d_v.data(), h, M, p.wv->matrix(), pool);
  if (c.input_norm)
    rmsnorm_backward(dx, p.input_norm->grad.data(), s.d_h.data(), a.x_in.data(),
                     p.input_norm->value.data(), a.rstd_in.data(), M, C, pool);
}

float normal_sample(TrainRng& rng) {
  // 1 - u lies in (0, 1], so the logarithm is finite.
  const double u1 = 1.0 - static_cast<double>(rng.uniform());
  const double u2 = static_cast<double>(rng.uniform());
  return static_cast<float>(std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2));
}

}  // namespace eagle2::train

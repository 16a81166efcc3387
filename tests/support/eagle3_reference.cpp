// The double-precision EAGLE-3 references of support/eagle3_reference.h.
#include "support/eagle3_reference.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "kernels/ops.h"
#include "support/train_references.h"
#include "train/decoder_block.h"

namespace eagle2::test::grad_check {

using train::AttentionShape;
using train::Eagle3Config;

namespace {

DVec doubles(const std::vector<float>& v) {
  return DVec(v.begin(), v.end());
}

}  // namespace

DVec ttt_attention_ref(const DVec& q, const std::vector<DVec>& k, const std::vector<DVec>& v,
                       const AttentionShape& s) {
  const int64_t T = s.seq_len, H = s.n_heads, hd = s.head_dim, group = H / s.n_kv_heads;
  const int64_t qw = H * hd, kw = s.n_kv_heads * hd, steps = static_cast<int64_t>(k.size()) - 1;
  const double scale = 1.0 / std::sqrt(static_cast<double>(hd));
  DVec out(static_cast<size_t>(s.batch * T * qw), 0.0);
  for (int64_t b = 0; b < s.batch; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t t = 0; t < T; ++t) {
        const int64_t kc = (h / group) * hd, qr = (b * T + t) * qw + h * hd;
        // The keys this query sees: (step, row) pairs, one softmax over all of them.
        std::vector<std::pair<int64_t, int64_t>> keys;
        for (int64_t j = 0; j <= t; ++j) keys.emplace_back(0, b * T + j);
        for (int64_t u = 1; u <= steps; ++u) keys.emplace_back(u, b * T + t);
        DVec sc;
        for (auto [u, row] : keys) {
          double d = 0;
          for (int64_t i = 0; i < hd; ++i) d += q[qr + i] * k[u][row * kw + kc + i];
          sc.push_back(d * scale);
        }
        const double mx = *std::max_element(sc.begin(), sc.end());
        double sum = 0;
        for (double& e : sc) sum += (e = std::exp(e - mx));
        for (size_t n = 0; n < keys.size(); ++n)
          for (int64_t i = 0; i < hd; ++i)
            out[qr + i] += sc[n] / sum * v[keys[n].first][keys[n].second * kw + kc + i];
      }
  return out;
}

Eagle3RefParams::Eagle3RefParams(const train::Eagle3Weights& w)
    : fc(doubles(w.fc.value)),
      input_norm(doubles(w.input_norm.value)),
      hidden_norm(doubles(w.hidden_norm.value)),
      wq(doubles(w.wq.value)),
      wk(doubles(w.wk.value)),
      wv(doubles(w.wv.value)),
      wo(doubles(w.wo.value)),
      post_norm(doubles(w.post_norm.value)),
      w_gate(doubles(w.w_gate.value)),
      w_up(doubles(w.w_up.value)),
      w_down(doubles(w.w_down.value)),
      norm(doubles(w.norm.value)),
      lm_head(doubles(w.lm_head.value)) {}

std::vector<std::pair<std::string, DVec Eagle3RefParams::*>> eagle3_ref_members() {
  using P = Eagle3RefParams;
  return {{"fc", &P::fc},
          {"input_norm", &P::input_norm},
          {"hidden_norm", &P::hidden_norm},
          {"wq", &P::wq},
          {"wk", &P::wk},
          {"wv", &P::wv},
          {"wo", &P::wo},
          {"post_norm", &P::post_norm},
          {"w_gate", &P::w_gate},
          {"w_up", &P::w_up},
          {"w_down", &P::w_down},
          {"norm", &P::norm},
          {"lm_head", &P::lm_head}};
}

Eagle3RefStep eagle3_layer_ref(const Eagle3Config& c, const Eagle3RefParams& p, const DVec& x,
                               const DVec& e, const std::vector<int32_t>& pos,
                               const std::vector<DVec>& earlier_k,
                               const std::vector<DVec>& earlier_v, int64_t B, int64_t T) {
  const int64_t N = B * T, C = c.hidden, I = c.intermediate, qd = c.q_dim(), kd = c.kv_dim();
  const double eps = c.rms_eps;
  // Attention input: the embedding's norm first, then the hidden stream's.
  const DVec en = rmsnorm_ref(e, p.input_norm, eps, N, C),
             xn = rmsnorm_ref(x, p.hidden_norm, eps, N, C);
  DVec a(static_cast<size_t>(N * 2 * C));
  for (int64_t n = 0; n < N; ++n)
    for (int64_t i = 0; i < C; ++i) {
      a[n * 2 * C + i] = en[n * C + i];
      a[n * 2 * C + C + i] = xn[n * C + i];
    }
  const int64_t half = c.head_dim / 2;
  std::vector<float> cos(static_cast<size_t>(N * half)), sin(cos.size());
  rope_tables(cos.data(), sin.data(), pos.data(), N, c.inv_freq.data(), half);
  Eagle3RefStep out;
  const DVec q =
      rope_ref(linear_ref(a, p.wq, nullptr, N, qd, 2 * C), cos, sin, N, c.n_heads, c.head_dim);
  out.k =
      rope_ref(linear_ref(a, p.wk, nullptr, N, kd, 2 * C), cos, sin, N, c.n_kv_heads, c.head_dim);
  out.v = linear_ref(a, p.wv, nullptr, N, kd, 2 * C);
  const AttentionShape shape{B, T, c.n_heads, c.n_kv_heads, c.head_dim};
  DVec attn;
  if (earlier_k.empty()) {
    attn = attention_ref(q, out.k, out.v, shape);
  } else {
    std::vector<DVec> ks = earlier_k, vs = earlier_v;
    ks.push_back(out.k);
    vs.push_back(out.v);
    attn = ttt_attention_ref(q, ks, vs, shape);
  }
  DVec mid = linear_ref(attn, p.wo, nullptr, N, C, qd);
  for (int64_t i = 0; i < N * C; ++i) mid[i] += x[i];
  const DVec h2 = rmsnorm_ref(mid, p.post_norm, eps, N, C);
  const DVec g = linear_ref(h2, p.w_gate, nullptr, N, I, C),
             u = linear_ref(h2, p.w_up, nullptr, N, I, C);
  DVec act(g.size());
  for (size_t i = 0; i < g.size(); ++i) act[i] = g[i] / (1.0 + std::exp(-g[i])) * u[i];
  out.h = linear_ref(act, p.w_down, nullptr, N, C, I);
  for (int64_t i = 0; i < N * C; ++i) out.h[i] += mid[i];
  return out;
}

Eagle3RefResult eagle3_unrolled_ref(const Eagle3Config& c, const Eagle3RefParams& p,
                                    const DVec& embed, const DVec& features,
                                    const train::Eagle3Window& win) {
  const int64_t B = win.batch, T = win.seq_len, S = win.steps, N = B * T, C = c.hidden;
  const int64_t V = c.draft_vocab, span = T + S;
  Eagle3RefResult r;
  DVec x = linear_ref(features, p.fc, nullptr, N, C, c.feature_width);
  std::vector<DVec> ks, vs;
  for (int64_t s = 0; s < S; ++s) {
    DVec e(static_cast<size_t>(N * C)), teacher(static_cast<size_t>(N * V)),
        state(static_cast<size_t>(N * C), 0.0);
    std::vector<int32_t> pos(static_cast<size_t>(N));
    std::vector<uint8_t> mask(static_cast<size_t>(N));
    for (int64_t b = 0; b < B; ++b)
      for (int64_t t = 0; t < T; ++t) {
        const int64_t n = b * T + t, off = b * span + t + 1 + s;  // token and teacher offset
        for (int64_t i = 0; i < C; ++i) e[n * C + i] = embed[win.tokens[off] * C + i];
        for (int64_t i = 0; i < V; ++i) teacher[n * V + i] = win.teacher[off * V + i];
        if (win.state_weight > 0)
          for (int64_t i = 0; i < C; ++i) state[n * C + i] = win.states[off * C + i];
        mask[n] = win.counted[off];
        pos[n] = win.positions[n] + static_cast<int32_t>(s);
      }
    Eagle3RefStep step = eagle3_layer_ref(c, p, x, e, pos, ks, vs, B, T);
    const DVec hn = rmsnorm_ref(step.h, p.norm, c.rms_eps, N, C);
    const DVec logits = linear_ref(hn, p.lm_head, nullptr, N, V, C);
    double l = soft_ce_ref(logits, teacher, mask, N, V);
    if (win.state_weight > 0) {
      // SmoothL1 (beta 1), mean over the counted rows' elements.
      double sum = 0;
      int64_t counted = 0;
      for (int64_t n = 0; n < N; ++n) {
        if (!mask[n]) continue;
        ++counted;
        for (int64_t i = 0; i < C; ++i) {
          const double d = std::abs(hn[n * C + i] - state[n * C + i]);
          sum += d < 1 ? 0.5 * d * d : d - 0.5;
        }
      }
      if (counted > 0) l += win.state_weight * sum / static_cast<double>(counted * C);
    }
    r.loss += std::pow(0.8, static_cast<double>(s)) * l;
    ks.push_back(step.k);
    vs.push_back(step.v);
    x = step.h;
    r.h.push_back(std::move(step.h));
  }
  return r;
}

Eagle3Case::Eagle3Case(int64_t steps, uint32_t seed) : S(steps) {
  cfg.hidden = 8;
  cfg.intermediate = 12;
  cfg.n_heads = 2;
  cfg.n_kv_heads = 1;
  cfg.head_dim = 4;
  cfg.feature_width = 24;
  cfg.draft_vocab = 12;
  cfg.rms_eps = 1e-5f;
  cfg.inv_freq = {1.0f, 0.1f};
  w = std::make_unique<train::Eagle3Weights>(cfg);
  train::TrainRng rng(seed);
  std::vector<train::Parameter*> params;
  w->collect(params);
  // Larger than nn.Linear's init, so that the attention is peaked enough to matter, and norm
  // weights away from 1, so that their gradients are exercised.
  for (train::Parameter* p : params)
    for (float& v : p->value)
      v = p->shape.size() == 2 ? rng.uniform(-0.6f, 0.6f) : 1.0f + 0.2f * train::normal_sample(rng);

  std::mt19937 g(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  const int64_t C = cfg.hidden, F = cfg.feature_width, Vd = cfg.draft_vocab, span = T + S;
  embed.resize(static_cast<size_t>(V * C));
  for (float& v : embed) v = u(g);
  features.resize(static_cast<size_t>(B * T * F));
  for (float& v : features) v = 2.0f * u(g);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t t = 0; t < T; ++t) positions.push_back(static_cast<int32_t>(b * 7 + t));
  std::uniform_int_distribution<int32_t> tok(0, static_cast<int32_t>(V - 1));
  tokens.resize(static_cast<size_t>(B * span));
  for (int32_t& t : tokens) t = tok(g);
  teacher.resize(static_cast<size_t>(B * span * Vd));
  for (int64_t r = 0; r < B * span; ++r) {
    double sum = 0;
    for (int64_t i = 0; i < Vd; ++i) sum += (teacher[r * Vd + i] = std::exp(2.0f * u(g)));
    for (int64_t i = 0; i < Vd; ++i)
      teacher[r * Vd + i] = static_cast<float>(teacher[r * Vd + i] / sum);
  }
  states.resize(static_cast<size_t>(B * span * C));
  for (float& v : states) v = 1.5f * u(g);  // both sides of SmoothL1's kink at |d| = 1
  counted.assign(static_cast<size_t>(B * span), 1);
  if (B > 1) {
    counted[span + 3] = 0;  // e.g. the teacher's argmax outside the draft vocabulary
    for (int64_t off = T + 1; off < span; ++off) {
      counted[span + off] = 0;  // past the end of window 1's sequence: padding
      tokens[span + off] = 0;
    }
  }
}

train::Eagle3Window Eagle3Case::window(float state_weight) {
  train::Eagle3Window w{
      B, T, S, features.data(), positions.data(), tokens.data(), teacher.data(), counted.data()};
  if (state_weight > 0) {
    w.states = states.data();
    w.state_weight = state_weight;
  }
  return w;
}

Matrix Eagle3Case::embed_matrix() const {
  return Matrix{DType::F32, V, cfg.hidden, embed.data()};
}

}  // namespace eagle2::test::grad_check

#include "train/ttt_attention.h"

#include <cmath>
#include <cstring>
#include <vector>

#include "core/error.h"
#include "kernels/cpu.h"
#include "kernels/matmul.h"
#include "train/attention_blocks.h"
#include "train/linear.h"

namespace eagle2::train {

namespace {

void check(const char* what, const AttentionShape& s, size_t n_k, size_t n_v) {
  if (s.batch < 0 || s.seq_len < 0 || s.n_heads <= 0 || s.n_kv_heads <= 0 || s.head_dim <= 0 ||
      s.n_heads % s.n_kv_heads != 0)
    fail(what, ": bad shape B=", s.batch, " T=", s.seq_len, " H=", s.n_heads, " KV=", s.n_kv_heads,
         " head_dim=", s.head_dim, " (H must be a multiple of KV)");
  if (n_k == 0 || n_k != n_v)
    fail(what, ": ", n_k, " key and ", n_v, " value steps (need the same number, at least 1)");
}

// Where one sequence's kv head reads and writes in a [N, KV*hd] key or value tensor.
struct KvView {
  int64_t first_row, kw, col;
  const float* row(const float* base, int64_t t) const { return base + (first_row + t) * kw + col; }
  float* row(float* base, int64_t t) const { return base + (first_row + t) * kw + col; }
};

// Each sequence's length, first row and first probability (the ragged layout in the header).
struct Layout {
  std::vector<int64_t> len, row, prob;
};

Layout layout(const char* what, const AttentionShape& s, int64_t steps,
              std::span<const int64_t> lengths) {
  if (!lengths.empty() && static_cast<int64_t>(lengths.size()) != s.batch)
    fail(what, ": ", lengths.size(), " lengths for ", s.batch, " sequences");
  Layout l;
  int64_t row = 0, prob = 0;
  for (int64_t b = 0; b < s.batch; ++b) {
    const int64_t T = lengths.empty() ? s.seq_len : lengths[static_cast<size_t>(b)];
    if (T < 0 || T > s.seq_len)
      fail(what, ": sequence ", b, " has length ", T, " (must lie in [0, ", s.seq_len, "])");
    l.len.push_back(T);
    l.row.push_back(row);
    l.prob.push_back(prob);
    row += T;
    prob += s.n_heads * T * (T + steps);
  }
  return l;
}

// y[n] += a * x[n] (vectorizes: no reduction across iterations).
void axpy(float* y, float a, const float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] += a * x[i];
}

}  // namespace

// Probability row t of step s: columns 0..t (step 0's keys; exact zeros up to T), then
// T..T+s-1 (the diagonal keys of steps 1..s).
void ttt_attention_forward(float* out, float* probs, const float* q,
                           std::span<const float* const> k, std::span<const float* const> v,
                           const AttentionShape& s, ThreadPool& pool,
                           std::span<const int64_t> lengths) {
  check("ttt_attention_forward", s, k.size(), v.size());
  const int64_t H = s.n_heads, hd = s.head_dim;
  const int64_t group = H / s.n_kv_heads, qw = H * hd, kw = s.n_kv_heads * hd;
  const int64_t steps = static_cast<int64_t>(k.size()) - 1;
  const Layout lay = layout("ttt_attention_forward", s, steps, lengths);
  const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
  const KernelPath path = active_kernel_path();
  pool.parallel_for(s.batch * H, [&](int64_t task) {
    const int64_t b = task / H, h = task % H, T = lay.len[b], W = T + steps, r0 = lay.row[b];
    if (T == 0) return;
    const KvView kv{r0, kw, (h / group) * hd};
    float* const P = probs + lay.prob[b] + h * T * W;
    std::vector<float> qh(T * hd), kh(T * hd), vh(T * hd), vt(hd * T), oh(T * hd), P0(T * T);
    std::vector<float> tmp(kAttentionBlock * T);
    gather_head(qh.data(), q + r0 * qw, T, qw, h * hd, hd);
    gather_head(kh.data(), k[0] + r0 * kw, T, kw, kv.col, hd);
    gather_head(vh.data(), v[0] + r0 * kw, T, kw, kv.col, hd);
    transpose(vh.data(), T, hd, 4, vt.data(), pool);
    causal_scores(P0.data(), qh.data(), kh.data(), T, hd, scale, tmp.data(), pool);

    for (int64_t t = 0; t < T; ++t) {
      float* p = P + t * W;
      std::memcpy(p, P0.data() + t * T, static_cast<size_t>(T) * sizeof(float));
      for (int64_t u = 1; u <= steps; ++u)
        p[T + u - 1] = dot_f32(path, qh.data() + t * hd, kv.row(k[u], t), hd) * scale;
      // One softmax over the t + 1 + s live entries (max-subtracted, summed in double).
      float mx = p[0];
      for (int64_t j = 1; j <= t; ++j) mx = p[j] > mx ? p[j] : mx;
      for (int64_t j = T; j < W; ++j) mx = p[j] > mx ? p[j] : mx;
      double sum = 0.0;
      for (int64_t j = 0; j <= t; ++j) sum += (p[j] = std::exp(p[j] - mx));
      for (int64_t j = T; j < W; ++j) sum += (p[j] = std::exp(p[j] - mx));
      const float inv = static_cast<float>(1.0 / sum);
      for (int64_t j = 0; j <= t; ++j) p[j] *= inv;
      for (int64_t j = T; j < W; ++j) p[j] *= inv;
      std::memcpy(P0.data() + t * T, p, static_cast<size_t>(T) * sizeof(float));
    }

    // O = P0 V0 on the kernel, then the diagonal values row by row.
    matmul(P0.data(), T, Matrix{DType::F32, hd, T, vt.data()}, oh.data(), pool);
    for (int64_t t = 0; t < T; ++t) {
      const float* p = P + t * W;
      float* o = out + (r0 + t) * qw + h * hd;
      std::memcpy(o, oh.data() + t * hd, static_cast<size_t>(hd) * sizeof(float));
      for (int64_t u = 1; u <= steps; ++u) axpy(o, p[T + u - 1], kv.row(v[u], t), hd);
    }
  });
}

void ttt_attention_backward(float* dq, std::span<float* const> dk, std::span<float* const> dv,
                            const float* dout, const float* q, std::span<const float* const> k,
                            std::span<const float* const> v, const float* probs,
                            const AttentionShape& s, ThreadPool& pool,
                            std::span<const int64_t> lengths) {
  check("ttt_attention_backward", s, k.size(), v.size());
  const int64_t steps = static_cast<int64_t>(k.size()) - 1;
  if ((!dk.empty() && static_cast<int64_t>(dk.size()) != steps + 1) ||
      (!dv.empty() && static_cast<int64_t>(dv.size()) != steps + 1))
    fail("ttt_attention_backward: ", dk.size(), " / ", dv.size(), " key / value gradients for ",
         steps + 1, " steps");
  auto grad = [&](std::span<float* const> g, int64_t u) { return g.empty() ? nullptr : g[u]; };
  const int64_t H = s.n_heads, KV = s.n_kv_heads, hd = s.head_dim;
  const int64_t group = H / KV, qw = H * hd, kw = KV * hd;
  const Layout lay = layout("ttt_attention_backward", s, steps, lengths);
  const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
  const KernelPath path = active_kernel_path();
  float* const dk0 = grad(dk, 0);
  float* const dv0 = grad(dv, 0);
  pool.parallel_for(s.batch * KV, [&](int64_t task) {
    const int64_t b = task / KV, kvh = task % KV, T = lay.len[b], W = T + steps, r0 = lay.row[b];
    if (T == 0) return;
    const KvView kv{r0, kw, kvh * hd};
    std::vector<float> kh(T * hd), kt(hd * T), vh(T * hd), qh(T * hd), qt(hd * T), doh(T * hd),
        dOt(hd * T), acc(T * hd), dkh(T * hd, 0.0f), dvh(T * hd, 0.0f), P0(T * T), dS(T * T),
        sq(T * T), dsd(T * steps);
    std::vector<float> tmp(kAttentionBlock * T);
    gather_head(kh.data(), k[0] + r0 * kw, T, kw, kv.col, hd);
    gather_head(vh.data(), v[0] + r0 * kw, T, kw, kv.col, hd);
    transpose(kh.data(), T, hd, 4, kt.data(), pool);
    // Query heads of the group in order, rows in order: the kv head's gradients get a fixed
    // summation order whatever the thread count.
    for (int64_t h = kvh * group; h < (kvh + 1) * group; ++h) {
      const float* P = probs + lay.prob[b] + h * T * W;
      gather_head(doh.data(), dout + r0 * qw, T, qw, h * hd, hd);
      gather_head(qh.data(), q + r0 * qw, T, qw, h * hd, hd);
      // dP = dO . value (step 0 on the kernel, lower triangle), then dS = P * (dP - sum P dP) *
      // scale; the row sum in double, since the difference cancels when P is peaked.
      causal_scores(dS.data(), doh.data(), vh.data(), T, hd, 1.0f, tmp.data(), pool);
      for (int64_t t = 0; t < T; ++t) {
        const float* p = P + t * W;
        float* d = dS.data() + t * T;
        float* dd = dsd.data() + t * steps;
        for (int64_t u = 1; u <= steps; ++u)
          dd[u - 1] = dot_f32(path, doh.data() + t * hd, kv.row(v[u], t), hd);
        double pdp = 0.0;
        for (int64_t j = 0; j <= t; ++j) pdp += static_cast<double>(p[j]) * d[j];
        for (int64_t u = 0; u < steps; ++u) pdp += static_cast<double>(p[T + u]) * dd[u];
        const float pdpf = static_cast<float>(pdp);
        for (int64_t j = 0; j <= t; ++j) d[j] = p[j] * (d[j] - pdpf) * scale;
        for (int64_t u = 0; u < steps; ++u) dd[u] = p[T + u] * (dd[u] - pdpf) * scale;
        if (dv0) std::memcpy(P0.data() + t * T, p, static_cast<size_t>(T) * sizeof(float));
      }

      if (dq) {  // dq = dS0 K0 + sum_u dS_u k_u
        matmul(dS.data(), T, Matrix{DType::F32, hd, T, kt.data()}, acc.data(), pool);
        for (int64_t t = 0; t < T; ++t)
          for (int64_t u = 1; u <= steps; ++u)
            axpy(acc.data() + t * hd, dsd[t * steps + u - 1], kv.row(k[u], t), hd);
        scatter_add_head(dq + r0 * qw, acc.data(), T, qw, h * hd, hd);
      }
      if (dk0) {  // dK0 += dS0^T Q
        transpose(qh.data(), T, hd, 4, qt.data(), pool);
        transpose(dS.data(), T, T, 4, sq.data(), pool);
        matmul(sq.data(), T, Matrix{DType::F32, hd, T, qt.data()}, acc.data(), pool);
        for (int64_t i = 0; i < T * hd; ++i) dkh[i] += acc[i];
      }
      if (dv0) {  // dV0 += P0^T dO
        transpose(doh.data(), T, hd, 4, dOt.data(), pool);
        transpose(P0.data(), T, T, 4, sq.data(), pool);
        matmul(sq.data(), T, Matrix{DType::F32, hd, T, dOt.data()}, acc.data(), pool);
        for (int64_t i = 0; i < T * hd; ++i) dvh[i] += acc[i];
      }
      for (int64_t u = 1; u <= steps; ++u) {  // the diagonal keys and values: own position only
        float* dku = grad(dk, u);
        float* dvu = grad(dv, u);
        for (int64_t t = 0; t < T; ++t) {
          if (dku) axpy(kv.row(dku, t), dsd[t * steps + u - 1], qh.data() + t * hd, hd);
          if (dvu) axpy(kv.row(dvu, t), P[t * W + T + u - 1], doh.data() + t * hd, hd);
        }
      }
    }
    if (dk0) scatter_add_head(dk0 + r0 * kw, dkh.data(), T, kw, kv.col, hd);
    if (dv0) scatter_add_head(dv0 + r0 * kw, dvh.data(), T, kw, kv.col, hd);
  });
}

}  // namespace eagle2::train

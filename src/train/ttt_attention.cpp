#include "train/ttt_attention.h"

#include <cmath>
#include <vector>

#include "core/error.h"
#include "kernels/cpu.h"
#include "kernels/matmul.h"

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

// Where one (sequence, query head) reads and writes: row pointers into the [B*T, width] tensors.
struct HeadView {
  int64_t T, hd, qw, kw, qcol, kcol, b;
  const float* qrow(const float* base, int64_t t) const { return base + (b * T + t) * qw + qcol; }
  float* qrow(float* base, int64_t t) const { return base + (b * T + t) * qw + qcol; }
  const float* krow(const float* base, int64_t t) const { return base + (b * T + t) * kw + kcol; }
  float* krow(float* base, int64_t t) const { return base + (b * T + t) * kw + kcol; }
};

HeadView view(const AttentionShape& s, int64_t b, int64_t h) {
  const int64_t group = s.n_heads / s.n_kv_heads;
  return HeadView{s.seq_len, s.head_dim, s.n_heads * s.head_dim, s.n_kv_heads * s.head_dim,
                  h * s.head_dim, (h / group) * s.head_dim, b};
}

// y[n] += a * x[n] (vectorizes: no reduction across iterations).
void axpy(float* y, float a, const float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] += a * x[i];
}

}  // namespace

// The live entries of probability row t of step s: columns 0..t, then T..T+s-1.
void ttt_attention_forward(float* out, float* probs, const float* q,
                           std::span<const float* const> k, std::span<const float* const> v,
                           const AttentionShape& s, ThreadPool& pool) {
  check("ttt_attention_forward", s, k.size(), v.size());
  const int64_t T = s.seq_len, H = s.n_heads, hd = s.head_dim;
  const int64_t steps = static_cast<int64_t>(k.size()) - 1, W = T + steps;
  const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
  const KernelPath path = active_kernel_path();
  pool.parallel_for(s.batch * H, [&](int64_t task) {
    const int64_t b = task / H, h = task % H;
    const HeadView hv = view(s, b, h);
    for (int64_t t = 0; t < T; ++t) {
      const float* qt = hv.qrow(q, t);
      float* p = probs + ((b * H + h) * T + t) * W;
      for (int64_t j = 0; j <= t; ++j) p[j] = dot_f32(path, qt, hv.krow(k[0], j), hd) * scale;
      for (int64_t j = t + 1; j < T; ++j) p[j] = 0.0f;
      for (int64_t u = 1; u <= steps; ++u)
        p[T + u - 1] = dot_f32(path, qt, hv.krow(k[u], t), hd) * scale;

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

      float* o = hv.qrow(out, t);
      for (int64_t i = 0; i < hd; ++i) o[i] = 0.0f;
      for (int64_t j = 0; j <= t; ++j) axpy(o, p[j], hv.krow(v[0], j), hd);
      for (int64_t u = 1; u <= steps; ++u) axpy(o, p[T + u - 1], hv.krow(v[u], t), hd);
    }
  });
}

void ttt_attention_backward(float* dq, std::span<float* const> dk, std::span<float* const> dv,
                            const float* dout, const float* q, std::span<const float* const> k,
                            std::span<const float* const> v, const float* probs,
                            const AttentionShape& s, ThreadPool& pool) {
  check("ttt_attention_backward", s, k.size(), v.size());
  const int64_t steps = static_cast<int64_t>(k.size()) - 1;
  if ((!dk.empty() && static_cast<int64_t>(dk.size()) != steps + 1) ||
      (!dv.empty() && static_cast<int64_t>(dv.size()) != steps + 1))
    fail("ttt_attention_backward: ", dk.size(), " / ", dv.size(), " key / value gradients for ",
         steps + 1, " steps");
  auto grad = [&](std::span<float* const> g, int64_t u) { return g.empty() ? nullptr : g[u]; };
  const int64_t T = s.seq_len, H = s.n_heads, KV = s.n_kv_heads, hd = s.head_dim, W = T + steps;
  const int64_t group = H / KV;
  const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
  const KernelPath path = active_kernel_path();
  pool.parallel_for(s.batch * KV, [&](int64_t task) {
    const int64_t b = task / KV, kvh = task % KV;
    std::vector<float> ds(static_cast<size_t>(W));
    // Query heads of the group in order, rows in order: the kv head's gradients get a fixed
    // summation order whatever the thread count.
    for (int64_t h = kvh * group; h < (kvh + 1) * group; ++h) {
      const HeadView hv = view(s, b, h);
      for (int64_t t = 0; t < T; ++t) {
        const float* p = probs + ((b * H + h) * T + t) * W;
        const float* dO = hv.qrow(dout, t);
        const float* qt = hv.qrow(q, t);
        // dP, then dS = P * (dP - sum P dP) * scale; the row sum in double, since the difference
        // cancels when P is peaked.
        for (int64_t j = 0; j <= t; ++j) ds[j] = dot_f32(path, dO, hv.krow(v[0], j), hd);
        for (int64_t u = 1; u <= steps; ++u)
          ds[T + u - 1] = dot_f32(path, dO, hv.krow(v[u], t), hd);
        double pdp = 0.0;
        for (int64_t j = 0; j <= t; ++j) pdp += static_cast<double>(p[j]) * ds[j];
        for (int64_t j = T; j < W; ++j) pdp += static_cast<double>(p[j]) * ds[j];
        const float pdpf = static_cast<float>(pdp);
        for (int64_t j = 0; j <= t; ++j) ds[j] = p[j] * (ds[j] - pdpf) * scale;
        for (int64_t j = T; j < W; ++j) ds[j] = p[j] * (ds[j] - pdpf) * scale;

        if (dq) {
          float* dqt = hv.qrow(dq, t);
          for (int64_t j = 0; j <= t; ++j) axpy(dqt, ds[j], hv.krow(k[0], j), hd);
          for (int64_t u = 1; u <= steps; ++u) axpy(dqt, ds[T + u - 1], hv.krow(k[u], t), hd);
        }
        for (int64_t u = 0; u <= steps; ++u) {
          float* dku = grad(dk, u);
          float* dvu = grad(dv, u);
          if (u == 0) {
            for (int64_t j = 0; j <= t; ++j) {
              if (dku) axpy(hv.krow(dku, j), ds[j], qt, hd);
              if (dvu) axpy(hv.krow(dvu, j), p[j], dO, hd);
            }
          } else {
            if (dku) axpy(hv.krow(dku, t), ds[T + u - 1], qt, hd);
            if (dvu) axpy(hv.krow(dvu, t), p[T + u - 1], dO, hd);
          }
        }
      }
    }
  });
}

}  // namespace eagle2::train

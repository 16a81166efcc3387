// The double-precision references of support/train_references.h.
#include "support/train_references.h"

#include <algorithm>
#include <cmath>

namespace eagle2::test::grad_check {

using train::AttentionShape;
using Vec = std::vector<float>;

namespace {

double lse_ref(const double* x, int64_t n) {
  double mx = x[0], s = 0;
  for (int64_t i = 1; i < n; ++i) mx = std::max(mx, x[i]);
  for (int64_t i = 0; i < n; ++i) s += std::exp(x[i] - mx);
  return mx + std::log(s);
}

}  // namespace

DVec linear_ref(const DVec& x, const DVec& W, const DVec* b, int64_t M, int64_t N, int64_t K) {
  DVec y(static_cast<size_t>(M * N));
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      double s = b ? (*b)[n] : 0.0;
      for (int64_t k = 0; k < K; ++k) s += x[m * K + k] * W[n * K + k];
      y[m * N + n] = s;
    }
  return y;
}

DVec rmsnorm_ref(const DVec& x, const DVec& w, double eps, int64_t M, int64_t C) {
  DVec y(x.size());
  for (int64_t m = 0; m < M; ++m) {
    double ss = 0;
    for (int64_t c = 0; c < C; ++c) ss += x[m * C + c] * x[m * C + c];
    const double r = 1.0 / std::sqrt(ss / C + eps);
    for (int64_t c = 0; c < C; ++c) y[m * C + c] = w[c] * x[m * C + c] * r;
  }
  return y;
}

DVec rope_ref(const DVec& x, const Vec& cos, const Vec& sin, int64_t T, int64_t H, int64_t hd) {
  DVec y(x.size());
  const int64_t half = hd / 2;
  for (int64_t t = 0; t < T; ++t)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t i = 0; i < half; ++i) {
        const int64_t o = t * H * hd + h * hd;
        const double a = x[o + i], b = x[o + i + half], c = cos[t * half + i],
                     s = sin[t * half + i];
        y[o + i] = a * c - b * s;
        y[o + i + half] = b * c + a * s;
      }
  return y;
}

DVec attention_ref(const DVec& q, const DVec& k, const DVec& v, const AttentionShape& s) {
  const int64_t T = s.seq_len, H = s.n_heads, hd = s.head_dim, group = H / s.n_kv_heads;
  const int64_t qw = H * hd, kw = s.n_kv_heads * hd;
  const double scale = 1.0 / std::sqrt(static_cast<double>(hd));
  DVec out(static_cast<size_t>(s.batch * T * qw), 0.0);
  for (int64_t b = 0; b < s.batch; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t t = 0; t < T; ++t) {
        const int64_t kvh = h / group;
        DVec sc(static_cast<size_t>(t + 1));
        double mx = -1e300, sum = 0;
        for (int64_t j = 0; j <= t; ++j) {
          double d = 0;
          for (int64_t i = 0; i < hd; ++i)
            d += q[(b * T + t) * qw + h * hd + i] * k[(b * T + j) * kw + kvh * hd + i];
          sc[j] = d * scale;
          mx = std::max(mx, sc[j]);
        }
        for (auto& e : sc) sum += (e = std::exp(e - mx));
        for (int64_t j = 0; j <= t; ++j)
          for (int64_t i = 0; i < hd; ++i)
            out[(b * T + t) * qw + h * hd + i] += sc[j] / sum * v[(b * T + j) * kw + kvh * hd + i];
      }
  return out;
}

double ce_ref(const DVec& logits, const std::vector<int32_t>& tg, const std::vector<uint8_t>& mask,
              int64_t M, int64_t V) {
  double s = 0;
  int n = 0;
  for (int64_t m = 0; m < M; ++m) {
    if (!mask[m]) continue;
    s += lse_ref(&logits[m * V], V) - logits[m * V + tg[m]];
    ++n;
  }
  return s / n;
}

DVec softmax_ref(const DVec& x, int64_t M, int64_t V) {
  DVec p(x.size());
  for (int64_t m = 0; m < M; ++m) {
    const double l = lse_ref(&x[m * V], V);
    for (int64_t i = 0; i < V; ++i) p[m * V + i] = std::exp(x[m * V + i] - l);
  }
  return p;
}

double soft_ce_ref(const DVec& s, const DVec& teacher, const std::vector<uint8_t>& mask, int64_t M,
                   int64_t V) {
  double sum = 0;
  int n = 0;
  for (int64_t m = 0; m < M; ++m) {
    if (!mask[m]) continue;
    const double l = lse_ref(&s[m * V], V);
    for (int64_t i = 0; i < V; ++i) sum -= teacher[m * V + i] * (s[m * V + i] - l);
    ++n;
  }
  return sum / n;
}

}  // namespace eagle2::test::grad_check

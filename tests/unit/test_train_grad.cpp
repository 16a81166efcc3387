// Every backward pass of src/train against central finite differences of a double-precision
// reference forward (float32 differences would be too coarse for 1e-3 checks), on small random
// shapes; each loss is L = sum(out * R) for a random R, so dout = R. Also: the float forwards
// against the references, the forwards that must equal inference kernels bit for bit, and
// independence of every result from the thread count.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <utility>
#include <random>
#include <vector>

#include "core/dtype.h"
#include "core/error.h"
#include "kernels/ops.h"
#include "train/attention.h"
#include "train/cross_entropy.h"
#include "train/embedding.h"
#include "train/linear.h"
#include "train/lm_head_loss.h"
#include "train/rmsnorm.h"
#include "train/rope.h"
#include "train/smooth_l1.h"
#include "train/swiglu.h"

namespace eagle2::train {
namespace {

using Vec = std::vector<float>;
using DVec = std::vector<double>;

Vec rnd(size_t n, std::mt19937& g, float lo = -1.0f, float hi = 1.0f) {
  std::uniform_real_distribution<float> u(lo, hi);
  Vec v(n);
  for (auto& e : v) e = u(g);
  return v;
}

DVec to_d(const Vec& v) { return DVec(v.begin(), v.end()); }

double dot(const DVec& a, const Vec& r) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += a[i] * r[i];
  return s;
}

// dL/dx by central differences; f reads x (captured by reference).
DVec numeric_grad(DVec& x, const std::function<double()>& f, double h = 1e-6) {
  DVec g(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const double s = x[i];
    x[i] = s + h;
    const double lp = f();
    x[i] = s - h;
    const double lm = f();
    x[i] = s;
    g[i] = (lp - lm) / (2 * h);
  }
  return g;
}

// Max error relative to the gradient's scale; also guards against a vacuous all-zero check.
void expect_grad(const Vec& analytic, const DVec& numeric, const char* what, double rtol = 1e-3) {
  ASSERT_EQ(analytic.size(), numeric.size()) << what;
  double scale = 0, err = 0;
  size_t worst = 0;
  for (size_t i = 0; i < numeric.size(); ++i) {
    scale = std::max(scale, std::fabs(numeric[i]));
    const double e = std::fabs(analytic[i] - numeric[i]);
    if (e > err) err = e, worst = i;
  }
  EXPECT_GT(scale, 1e-4) << what << ": gradient is (numerically) zero, the check is vacuous";
  EXPECT_LE(err, rtol * scale + 1e-7) << what << ": worst element " << worst << " analytic "
                                      << analytic[worst] << " numeric " << numeric[worst];
}

void expect_close(const Vec& got, const DVec& want, double rtol, const char* what) {
  ASSERT_EQ(got.size(), want.size());
  double scale = 0, err = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    scale = std::max(scale, std::fabs(want[i]));
    err = std::max(err, std::fabs(got[i] - want[i]));
  }
  EXPECT_LE(err, rtol * scale + 1e-7) << what;
}

bool same_bits(const Vec& a, const Vec& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// ---- double-precision references ------------------------------------------------------------

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
        const double a = x[o + i], b = x[o + i + half], c = cos[t * half + i], s = sin[t * half + i];
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
          for (int64_t i = 0; i < hd; ++i) d += q[(b * T + t) * qw + h * hd + i] * k[(b * T + j) * kw + kvh * hd + i];
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

double lse_ref(const double* x, int64_t n) {
  double mx = x[0], s = 0;
  for (int64_t i = 1; i < n; ++i) mx = std::max(mx, x[i]);
  for (int64_t i = 0; i < n; ++i) s += std::exp(x[i] - mx);
  return mx + std::log(s);
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

// ---- gradient checks ------------------------------------------------------------------------

TEST(TrainGrad, LinearWithAndWithoutBias) {
  std::mt19937 g(1);
  ThreadPool pool(2);
  const int64_t M = 5, K = 19, N = 7;
  for (bool with_bias : {false, true}) {
    Vec x = rnd(M * K, g), W = rnd(N * K, g), b = rnd(N, g), R = rnd(M * N, g);
    Vec y(M * N);
    linear_forward(y.data(), x.data(), M, Matrix{DType::F32, N, K, W.data()}, with_bias ? b.data() : nullptr, pool);
    DVec xd = to_d(x), Wd = to_d(W), bd = to_d(b);
    expect_close(y, linear_ref(xd, Wd, with_bias ? &bd : nullptr, M, N, K), 1e-5, "linear forward");
    Vec dx(M * K, 0.5f), dW(N * K, 0.25f), db(N, -1.0f);  // non-zero: backward must accumulate
    linear_backward(dx.data(), dW.data(), with_bias ? db.data() : nullptr, R.data(), x.data(), M,
                    Matrix{DType::F32, N, K, W.data()}, pool);
    for (auto& e : dx) e -= 0.5f;
    for (auto& e : dW) e -= 0.25f;
    for (auto& e : db) e += 1.0f;
    auto L = [&] { return dot(linear_ref(xd, Wd, with_bias ? &bd : nullptr, M, N, K), R); };
    expect_grad(dx, numeric_grad(xd, L), "linear dx");
    expect_grad(dW, numeric_grad(Wd, L), "linear dW");
    if (with_bias) expect_grad(db, numeric_grad(bd, L), "linear db");
  }
}

TEST(TrainGrad, LinearInputGradThroughBf16Weight) {
  // A frozen bf16 weight (a target's lm_head): the kernel multiplies bf16-rounded gradients with
  // the bf16 weights exactly and accumulates in f32 (kernels/matmul.h), so dx matches the double
  // computation on the rounded gradients to f32 accumulation accuracy.
  std::mt19937 g(2);
  ThreadPool pool(2);
  const int64_t M = 9, K = 37, N = 21;
  Vec x = rnd(M * K, g), W = rnd(N * K, g), R = rnd(M * N, g);
  std::vector<uint16_t> Wb(W.size());
  for (size_t i = 0; i < W.size(); ++i) W[i] = bf16_to_f32(Wb[i] = f32_to_bf16(W[i]));
  Vec dx16(M * K, 0.0f);
  linear_backward(dx16.data(), nullptr, nullptr, R.data(), x.data(), M, Matrix{DType::BF16, N, K, Wb.data()}, pool);
  for (int64_t m = 0; m < M; ++m)
    for (int64_t k = 0; k < K; ++k) {
      double want = 0;
      for (int64_t n = 0; n < N; ++n)
        want += static_cast<double>(bf16_to_f32(f32_to_bf16(R[m * N + n]))) * W[n * K + k];
      ASSERT_NEAR(dx16[m * K + k], want, 1e-5) << m << "," << k;
    }
}

TEST(TrainGrad, Embedding) {
  std::mt19937 g(3);
  ThreadPool pool(2);
  const int64_t V = 6, C = 5, M = 7;
  const std::vector<int32_t> ids = {3, 0, 3, 5, 1, 3, 0};  // repeats accumulate
  Vec table = rnd(V * C, g), R = rnd(M * C, g), out(M * C);
  embedding_forward(out.data(), ids.data(), M, Matrix{DType::F32, V, C, table.data()}, pool);
  for (int64_t m = 0; m < M; ++m)
    for (int64_t c = 0; c < C; ++c) ASSERT_EQ(out[m * C + c], table[ids[m] * C + c]);
  Vec dtable(V * C, 0.0f);
  embedding_backward(dtable.data(), R.data(), ids.data(), M, V, C, pool);
  DVec td = to_d(table);
  auto L = [&] {
    double s = 0;
    for (int64_t m = 0; m < M; ++m)
      for (int64_t c = 0; c < C; ++c) s += td[ids[m] * C + c] * R[m * C + c];
    return s;
  };
  expect_grad(dtable, numeric_grad(td, L), "embedding dtable");
  const int32_t bad = 6;
  EXPECT_THROW(embedding_forward(out.data(), &bad, 1, Matrix{DType::F32, V, C, table.data()}, pool), Error);
}

TEST(TrainGrad, RmsNorm) {
  std::mt19937 g(4);
  ThreadPool pool(2);
  const int64_t M = 4, C = 13;
  const float eps = 1e-5f;
  Vec x = rnd(M * C, g, -2, 2), w = rnd(C, g, 0.5f, 1.5f), R = rnd(M * C, g), y(M * C), rstd(M);
  rmsnorm_forward(y.data(), rstd.data(), x.data(), w.data(), eps, M, C, pool);
  // Same bits as the inference kernel.
  for (int64_t m = 0; m < M; ++m) {
    Vec ref(C);
    rmsnorm(&x[m * C], w.data(), eps, ref.data(), C);
    EXPECT_EQ(0, std::memcmp(ref.data(), &y[m * C], C * sizeof(float)));
  }
  Vec dx(M * C, 0.0f), dw(C, 0.0f);
  rmsnorm_backward(dx.data(), dw.data(), R.data(), x.data(), w.data(), rstd.data(), M, C, pool);
  DVec xd = to_d(x), wd = to_d(w);
  auto L = [&] { return dot(rmsnorm_ref(xd, wd, eps, M, C), R); };
  expect_grad(dx, numeric_grad(xd, L), "rmsnorm dx");
  expect_grad(dw, numeric_grad(wd, L), "rmsnorm dw");
}

TEST(TrainGrad, Rope) {
  std::mt19937 g(5);
  ThreadPool pool(2);
  const int64_t T = 5, H = 3, hd = 8, half = hd / 2;
  const std::vector<int32_t> pos = {0, 1, 2, 7, 30};
  Vec inv_freq(half);
  for (int64_t i = 0; i < half; ++i) inv_freq[i] = 1.0f / std::pow(10000.0f, 2.0f * i / hd);
  Vec cos(T * half), sin(T * half);
  rope_tables(cos.data(), sin.data(), pos.data(), T, inv_freq.data(), half);
  Vec x = rnd(T * H * hd, g), R = rnd(T * H * hd, g);
  Vec y = x;
  rope_forward(y.data(), cos.data(), sin.data(), T, H, hd, pool);
  DVec xd = to_d(x);
  expect_close(y, rope_ref(xd, cos, sin, T, H, hd), 1e-6, "rope forward");
  Vec dx = R;
  rope_backward(dx.data(), cos.data(), sin.data(), T, H, hd, pool);
  auto L = [&] { return dot(rope_ref(xd, cos, sin, T, H, hd), R); };
  expect_grad(dx, numeric_grad(xd, L), "rope dx");
}

TEST(TrainGrad, GroupedQueryCausalAttention) {
  std::mt19937 g(6);
  ThreadPool pool(2);
  const AttentionShape s{2, 5, 4, 2, 4};
  const int64_t rows = s.batch * s.seq_len, qw = s.n_heads * s.head_dim, kw = s.n_kv_heads * s.head_dim;
  Vec q = rnd(rows * qw, g, -1.5f, 1.5f), k = rnd(rows * kw, g, -1.5f, 1.5f), v = rnd(rows * kw, g);
  Vec R = rnd(rows * qw, g), out(rows * qw);
  Vec probs(s.batch * s.n_heads * s.seq_len * s.seq_len);
  attention_forward(out.data(), probs.data(), q.data(), k.data(), v.data(), s, pool);
  DVec qd = to_d(q), kd = to_d(k), vd = to_d(v);
  expect_close(out, attention_ref(qd, kd, vd, s), 1e-5, "attention forward");
  Vec dq(q.size(), 0.0f), dk(k.size(), 0.0f), dv(v.size(), 0.0f);
  attention_backward(dq.data(), dk.data(), dv.data(), R.data(), q.data(), k.data(), v.data(), probs.data(), s, pool);
  auto L = [&] { return dot(attention_ref(qd, kd, vd, s), R); };
  expect_grad(dq, numeric_grad(qd, L), "attention dq");
  expect_grad(dk, numeric_grad(kd, L), "attention dk");
  expect_grad(dv, numeric_grad(vd, L), "attention dv");
}

TEST(TrainGrad, AttentionPastOneScoreBlock) {
  // T beyond the 64-row score blocks; with this many inputs a full finite-difference sweep is
  // slow, so the check is a directional derivative along a random direction per input.
  std::mt19937 g(14);
  ThreadPool pool(2);
  const AttentionShape s{1, 70, 2, 1, 8};
  const int64_t rows = s.batch * s.seq_len, qw = s.n_heads * s.head_dim, kw = s.n_kv_heads * s.head_dim;
  Vec q = rnd(rows * qw, g, -1.5f, 1.5f), k = rnd(rows * kw, g, -1.5f, 1.5f), v = rnd(rows * kw, g);
  Vec R = rnd(rows * qw, g), out(rows * qw), probs(s.batch * s.n_heads * s.seq_len * s.seq_len);
  attention_forward(out.data(), probs.data(), q.data(), k.data(), v.data(), s, pool);
  DVec qd = to_d(q), kd = to_d(k), vd = to_d(v);
  expect_close(out, attention_ref(qd, kd, vd, s), 1e-5, "attention forward, T = 70");
  Vec dq(q.size(), 0.0f), dk(k.size(), 0.0f), dv(v.size(), 0.0f);
  attention_backward(dq.data(), dk.data(), dv.data(), R.data(), q.data(), k.data(), v.data(), probs.data(), s, pool);
  auto L = [&] { return dot(attention_ref(qd, kd, vd, s), R); };
  const std::pair<DVec*, const Vec*> inputs[] = {{&qd, &dq}, {&kd, &dk}, {&vd, &dv}};
  for (const auto& [x, grad] : inputs) {
    const Vec dir = rnd(x->size(), g);
    const DVec x0 = *x;
    const double h = 1e-6;
    for (size_t i = 0; i < x->size(); ++i) (*x)[i] = x0[i] + h * dir[i];
    const double lp = L();
    for (size_t i = 0; i < x->size(); ++i) (*x)[i] = x0[i] - h * dir[i];
    const double lm = L();
    *x = x0;
    double analytic = 0;
    for (size_t i = 0; i < x->size(); ++i) analytic += (*grad)[i] * static_cast<double>(dir[i]);
    EXPECT_NEAR(analytic, (lp - lm) / (2 * h), 1e-3 * std::fabs(analytic) + 1e-5);
  }
}

TEST(TrainGrad, SwiGlu) {
  std::mt19937 g(7);
  ThreadPool pool(2);
  const int64_t n = 40;
  Vec gate = rnd(n, g, -4, 4), up = rnd(n, g, -2, 2), R = rnd(n, g), out(n);
  swiglu_forward(out.data(), gate.data(), up.data(), n, pool);
  Vec ref = gate;
  swiglu_inplace(ref.data(), up.data(), n);
  EXPECT_TRUE(same_bits(ref, out));
  Vec dg(n, 0.0f), du(n, 0.0f);
  swiglu_backward(dg.data(), du.data(), R.data(), gate.data(), up.data(), n, pool);
  DVec gd = to_d(gate), ud = to_d(up);
  auto L = [&] {
    double s = 0;
    for (int64_t i = 0; i < n; ++i) s += gd[i] / (1 + std::exp(-gd[i])) * ud[i] * R[i];
    return s;
  };
  expect_grad(dg, numeric_grad(gd, L), "swiglu dgate");
  expect_grad(du, numeric_grad(ud, L), "swiglu dup");
}

TEST(TrainGrad, CrossEntropyWithMask) {
  std::mt19937 g(8);
  ThreadPool pool(2);
  const int64_t M = 6, V = 9;
  const std::vector<int32_t> tg = {2, -100, 8, 0, 4, 99};  // unmasked rows may hold anything
  const std::vector<uint8_t> mask = {1, 0, 1, 1, 1, 0};
  Vec logits = rnd(M * V, g, -3, 3), probs(M * V);
  const double loss = cross_entropy_forward(probs.data(), logits.data(), tg.data(), mask.data(), M, V, pool);
  DVec ld = to_d(logits);
  EXPECT_NEAR(loss, ce_ref(ld, tg, mask, M, V), 1e-6);
  Vec dl(M * V, 0.0f);
  const float dloss = 0.7f;
  cross_entropy_backward(dl.data(), probs.data(), tg.data(), mask.data(), M, V, dloss, pool);
  expect_grad(dl, numeric_grad(ld, [&] { return dloss * ce_ref(ld, tg, mask, M, V); }), "cross-entropy dlogits");
  const std::vector<uint8_t> none(M, 0);
  EXPECT_EQ(0.0, cross_entropy_forward(probs.data(), logits.data(), tg.data(), none.data(), M, V, pool));
  const std::vector<uint8_t> all(M, 1);
  EXPECT_THROW(cross_entropy_forward(probs.data(), logits.data(), tg.data(), all.data(), M, V, pool), Error);
}

TEST(TrainGrad, SoftCrossEntropy) {
  std::mt19937 g(9);
  ThreadPool pool(2);
  const int64_t M = 5, V = 7;
  const std::vector<uint8_t> mask = {1, 1, 0, 1, 1};
  Vec s = rnd(M * V, g, -3, 3), tl = rnd(M * V, g, -3, 3), probs(M * V);
  const DVec teacher_d = softmax_ref(to_d(tl), M, V);
  const Vec teacher(teacher_d.begin(), teacher_d.end());
  const DVec teacher_f = to_d(teacher);  // what the float code sees
  const double loss = soft_cross_entropy_forward(probs.data(), s.data(), teacher.data(), mask.data(), M, V, pool);
  DVec sd = to_d(s);
  EXPECT_NEAR(loss, soft_ce_ref(sd, teacher_f, mask, M, V), 1e-6);
  Vec ds(M * V, 0.0f);
  soft_cross_entropy_backward(ds.data(), probs.data(), teacher.data(), mask.data(), M, V, 1.0f, pool);
  expect_grad(ds, numeric_grad(sd, [&] { return soft_ce_ref(sd, teacher_f, mask, M, V); }), "soft CE dlogits");
}

TEST(TrainGrad, SmoothL1BothRegions) {
  std::mt19937 g(10);
  ThreadPool pool(2);
  const int64_t M = 4, C = 10;
  const std::vector<uint8_t> mask = {1, 0, 1, 1};
  Vec pred = rnd(M * C, g, -2, 2), target(M * C);
  // Differences kept clear of the kink at |d| = 1, half of them inside, half outside.
  std::uniform_real_distribution<float> inner(0.05f, 0.9f), outer(1.1f, 3.0f);
  int n_in = 0, n_out = 0;
  for (int64_t i = 0; i < M * C; ++i) {
    const float d = (i % 2 ? inner(g) : outer(g)) * (i % 3 ? 1.0f : -1.0f);
    target[i] = pred[i] - d;
    (std::fabs(pred[i] - target[i]) < 1.0f ? n_in : n_out)++;
  }
  ASSERT_GT(n_in, 5);
  ASSERT_GT(n_out, 5);
  DVec pd = to_d(pred);
  const DVec td = to_d(target);
  auto L = [&] {
    double s = 0;
    for (int64_t m = 0; m < M; ++m) {
      if (!mask[m]) continue;
      for (int64_t c = 0; c < C; ++c) {
        const double d = pd[m * C + c] - td[m * C + c];
        s += std::fabs(d) < 1 ? 0.5 * d * d : std::fabs(d) - 0.5;
      }
    }
    return s / (3.0 * C);
  };
  EXPECT_NEAR(smooth_l1_forward(pred.data(), target.data(), mask.data(), M, C, pool), L(), 1e-6);
  Vec dp(M * C, 0.0f);
  smooth_l1_backward(dp.data(), pred.data(), target.data(), mask.data(), M, C, 1.0f, pool);
  expect_grad(dp, numeric_grad(pd, L), "smooth L1 dpred");
}

TEST(TrainGrad, LmHeadCrossEntropyFused) {
  std::mt19937 g(11);
  ThreadPool pool(2);
  const int64_t M = 7, d = 8, V = 11;
  const std::vector<int32_t> tg = {3, 10, 0, -1, 7, 7, 1};
  const std::vector<uint8_t> mask = {1, 1, 1, 0, 1, 1, 1};
  Vec x = rnd(M * d, g, -2, 2), W = rnd(V * d, g);
  const Matrix Wm{DType::F32, V, d, W.data()};
  Vec dx(M * d, 0.0f), dW(V * d, 0.0f);
  const float dloss = 1.3f;
  // chunk_rows 4: six counted rows span two chunks.
  const double loss = lm_head_cross_entropy(x.data(), tg.data(), mask.data(), M, Wm, nullptr, dx.data(), dW.data(), dloss, pool, 4);
  DVec xd = to_d(x), Wdd = to_d(W);
  auto L = [&] { return ce_ref(linear_ref(xd, Wdd, nullptr, M, V, d), tg, mask, M, V); };
  EXPECT_NEAR(loss, L(), 1e-5);
  auto Ls = [&] { return dloss * L(); };
  expect_grad(dx, numeric_grad(xd, Ls), "lm_head CE dx");
  expect_grad(dW, numeric_grad(Wdd, Ls), "lm_head CE dW");
  for (int64_t c = 0; c < d; ++c) EXPECT_EQ(dx[3 * d + c], 0.0f);  // the masked row
  // A cached W^T and a forward-only call agree with the above.
  const TransposedMatrix WT = transpose_matrix(Wm, pool);
  Vec dx2(M * d, 0.0f);
  lm_head_cross_entropy(x.data(), tg.data(), mask.data(), M, Wm, &WT.m, dx2.data(), nullptr, dloss, pool, 4);
  EXPECT_TRUE(same_bits(dx, dx2));
  EXPECT_EQ(loss, lm_head_cross_entropy(x.data(), tg.data(), mask.data(), M, Wm, nullptr, nullptr, nullptr, 0.0f, pool, 4));
}

TEST(TrainGrad, LmHeadSoftCrossEntropyFused) {
  std::mt19937 g(12);
  ThreadPool pool(2);
  const int64_t M = 6, d = 8, V = 13;
  const std::vector<uint8_t> mask = {1, 0, 1, 1, 1, 1};
  Vec x = rnd(M * d, g, -2, 2), tx = rnd(M * d, g, -2, 2), W = rnd(V * d, g);
  const Matrix Wm{DType::F32, V, d, W.data()};
  Vec dx(M * d, 0.0f), dW(V * d, 0.0f);
  const double loss = lm_head_soft_cross_entropy(x.data(), tx.data(), mask.data(), M, Wm, nullptr, dx.data(), dW.data(), 0.1f, pool, 4);
  DVec xd = to_d(x), Wdd = to_d(W);
  const DVec txd = to_d(tx);
  // The teacher has no gradient path: its probabilities are fixed from the unperturbed W.
  const DVec teacher = softmax_ref(linear_ref(txd, Wdd, nullptr, M, V, d), M, V);
  auto L = [&] { return soft_ce_ref(linear_ref(xd, Wdd, nullptr, M, V, d), teacher, mask, M, V); };
  EXPECT_NEAR(loss, L(), 1e-5);
  auto Ls = [&] { return 0.1 * L(); };
  expect_grad(dx, numeric_grad(xd, Ls), "lm_head soft CE dx");
  expect_grad(dW, numeric_grad(Wdd, Ls), "lm_head soft CE dW (student path)");
}

// ---- thread-count independence ---------------------------------------------------------------

TEST(TrainGrad, ResultsDoNotDependOnThreadCount) {
  std::mt19937 g(13);
  ThreadPool p1(1), p2(2);
  // Shapes past every task-size boundary (64-row blocks, 256-column blocks, 4096-element chunks).
  const int64_t M = 70, K = 40, N = 33, C = 300, V = 50;
  Vec x = rnd(M * K, g), W = rnd(N * K, g), b = rnd(N, g), dy = rnd(M * N, g);
  Vec xc = rnd(M * C, g), wc = rnd(C, g), dyc = rnd(M * C, g);
  std::vector<int32_t> ids(M), tg(M);
  for (int64_t m = 0; m < M; ++m) ids[m] = static_cast<int32_t>(g() % 9), tg[m] = static_cast<int32_t>(g() % V);
  std::vector<uint8_t> mask(M);
  for (auto& e : mask) e = g() % 4 != 0;
  Vec Wl = rnd(V * K, g), tx = rnd(M * K, g);
  const AttentionShape s{2, 70, 4, 2, 8};
  const int64_t rows = s.batch * s.seq_len, qw = s.n_heads * s.head_dim, kw = s.n_kv_heads * s.head_dim;
  Vec q = rnd(rows * qw, g), k = rnd(rows * kw, g), v = rnd(rows * kw, g), dO = rnd(rows * qw, g);

  auto run = [&](ThreadPool& pool) {
    std::vector<Vec> r;
    Vec y(M * N), dx(M * K, 0.0f), dW(N * K, 0.0f), db(N, 0.0f);
    linear_forward(y.data(), x.data(), M, Matrix{DType::F32, N, K, W.data()}, b.data(), pool);
    linear_backward(dx.data(), dW.data(), db.data(), dy.data(), x.data(), M, Matrix{DType::F32, N, K, W.data()}, pool);
    r.insert(r.end(), {y, dx, dW, db});
    Vec yn(M * C), rstd(M), dxn(M * C, 0.0f), dwn(C, 0.0f);
    rmsnorm_forward(yn.data(), rstd.data(), xc.data(), wc.data(), 1e-6f, M, C, pool);
    rmsnorm_backward(dxn.data(), dwn.data(), dyc.data(), xc.data(), wc.data(), rstd.data(), M, C, pool);
    r.insert(r.end(), {yn, rstd, dxn, dwn});
    Vec dtab(9 * C, 0.0f);
    embedding_backward(dtab.data(), dyc.data(), ids.data(), M, 9, C, pool);
    r.push_back(dtab);
    Vec sg(M * C), dg(M * C, 0.0f), du(M * C, 0.0f);
    swiglu_forward(sg.data(), xc.data(), dyc.data(), M * C, pool);
    swiglu_backward(dg.data(), du.data(), dyc.data(), xc.data(), dyc.data(), M * C, pool);
    r.insert(r.end(), {sg, dg, du});
    Vec out(rows * qw), probs(s.batch * s.n_heads * s.seq_len * s.seq_len);
    Vec dq(q.size(), 0.0f), dk(k.size(), 0.0f), dv(v.size(), 0.0f);
    attention_forward(out.data(), probs.data(), q.data(), k.data(), v.data(), s, pool);
    attention_backward(dq.data(), dk.data(), dv.data(), dO.data(), q.data(), k.data(), v.data(), probs.data(), s, pool);
    r.insert(r.end(), {out, probs, dq, dk, dv});
    Vec lx(M * K, 0.0f), lW(V * K, 0.0f), sx(M * K, 0.0f);
    const Matrix Wlm{DType::F32, V, K, Wl.data()};
    const double ce = lm_head_cross_entropy(x.data(), tg.data(), mask.data(), M, Wlm, nullptr, lx.data(), lW.data(), 1.0f, pool);
    const double sce = lm_head_soft_cross_entropy(x.data(), tx.data(), mask.data(), M, Wlm, nullptr, sx.data(), nullptr, 0.1f, pool);
    const double sl1 = smooth_l1_forward(x.data(), tx.data(), mask.data(), M, K, pool);
    r.insert(r.end(), {lx, lW, sx, Vec{static_cast<float>(ce), static_cast<float>(sce), static_cast<float>(sl1)}});
    return r;
  };
  const auto a = run(p1), c = run(p2);
  ASSERT_EQ(a.size(), c.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(same_bits(a[i], c[i])) << "result " << i;
}

}  // namespace
}  // namespace eagle2::train

// Every backward pass of src/train's layers (linear, embedding, RMSNorm, RoPE, attention,
// SwiGLU) against central finite differences of a double-precision reference forward
// (support/grad_check.h, support/train_references.h), on small random shapes; each loss is
// L = sum(out * R) for a random R, so dout = R. Also: the float forwards against the references,
// and the forwards that must equal inference kernels bit for bit. The losses are in
// test_train_grad_losses.cpp, thread-count independence in test_train_thread_count.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <utility>
#include <vector>

#include "core/dtype.h"
#include "core/error.h"
#include "kernels/ops.h"
#include "support/grad_check.h"
#include "support/train_references.h"
#include "train/attention.h"
#include "train/embedding.h"
#include "train/linear.h"
#include "train/rmsnorm.h"
#include "train/rope.h"
#include "train/swiglu.h"

namespace eagle2::train {
namespace {

using namespace test::grad_check;

// ---- gradient checks ------------------------------------------------------------------------

TEST(TrainGrad, LinearWithAndWithoutBias) {
  std::mt19937 g(1);
  ThreadPool pool(2);
  const int64_t M = 5, K = 19, N = 7;
  for (bool with_bias : {false, true}) {
    Vec x = rnd(M * K, g), W = rnd(N * K, g), b = rnd(N, g), R = rnd(M * N, g);
    Vec y(M * N);
    linear_forward(y.data(), x.data(), M, Matrix{DType::F32, N, K, W.data()},
                   with_bias ? b.data() : nullptr, pool);
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
  linear_backward(dx16.data(), nullptr, nullptr, R.data(), x.data(), M,
                  Matrix{DType::BF16, N, K, Wb.data()}, pool);
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
  EXPECT_THROW(embedding_forward(out.data(), &bad, 1, Matrix{DType::F32, V, C, table.data()}, pool),
               Error);
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
  const int64_t rows = s.batch * s.seq_len, qw = s.n_heads * s.head_dim,
                kw = s.n_kv_heads * s.head_dim;
  Vec q = rnd(rows * qw, g, -1.5f, 1.5f), k = rnd(rows * kw, g, -1.5f, 1.5f), v = rnd(rows * kw, g);
  Vec R = rnd(rows * qw, g), out(rows * qw);
  Vec probs(s.batch * s.n_heads * s.seq_len * s.seq_len);
  attention_forward(out.data(), probs.data(), q.data(), k.data(), v.data(), s, pool);
  DVec qd = to_d(q), kd = to_d(k), vd = to_d(v);
  expect_close(out, attention_ref(qd, kd, vd, s), 1e-5, "attention forward");
  Vec dq(q.size(), 0.0f), dk(k.size(), 0.0f), dv(v.size(), 0.0f);
  attention_backward(dq.data(), dk.data(), dv.data(), R.data(), q.data(), k.data(), v.data(),
                     probs.data(), s, pool);
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
  const int64_t rows = s.batch * s.seq_len, qw = s.n_heads * s.head_dim,
                kw = s.n_kv_heads * s.head_dim;
  Vec q = rnd(rows * qw, g, -1.5f, 1.5f), k = rnd(rows * kw, g, -1.5f, 1.5f), v = rnd(rows * kw, g);
  Vec R = rnd(rows * qw, g), out(rows * qw), probs(s.batch * s.n_heads * s.seq_len * s.seq_len);
  attention_forward(out.data(), probs.data(), q.data(), k.data(), v.data(), s, pool);
  DVec qd = to_d(q), kd = to_d(k), vd = to_d(v);
  expect_close(out, attention_ref(qd, kd, vd, s), 1e-5, "attention forward, T = 70");
  Vec dq(q.size(), 0.0f), dk(k.size(), 0.0f), dv(v.size(), 0.0f);
  attention_backward(dq.data(), dk.data(), dv.data(), R.data(), q.data(), k.data(), v.data(),
                     probs.data(), s, pool);
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

}  // namespace
}  // namespace eagle2::train

// Every forward and backward of src/train gives the same bits on 1 and on 2 threads, on shapes
// past every task-size boundary.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "core/dtype.h"
#include "support/grad_check.h"
#include "train/attention.h"
#include "train/cross_entropy.h"
#include "train/embedding.h"
#include "train/linear.h"
#include "train/lm_head_loss.h"
#include "train/rmsnorm.h"
#include "train/smooth_l1.h"
#include "train/swiglu.h"

namespace eagle2::train {
namespace {

using namespace test::grad_check;

TEST(TrainGrad, ResultsDoNotDependOnThreadCount) {
  std::mt19937 g(13);
  ThreadPool p1(1), p2(2);
  // Shapes past every task-size boundary (64-row blocks, 256-column blocks, 4096-element chunks).
  const int64_t M = 70, K = 40, N = 33, C = 300, V = 50;
  Vec x = rnd(M * K, g), W = rnd(N * K, g), b = rnd(N, g), dy = rnd(M * N, g);
  Vec xc = rnd(M * C, g), wc = rnd(C, g), dyc = rnd(M * C, g);
  std::vector<int32_t> ids(M), tg(M);
  for (int64_t m = 0; m < M; ++m)
    ids[m] = static_cast<int32_t>(g() % 9), tg[m] = static_cast<int32_t>(g() % V);
  std::vector<uint8_t> mask(M);
  for (auto& e : mask) e = g() % 4 != 0;
  Vec Wl = rnd(V * K, g), tx = rnd(M * K, g);
  const AttentionShape s{2, 70, 4, 2, 8};
  const int64_t rows = s.batch * s.seq_len, qw = s.n_heads * s.head_dim,
                kw = s.n_kv_heads * s.head_dim;
  Vec q = rnd(rows * qw, g), k = rnd(rows * kw, g), v = rnd(rows * kw, g), dO = rnd(rows * qw, g);

  auto run = [&](ThreadPool& pool) {
    std::vector<Vec> r;
    Vec y(M * N), dx(M * K, 0.0f), dW(N * K, 0.0f), db(N, 0.0f);
    linear_forward(y.data(), x.data(), M, Matrix{DType::F32, N, K, W.data()}, b.data(), pool);
    linear_backward(dx.data(), dW.data(), db.data(), dy.data(), x.data(), M,
                    Matrix{DType::F32, N, K, W.data()}, pool);
    r.insert(r.end(), {y, dx, dW, db});
    Vec yn(M * C), rstd(M), dxn(M * C, 0.0f), dwn(C, 0.0f);
    rmsnorm_forward(yn.data(), rstd.data(), xc.data(), wc.data(), 1e-6f, M, C, pool);
    rmsnorm_backward(dxn.data(), dwn.data(), dyc.data(), xc.data(), wc.data(), rstd.data(), M, C,
                     pool);
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
    attention_backward(dq.data(), dk.data(), dv.data(), dO.data(), q.data(), k.data(), v.data(),
                       probs.data(), s, pool);
    r.insert(r.end(), {out, probs, dq, dk, dv});
    Vec lx(M * K, 0.0f), lW(V * K, 0.0f), sx(M * K, 0.0f);
    const Matrix Wlm{DType::F32, V, K, Wl.data()};
    const double ce = lm_head_cross_entropy(x.data(), tg.data(), mask.data(), M, Wlm, nullptr,
                                            lx.data(), lW.data(), 1.0f, pool);
    const double sce = lm_head_soft_cross_entropy(x.data(), tx.data(), mask.data(), M, Wlm, nullptr,
                                                  sx.data(), nullptr, 0.1f, pool);
    const double sl1 = smooth_l1_forward(x.data(), tx.data(), mask.data(), M, K, pool);
    r.insert(r.end(),
             {lx, lW, sx,
              Vec{static_cast<float>(ce), static_cast<float>(sce), static_cast<float>(sl1)}});
    return r;
  };
  const auto a = run(p1), c = run(p2);
  ASSERT_EQ(a.size(), c.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(same_bits(a[i], c[i])) << "result " << i;
}

}  // namespace
}  // namespace eagle2::train

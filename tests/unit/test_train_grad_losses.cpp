// Every backward pass of src/train's losses (cross-entropy, soft cross-entropy, smooth L1, and
// the fused lm_head losses) against central finite differences of a double-precision reference
// (support/grad_check.h, support/train_references.h), on small random shapes, with masked rows;
// also each loss value against its reference.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "core/dtype.h"
#include "core/error.h"
#include "support/grad_check.h"
#include "support/train_references.h"
#include "train/cross_entropy.h"
#include "train/linear.h"
#include "train/lm_head_loss.h"
#include "train/smooth_l1.h"

namespace eagle2::train {
namespace {

using namespace test::grad_check;

// ---- gradient checks ------------------------------------------------------------------------

TEST(TrainGrad, CrossEntropyWithMask) {
  std::mt19937 g(8);
  ThreadPool pool(2);
  const int64_t M = 6, V = 9;
  const std::vector<int32_t> tg = {2, -100, 8, 0, 4, 99};  // unmasked rows may hold anything
  const std::vector<uint8_t> mask = {1, 0, 1, 1, 1, 0};
  Vec logits = rnd(M * V, g, -3, 3), probs(M * V);
  const double loss =
      cross_entropy_forward(probs.data(), logits.data(), tg.data(), mask.data(), M, V, pool);
  DVec ld = to_d(logits);
  EXPECT_NEAR(loss, ce_ref(ld, tg, mask, M, V), 1e-6);
  Vec dl(M * V, 0.0f);
  const float dloss = 0.7f;
  cross_entropy_backward(dl.data(), probs.data(), tg.data(), mask.data(), M, V, dloss, pool);
  expect_grad(dl, numeric_grad(ld, [&] { return dloss * ce_ref(ld, tg, mask, M, V); }),
              "cross-entropy dlogits");
  const std::vector<uint8_t> none(M, 0);
  EXPECT_EQ(0.0,
            cross_entropy_forward(probs.data(), logits.data(), tg.data(), none.data(), M, V, pool));
  const std::vector<uint8_t> all(M, 1);
  EXPECT_THROW(
      cross_entropy_forward(probs.data(), logits.data(), tg.data(), all.data(), M, V, pool), Error);
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
  const double loss =
      soft_cross_entropy_forward(probs.data(), s.data(), teacher.data(), mask.data(), M, V, pool);
  DVec sd = to_d(s);
  EXPECT_NEAR(loss, soft_ce_ref(sd, teacher_f, mask, M, V), 1e-6);
  Vec ds(M * V, 0.0f);
  soft_cross_entropy_backward(ds.data(), probs.data(), teacher.data(), mask.data(), M, V, 1.0f,
                              pool);
  expect_grad(ds, numeric_grad(sd, [&] { return soft_ce_ref(sd, teacher_f, mask, M, V); }),
              "soft CE dlogits");
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
  const double loss = lm_head_cross_entropy(x.data(), tg.data(), mask.data(), M, Wm, nullptr,
                                            dx.data(), dW.data(), dloss, pool, 4);
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
  lm_head_cross_entropy(x.data(), tg.data(), mask.data(), M, Wm, &WT.m, dx2.data(), nullptr, dloss,
                        pool, 4);
  EXPECT_TRUE(same_bits(dx, dx2));
  EXPECT_EQ(loss, lm_head_cross_entropy(x.data(), tg.data(), mask.data(), M, Wm, nullptr, nullptr,
                                        nullptr, 0.0f, pool, 4));
}

TEST(TrainGrad, LmHeadSoftCrossEntropyFused) {
  std::mt19937 g(12);
  ThreadPool pool(2);
  const int64_t M = 6, d = 8, V = 13;
  const std::vector<uint8_t> mask = {1, 0, 1, 1, 1, 1};
  Vec x = rnd(M * d, g, -2, 2), tx = rnd(M * d, g, -2, 2), W = rnd(V * d, g);
  const Matrix Wm{DType::F32, V, d, W.data()};
  Vec dx(M * d, 0.0f), dW(V * d, 0.0f);
  const double loss = lm_head_soft_cross_entropy(x.data(), tx.data(), mask.data(), M, Wm, nullptr,
                                                 dx.data(), dW.data(), 0.1f, pool, 4);
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

// Distilled for a serving temperature T: both distributions are softmax(logits / T), and the
// gradient goes through the division (a missing 1/T fails the finite differences).
TEST(TrainGrad, LmHeadSoftCrossEntropyAtAServingTemperature) {
  std::mt19937 g(13);
  ThreadPool pool(2);
  const int64_t M = 5, d = 8, V = 11;
  const std::vector<uint8_t> mask = {1, 1, 0, 1, 1};
  Vec x = rnd(M * d, g, -2, 2), tx = rnd(M * d, g, -2, 2), W = rnd(V * d, g);
  const Matrix Wm{DType::F32, V, d, W.data()};
  for (const float T : {0.7f, 1.6f}) {
    Vec dx(M * d, 0.0f), dW(V * d, 0.0f);
    const double loss = lm_head_soft_cross_entropy(x.data(), tx.data(), mask.data(), M, Wm, nullptr,
                                                   dx.data(), dW.data(), 0.5f, pool, 2, T);
    DVec xd = to_d(x), Wdd = to_d(W);
    const auto scaled = [&](DVec v) {
      for (double& e : v) e /= T;
      return v;
    };
    const DVec teacher = softmax_ref(scaled(linear_ref(to_d(tx), Wdd, nullptr, M, V, d)), M, V);
    auto L = [&] {
      return soft_ce_ref(scaled(linear_ref(xd, Wdd, nullptr, M, V, d)), teacher, mask, M, V);
    };
    EXPECT_NEAR(loss, L(), 1e-5) << "T " << T;
    auto Ls = [&] { return 0.5 * L(); };
    expect_grad(dx, numeric_grad(xd, Ls), "soft CE at T dx");
    expect_grad(dW, numeric_grad(Wdd, Ls), "soft CE at T dW");
  }
  // T = 1 is EAGLE's loss, bit for bit.
  EXPECT_EQ(lm_head_soft_cross_entropy(x.data(), tx.data(), mask.data(), M, Wm, nullptr, nullptr,
                                       nullptr, 0.0f, pool, 2, 1.0f),
            lm_head_soft_cross_entropy(x.data(), tx.data(), mask.data(), M, Wm, nullptr, nullptr,
                                       nullptr, 0.0f, pool, 2));
  EXPECT_THROW(lm_head_soft_cross_entropy(x.data(), tx.data(), mask.data(), M, Wm, nullptr, nullptr,
                                          nullptr, 0.0f, pool, 2, 0.0f),
               Error);
}

}  // namespace
}  // namespace eagle2::train

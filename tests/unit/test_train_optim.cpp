// AdamW against hand-computed updates, gradient clipping, the learning-rate schedule, and
// checkpoints: a toy model trained in one go and trained with a save / fresh-process-style load in
// the middle must end with bit-identical weights and moments.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <numbers>
#include <vector>

#include "core/error.h"
#include "support/shared_data.h"
#include "train/checkpoint.h"
#include "train/embedding.h"
#include "train/linear.h"
#include "train/lm_head_loss.h"
#include "train/optimizer.h"
#include "train/rmsnorm.h"
#include "train/swiglu.h"
#include "train/train_rng.h"

namespace eagle2::train {
namespace {

TEST(TrainOptim, AdamWMatchesHandComputedSteps) {
  ThreadPool pool(2);
  Parameter w("w", {3}), b("b", {2}, /*decay=*/false);
  w.value = {0.5f, -1.0f, 2.0f};
  b.value = {0.25f, -0.75f};
  Parameter* ps[] = {&w, &b};
  const AdamWConfig cfg{0.9f, 0.95f, 1e-8f, 0.1f};
  AdamW opt(cfg, ps);
  const std::vector<std::vector<float>> gw = {{0.1f, -0.2f, 0.0f}, {0.3f, 0.05f, -1.0f}};
  const std::vector<std::vector<float>> gb = {{1.0f, -2.0f}, {-0.5f, 0.5f}};
  const float lrs[] = {0.01f, 0.005f};

  // The reference in double, straight from the formulas.
  auto reference = [&](std::vector<double> p, const std::vector<std::vector<float>>& g,
                       bool decay) {
    std::vector<double> m(p.size(), 0.0), v(p.size(), 0.0);
    for (int t = 1; t <= 2; ++t) {
      const double lr = lrs[t - 1];
      for (size_t i = 0; i < p.size(); ++i) {
        if (decay) p[i] *= 1.0 - lr * 0.1;
        m[i] = 0.9 * m[i] + 0.1 * g[t - 1][i];
        v[i] = 0.95 * v[i] + 0.05 * g[t - 1][i] * g[t - 1][i];
        const double mhat = m[i] / (1 - std::pow(0.9, t)), vhat = v[i] / (1 - std::pow(0.95, t));
        p[i] -= lr * mhat / (std::sqrt(vhat) + 1e-8);
      }
    }
    return p;
  };
  for (int t = 0; t < 2; ++t) {
    w.grad = gw[t];
    b.grad = gb[t];
    opt.step(lrs[t], pool);
  }
  EXPECT_EQ(opt.step_count(), 2);
  const auto rw = reference({0.5, -1.0, 2.0}, gw, true);
  const auto rb = reference({0.25, -0.75}, gb, false);
  for (size_t i = 0; i < 3; ++i) EXPECT_NEAR(w.value[i], rw[i], 1e-6) << i;
  for (size_t i = 0; i < 2; ++i) EXPECT_NEAR(b.value[i], rb[i], 1e-6) << i;
  // w[2] by hand: its gradient is 0 then -1, so step 1 only decays it and step 2 starts Adam's
  // moments at m = -0.1, v = 0.05 (lr values as the float the optimizer received).
  const double lr1 = lrs[0], lr2 = lrs[1];
  EXPECT_NEAR(rw[2],
              2.0 * (1 - 0.1 * lr1) * (1 - 0.1 * lr2) -
                  lr2 * (-0.1 / 0.19) / (std::sqrt(0.05 / 0.0975) + 1e-8),
              1e-12);
}

TEST(TrainOptim, ClipGradValue) {
  ThreadPool pool(2);
  Parameter a("a", {5});
  a.grad = {-3.0f, -0.5f, 0.0f, 0.49f, 7.0f};
  Parameter* ps[] = {&a};
  clip_grad_value(ps, 0.5f, pool);
  EXPECT_EQ(a.grad, (std::vector<float>{-0.5f, -0.5f, 0.0f, 0.49f, 0.5f}));
}

TEST(TrainOptim, ClipGradNormIsGlobal) {
  ThreadPool pool(2);
  Parameter a("a", {2}), b("b", {1});
  a.grad = {3.0f, 4.0f};
  b.grad = {12.0f};
  Parameter* ps[] = {&a, &b};
  EXPECT_DOUBLE_EQ(clip_grad_norm(ps, 100.0, pool), 13.0);  // under the limit: untouched
  EXPECT_EQ(a.grad[0], 3.0f);
  EXPECT_DOUBLE_EQ(clip_grad_norm(ps, 6.5, pool), 13.0);
  const float s = static_cast<float>(6.5 / (13.0 + 1e-6));
  EXPECT_EQ(a.grad, (std::vector<float>{3.0f * s, 4.0f * s}));
  EXPECT_EQ(b.grad[0], 12.0f * s);
  EXPECT_NEAR(clip_grad_norm(ps, 100.0, pool), 6.5, 1e-5);
}

TEST(TrainOptim, ClipGradNormDoesNotDependOnThreadCount) {
  ThreadPool p1(1), p2(2);
  TrainRng rng(5);
  Parameter a("a", {100000});
  for (auto& g : a.grad) g = rng.uniform(-1.0f, 1.0f);
  Parameter c = a;
  Parameter* pa[] = {&a};
  Parameter* pc[] = {&c};
  EXPECT_EQ(clip_grad_norm(pa, 1.0, p1), clip_grad_norm(pc, 1.0, p2));
  EXPECT_EQ(0, std::memcmp(a.grad.data(), c.grad.data(), a.grad.size() * sizeof(float)));
}

TEST(TrainOptim, LearningRateSchedule) {
  LrSchedule s{1e-3, 10, 110, LrDecay::Linear, 1e-4};
  EXPECT_DOUBLE_EQ(s.at(0), 1e-4);  // warmup: (step + 1) / warmup of peak
  EXPECT_DOUBLE_EQ(s.at(4), 5e-4);
  EXPECT_DOUBLE_EQ(s.at(9), 1e-3);
  EXPECT_DOUBLE_EQ(s.at(10), 1e-3);  // decay starts at peak
  EXPECT_DOUBLE_EQ(s.at(60), 1e-4 + 0.9e-3 * 0.5);
  EXPECT_DOUBLE_EQ(s.at(85), 1e-4 + 0.9e-3 * 0.25);
  EXPECT_DOUBLE_EQ(s.at(110), 1e-4);
  EXPECT_DOUBLE_EQ(s.at(1000), 1e-4);
  s.decay = LrDecay::Cosine;
  EXPECT_DOUBLE_EQ(s.at(10), 1e-3);
  EXPECT_NEAR(s.at(35), 1e-4 + 0.9e-3 * 0.5 * (1 + std::cos(std::numbers::pi / 4)), 1e-15);
  EXPECT_NEAR(s.at(60), 1e-4 + 0.9e-3 * 0.5, 1e-15);
  EXPECT_DOUBLE_EQ(s.at(110), 1e-4);
  s.decay = LrDecay::Constant;
  EXPECT_DOUBLE_EQ(s.at(500), 1e-3);
  // EAGLE's recipe shape: no floor.
  const LrSchedule e{3e-5, 2000, 10000, LrDecay::Linear, 0.0};
  EXPECT_DOUBLE_EQ(e.at(1999), 3e-5);
  EXPECT_DOUBLE_EQ(e.at(6000), 1.5e-5);
}

// A toy language model assembled from the train/ ops: embedding (+ noise from the run's random
// stream) -> rmsnorm -> SwiGLU MLP with residual -> lm_head cross-entropy.
struct ToyModel {
  static constexpr int64_t V = 12, d = 8, I = 16, M = 10;
  Parameter embed{"embed", {V, d}}, norm{"norm", {d}, false}, gate{"gate", {I, d}},
      up{"up", {I, d}}, down{"down", {d, I}}, bias{"down_bias", {d}, false}, head{"head", {V, d}};
  std::vector<Parameter*> list{&embed, &norm, &gate, &up, &down, &bias, &head};

  explicit ToyModel(uint64_t seed) {
    TrainRng r(seed);
    for (Parameter* p : list)
      for (auto& v : p->value) v = r.uniform(-0.5f, 0.5f);
    for (auto& v : norm.value) v = 1.0f;
  }

  // One optimizer step on a batch drawn from rng; returns the loss.
  double step(TrainRng& rng, AdamW& opt, const LrSchedule& sched, int64_t t, ThreadPool& pool) {
    std::vector<int32_t> ids(M + 1);
    for (auto& i : ids) i = static_cast<int32_t>(rng.next_u64() % 6);  // a small sub-vocabulary
    std::vector<float> x(M * d), xn(M * d), rstd(M), g(M * I), u(M * I), h(M * I), y(M * d);
    embedding_forward(x.data(), ids.data(), M, embed.matrix(), pool);
    for (auto& e : x) e += rng.uniform(-0.01f, 0.01f);
    rmsnorm_forward(xn.data(), rstd.data(), x.data(), norm.value.data(), 1e-6f, M, d, pool);
    linear_forward(g.data(), xn.data(), M, gate.matrix(), nullptr, pool);
    linear_forward(u.data(), xn.data(), M, up.matrix(), nullptr, pool);
    swiglu_forward(h.data(), g.data(), u.data(), M * I, pool);
    linear_forward(y.data(), h.data(), M, down.matrix(), bias.value.data(), pool);
    for (int64_t i = 0; i < M * d; ++i) y[i] += x[i];

    zero_grads(list);
    std::vector<float> dy(M * d, 0.0f), dh(M * I, 0.0f), dg(M * I, 0.0f), du(M * I, 0.0f),
        dxn(M * d, 0.0f);
    const double loss = lm_head_cross_entropy(y.data(), ids.data() + 1, nullptr, M, head.matrix(),
                                              nullptr, dy.data(), head.grad.data(), 1.0f, pool);
    linear_backward(dh.data(), down.grad.data(), bias.grad.data(), dy.data(), h.data(), M,
                    down.matrix(), pool);
    swiglu_backward(dg.data(), du.data(), dh.data(), g.data(), u.data(), M * I, pool);
    linear_backward(dxn.data(), gate.grad.data(), nullptr, dg.data(), xn.data(), M, gate.matrix(),
                    pool);
    linear_backward(dxn.data(), up.grad.data(), nullptr, du.data(), xn.data(), M, up.matrix(),
                    pool);
    std::vector<float> dx = dy;  // the residual path
    rmsnorm_backward(dx.data(), norm.grad.data(), dxn.data(), x.data(), norm.value.data(),
                     rstd.data(), M, d, pool);
    embedding_backward(embed.grad.data(), dx.data(), ids.data(), M, V, d, pool);
    clip_grad_norm(list, 1.0, pool);
    opt.step(static_cast<float>(sched.at(t)), pool);
    return loss;
  }
};

const AdamWConfig kToyAdam{0.9f, 0.95f, 1e-8f, 0.01f};
const LrSchedule kToySched{3e-2, 3, 40, LrDecay::Cosine, 1e-3};

TEST(TrainOptim, ToyModelLearns) {
  ThreadPool pool(2);
  ToyModel model(1);
  AdamW opt(kToyAdam, model.list);
  TrainRng rng(7);
  double first = 0, last = 0;
  for (int64_t t = 0; t < 40; ++t) {
    const double l = model.step(rng, opt, kToySched, t, pool);
    if (t < 5) first += l;
    if (t >= 35) last += l;
  }
  // Six equally likely tokens: the best possible loss is log 6 = 1.79 from log 12 = 2.48 upward.
  EXPECT_LT(last / 5, first / 5 - 0.3) << "first " << first / 5 << " last " << last / 5;
}

TEST(TrainOptim, CheckpointResumesBitExactly) {
  ThreadPool pool(2);
  const std::string path = test::temp_dir("train_ckpt") + "/ckpt.safetensors";
  const int64_t total = 8, cut = 3;

  ToyModel straight(1);
  AdamW opt_s(kToyAdam, straight.list);
  TrainRng rng_s(7);
  for (int64_t t = 0; t < total; ++t) straight.step(rng_s, opt_s, kToySched, t, pool);

  {
    ToyModel first(1);
    AdamW opt(kToyAdam, first.list);
    TrainRng rng(7);
    for (int64_t t = 0; t < cut; ++t) first.step(rng, opt, kToySched, t, pool);
    save_checkpoint(path, opt, TrainState{cut, rng.state(), {{"note", "toy"}}});
  }
  ToyModel resumed(99);  // different initial values: everything must come from the file
  AdamW opt_r(kToyAdam, resumed.list);
  const TrainState st = load_checkpoint(path, opt_r);
  EXPECT_EQ(st.step, cut);
  EXPECT_EQ(opt_r.step_count(), cut);
  EXPECT_EQ(st.extra.at("note"), "toy");
  TrainRng rng_r(0);
  rng_r.set_state(st.rng_state);
  for (int64_t t = st.step; t < total; ++t) resumed.step(rng_r, opt_r, kToySched, t, pool);

  EXPECT_EQ(rng_r.state(), rng_s.state());
  EXPECT_EQ(opt_r.step_count(), opt_s.step_count());
  for (size_t i = 0; i < straight.list.size(); ++i) {
    const auto& a = straight.list[i]->value;
    const auto& b = resumed.list[i]->value;
    EXPECT_EQ(0, std::memcmp(a.data(), b.data(), a.size() * sizeof(float)))
        << straight.list[i]->name;
    EXPECT_EQ(0, std::memcmp(opt_s.m(i).data(), opt_r.m(i).data(), a.size() * sizeof(float)));
    EXPECT_EQ(0, std::memcmp(opt_s.v(i).data(), opt_r.v(i).data(), a.size() * sizeof(float)));
  }
}

TEST(TrainOptim, CheckpointRejectsAMismatchedModel) {
  ThreadPool pool(1);
  const std::string path = test::temp_dir("train_ckpt_bad") + "/ckpt.safetensors";
  Parameter a("a", {2, 3}), b("b", {4});
  Parameter* ps[] = {&a, &b};
  AdamW opt(AdamWConfig{}, ps);
  save_checkpoint(path, opt, TrainState{});

  Parameter a2("a", {3, 2});
  Parameter* wrong_shape[] = {&a2, &b};
  AdamW o1(AdamWConfig{}, wrong_shape);
  EXPECT_THROW(load_checkpoint(path, o1), Error);

  Parameter* missing[] = {&a};
  AdamW o2(AdamWConfig{}, missing);
  EXPECT_THROW(load_checkpoint(path, o2), Error);  // 'b' is unexpected

  Parameter c("c", {1});
  Parameter* extra[] = {&a, &b, &c};
  AdamW o3(AdamWConfig{}, extra);
  EXPECT_THROW(load_checkpoint(path, o3), Error);  // 'c' not found
}

}  // namespace
}  // namespace eagle2::train

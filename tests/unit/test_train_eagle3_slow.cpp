// EAGLE-3 training end to end (train/eagle3_trainer.h): self-distilled data from a tiny random
// target, ~30 steps of training-time test, the loss goes down and the export loads as an EAGLE-3
// head. Also (disabled, run by hand) one training step's time at the bundled model's shapes.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <random>
#include <vector>

#include "draft/eagle_head.h"
#include "support/cli.h"
#include "support/random_models.h"
#include "support/shared_data.h"
#include "train/eagle3_trainer.h"

namespace eagle2::train {
namespace {

TEST(Eagle3TrainSlow, SelfDistilledTrainingLowersTheLossAndTheExportLoads) {
  LlamaConfig tc = test::tiny_config();
  tc.num_layers = 8;
  const auto target = test::load_random_model("e3-slow", tc);
  ThreadPool pool(2);
  std::vector<std::vector<int32_t>> prompts;
  std::mt19937 rng(3);
  for (int p = 0; p < 6; ++p) {
    std::vector<int32_t> t = {1};
    for (int i = 0; i < 6; ++i) t.push_back(static_cast<int32_t>(3 + rng() % 90));
    prompts.push_back(t);
  }
  SelfDistillOptions so;
  so.max_new_tokens = 40;
  so.feature_layers = eagle3_default_layers(*target);
  const std::vector<HeadSequence> data = self_distill(*target, prompts, so, pool);
  ASSERT_EQ(data.size(), 12u);
  // The whole vocabulary as the draft one: every teacher position counts.
  const Eagle3DraftVocab v = eagle3_draft_vocab(data, tc.vocab_size, tc.vocab_size);
  Eagle3Trainer head(*target, v.ids, Eagle3Init{});
  Eagle3TrainOptions o;
  o.steps = std::max<int64_t>(10, static_cast<int64_t>(30 * test::test_scale()));
  o.batch = 4;
  o.seq_len = 16;
  o.ttt_steps = 3;
  o.warmup = 3;
  o.lr = 3e-3;
  const Eagle3TrainResult r = train_eagle3(head, data, o, pool);
  ASSERT_EQ(r.first.loss.size(), 3u);
  EXPECT_LT(r.last.total, r.first.total);
  for (size_t s = 0; s < 3; ++s) EXPECT_LT(r.last.loss[s], r.first.loss[s]) << "step " << s;
  const Eagle3Agreement a = evaluate_eagle3(head, data, 32, 3, pool);
  EXPECT_GT(a.positions[0], 0);
  const std::string dir = test::temp_dir("e3-slow-export");
  head.save(dir, DType::BF16);
  const auto loaded = EagleHead::load(dir, *target);
  EXPECT_EQ(loaded->kind(), EagleHead::Kind::Eagle3);
  EXPECT_EQ(loaded->draft_vocab_size(), tc.vocab_size);
}

// One optimizer step at the bundled head's shapes (batch 4 x 256 positions, MLP 256, draft
// vocabulary 1024) for S = 3..7 unrolled steps, wall and CPU time (all threads): what the bundled
// head's training budget is planned with. The sequences are 513 tokens long, so that every window
// runs all its 256 rows (windows cut by a sequence's end run fewer, Eagle3Batch::lengths; real
// data has many, so a real run's mean step is cheaper). A first S = 3 run warms up (allocations,
// page faults). Timing only; run with --gtest_also_run_disabled_tests.
TEST(Eagle3TrainSlow, DISABLED_StepTimeAtTheBundledShapes) {
  const auto target = LlamaModel::load(test::kBundledModel);
  const LlamaConfig& tc = target->config();
  ThreadPool pool(2);
  std::mt19937 rng(1);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<HeadSequence> data(8);
  for (HeadSequence& s : data) {
    for (int i = 0; i < 513; ++i) s.tokens.push_back(static_cast<int32_t>(rng() % tc.vocab_size));
    s.features.resize(513 * static_cast<size_t>(tc.hidden_size));
    s.aux.resize(3 * s.features.size());
    for (float& f : s.features) f = normal(rng);
    for (float& f : s.aux) f = normal(rng);
  }
  const Eagle3DraftVocab v = eagle3_draft_vocab(data, tc.vocab_size, 1024);
  constexpr int64_t kSteps = 6;
  Eagle3Init init;
  init.intermediate = 256;
  auto run = [&](int64_t S) {
    Eagle3Trainer head(*target, v.ids, init);
    Eagle3TrainOptions o;
    o.steps = kSteps;
    o.batch = 4;
    o.seq_len = 256;
    o.ttt_steps = S;
    return train_eagle3(head, data, o, pool).seconds;
  };
  run(3);  // warm-up, not reported
  for (int64_t S : {3, 4, 5, 6, 7}) {
    const std::clock_t cpu0 = std::clock();
    const double wall = run(S);
    const double cpu = static_cast<double>(std::clock() - cpu0) / CLOCKS_PER_SEC;
    std::printf("S = %lld: %.2f s wall, %.2f s CPU per step (mean of %lld, 2 threads)\n",
                static_cast<long long>(S), wall / kSteps, cpu / kSteps,
                static_cast<long long>(kSteps));
  }
}

}  // namespace
}  // namespace eagle2::train

// EAGLE head training (train/eagle_head_trainer.h, eagle2 train-head): the training forward is the
// inference head's forward, the full loss's gradients match finite differences, and a short seeded
// run on the stories model gives a head that drafts well (tau) on held-out story openings.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "bench/prompt_set.h"
#include "core/error.h"
#include "draft/eagle_head.h"
#include "io/safetensors.h"
#include "model/llama_model.h"
#include "support/cli.h"
#include "support/random_models.h"
#include "support/shared_data.h"
#include "tokenizer/tokenizer.h"
#include "train/eagle_head_trainer.h"
#include "train/head_data.h"
#include "train/lm_head_loss.h"

namespace eagle2 {
namespace {

using train::EagleHeadTrainer;
using train::HeadBatch;
using train::HeadSequence;

HeadSequence random_sequence(int64_t T, int64_t d, int64_t V, uint32_t seed, float scale = 1.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-scale, scale);
  HeadSequence s;
  for (int64_t t = 0; t < T; ++t) s.tokens.push_back(static_cast<int32_t>(rng() % V));
  s.features.resize(static_cast<size_t>(T * d));
  for (float& f : s.features) f = u(rng);
  return s;
}

// Every parameter random (biases and the norm weight too, which init leaves at 0 / 1).
void randomize(EagleHeadTrainer& head, uint32_t seed, float scale) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-scale, scale);
  for (train::Parameter* p : head.params())
    for (float& v : p->value)
      v = p->shape.size() == 1 && p->name.find("norm") != std::string::npos ? 1.0f + u(rng)
                                                                            : u(rng);
}

TEST(TrainHead, TrainingForwardEqualsExportedInferenceHead) {
  auto target = test::load_random_model("train-head-fwd", test::tiny_config());
  ThreadPool pool(2);
  EagleHeadTrainer head(*target, train::HeadInit{3, false});
  randomize(head, 11, 0.2f);
  const std::string dir = test::temp_dir("train-head-export");
  head.save(dir);
  auto loaded = EagleHead::load(dir, *target);
  EXPECT_TRUE(loaded->has_fc_bias());
  EXPECT_EQ(loaded->config().num_layers, 1);

  const int64_t d = target->config().hidden_size, V = target->config().vocab_size, T = 23;
  const HeadSequence s = random_sequence(T + 1, d, V, 5, 2.0f);
  const HeadBatch b = train::make_batch({&s, &s}, {0, 7}, T, d);  // second slot: padded tail
  head.step(b, b.features.data(), false, pool);
  const std::vector<float> pred = head.prediction();

  KvCache kv = loaded->make_cache(T + 1);
  std::vector<float> out(static_cast<size_t>(T * d));
  loaded->forward_causal(s.features.data(), std::span(s.tokens).subspan(1, T), kv, out.data(),
                         pool);
  double worst = 0;
  for (size_t i = 0; i < out.size(); ++i)
    worst = std::max(worst, std::abs(static_cast<double>(out[i]) - pred[i]) /
                                std::max(1.0, std::abs(static_cast<double>(out[i]))));
  EXPECT_LT(worst, 1e-4);
  // The padded slot's real rows (positions 7.., attending only to the window) do not see padding.
  EXPECT_EQ(b.counted(), T + (T - 7));

  // A bf16 export: every head tensor in bf16 (the embedding copy keeps the target's dtype), and
  // the same predictions up to bf16 rounding of the weights and activations.
  const std::string dir16 = test::temp_dir("train-head-export-bf16");
  head.save(dir16, DType::BF16);
  const TensorStore st = TensorStore::open_dir(dir16);
  for (const train::Parameter* p : head.params())
    EXPECT_EQ(st.get(p->name).dtype, DType::BF16) << p->name;
  auto loaded16 = EagleHead::load(dir16, *target);
  KvCache kv16 = loaded16->make_cache(T + 1);
  std::vector<float> out16(out.size());
  loaded16->forward_causal(s.features.data(), std::span(s.tokens).subspan(1, T), kv16, out16.data(),
                           pool);
  double diff = 0, scale = 0;
  for (size_t i = 0; i < out.size(); ++i) {
    diff += std::abs(static_cast<double>(out16[i]) - out[i]);
    scale += std::abs(static_cast<double>(out[i]));
  }
  EXPECT_GT(diff, 0.0);           // really rounded
  EXPECT_LT(diff, 0.05 * scale);  // but still the same head
  EXPECT_THROW(head.save(dir16, DType::F16), eagle2::Error);
}

// --ce-temperature: the step's distribution loss is lm_head_soft_cross_entropy at that temperature
// (whose gradient test_train_grad_losses checks) of the head's prediction against the target's
// next features, weighted by ce_weight in the total.
TEST(TrainHead, TheDistributionLossIsTakenAtTheServingTemperature) {
  auto target = test::load_random_model("train-head-fwd", test::tiny_config());
  ThreadPool pool(1);
  EagleHeadTrainer head(*target, train::HeadInit{3, false});
  randomize(head, 12, 0.3f);
  const int64_t d = target->config().hidden_size, V = target->config().vocab_size, T = 9;
  const HeadSequence s = random_sequence(T + 1, d, V, 6, 2.0f);
  const HeadBatch b = train::make_batch({&s}, {0}, T, d);
  const train::HeadLoss at1 = head.step(b, b.features.data(), false, pool, 0.1f, 1.0f);
  const train::HeadLoss at06 = head.step(b, b.features.data(), false, pool, 0.3f, 0.6f);
  const double want = train::lm_head_soft_cross_entropy(
      head.prediction().data(), b.targets.data(), b.mask.data(), b.rows(), target->lm_head(),
      nullptr, nullptr, nullptr, 0.0f, pool, 64, 0.6f);
  EXPECT_NEAR(at06.soft_ce, want, 1e-9);
  EXPECT_NE(at06.soft_ce, at1.soft_ce);
  EXPECT_DOUBLE_EQ(at06.smooth_l1, at1.smooth_l1);
  EXPECT_NEAR(at06.total, at06.smooth_l1 + 0.3 * at06.soft_ce, 1e-6);
}

double full_loss(EagleHeadTrainer& head, const HeadBatch& b, ThreadPool& pool) {
  return head.step(b, b.features.data(), false, pool).total;
}

TEST(TrainHead, LossGradientsMatchFiniteDifferences) {
  LlamaConfig cfg = test::tiny_config();
  cfg.hidden_size = 8;
  cfg.num_heads = 2;
  cfg.num_kv_heads = 1;
  cfg.head_dim = 4;
  cfg.intermediate_size = 12;
  cfg.vocab_size = 16;
  cfg.num_layers = 1;
  auto target = test::load_random_model("train-head-grad", cfg, DType::F32, 9, 0.5f);
  ThreadPool pool(1);
  EagleHeadTrainer head(*target, train::HeadInit{4, false});
  randomize(head, 13, 0.5f);
  const int64_t d = cfg.hidden_size, T = 6;
  const HeadSequence s1 = random_sequence(T + 1, d, cfg.vocab_size, 21, 1.5f);
  const HeadSequence s2 = random_sequence(T - 2, d, cfg.vocab_size, 22, 1.5f);
  const HeadBatch b = train::make_batch({&s1, &s2}, {0, 0}, T, d);

  train::zero_grads(head.params());
  head.step(b, b.features.data(), true, pool);
  std::mt19937 rng(3);
  int checked = 0;
  double worst = 0;  // |analytic - numeric| / max(|numeric|, gscale)
  for (train::Parameter* p : head.params()) {
    SCOPED_TRACE(p->name);
    double gscale = 0;
    for (float g : p->grad) gscale = std::max(gscale, std::abs(static_cast<double>(g)));
    EXPECT_GT(gscale, 0) << "no gradient reaches " << p->name;
    for (int k = 0; k < 4; ++k) {
      const size_t i = rng() % p->value.size();
      const float orig = p->value[i];
      const float h = 1e-2f;
      p->value[i] = orig + h;
      const double up = full_loss(head, b, pool);
      p->value[i] = orig - h;
      const double down = full_loss(head, b, pool);
      p->value[i] = orig;
      const double numeric = (up - down) / (2.0 * h);
      EXPECT_NEAR(p->grad[i], numeric, 0.03 * std::abs(numeric) + 3e-3 * gscale + 1e-6)
          << "element " << i;
      worst = std::max(worst, std::abs(p->grad[i] - numeric) / std::max(std::abs(numeric), gscale));
      ++checked;
    }
  }
  EXPECT_EQ(head.params().size(), 10u);  // fc weight and bias, 8 layer tensors (no input norm)
  EXPECT_EQ(checked, 4 * 10);
  std::printf("worst gradient error %.2e of the gradient scale\n", worst);
}

using test::CliRun;
using test::run_cli;

double number_after(const std::string& text, const std::string& key) {
  const size_t at = text.find(key);
  if (at == std::string::npos) return -1;
  return std::atof(text.c_str() + at + key.size());
}

TEST(TrainHead, SeededRunOnStoriesBeatsUntrainedHead) {
  EAGLE2_SHARED_FILE(model_cfg, "data/models/stories260K-hf/config.json");
  EAGLE2_SHARED_FILE(corpus, "data/corpora/tinystories_valid_head.txt");
  const std::string model_dir = model_cfg.substr(0, model_cfg.rfind('/'));
  const bool full = test::test_scale() >= 1.0;
  // Sanitizer pass: the same code path on a sliver of the work.
  const int steps = full ? 400 : 12, prompts = full ? 200 : 12, eval = full ? 20 : 3;
  const int max_new = full ? 160 : 24, tau_tokens = full ? 96 : 16;
  const std::string dir = test::temp_dir("train-head-stories");
  const std::string args = "train-head -m " + model_dir + " --prompts " + corpus + " --limit " +
                           std::to_string(prompts) + " --eval-prompts " + corpus + " --eval-last " +
                           std::to_string(eval) + " --max-new-tokens " + std::to_string(max_new) +
                           " --tau-tokens " + std::to_string(tau_tokens) + " --steps " +
                           std::to_string(steps) + " --seed 1 -t 2 -o " + dir + "/trained";
  const auto t0 = std::chrono::steady_clock::now();
  const CliRun run = run_cli(args, test::kLongCliTimeoutSeconds);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_EQ(run.code, 0) << run.out;
  const double top1 = number_after(run.out, "top-1 ");
  const double top5 = number_after(run.out, "top-5 ");
  const double cli_tau = number_after(run.out, "new tokens): ");
  ASSERT_GE(top1, 0) << run.out;
  ASSERT_GE(cli_tau, 0) << run.out;

  // The exported head, loaded as the decoder loads it, against an untrained head of the same shape
  // (the trainer's initial weights) on the same held-out openings.
  auto target = LlamaModel::load(model_dir);
  auto tok = Tokenizer::load(model_dir + "/tokenizer.model");
  ThreadPool pool(2);
  EagleHeadTrainer untrained(*target, train::HeadInit{1, false});  // the CLI's start
  untrained.save(dir + "/untrained");
  PromptSetOptions po;
  po.opening_words = 16;
  po.limit = static_cast<size_t>(eval);
  po.from_end = true;
  std::vector<std::vector<int32_t>> held;
  for (const Prompt& p : load_prompt_set(corpus, po)) held.push_back(tok->encode(p.text, true));
  auto trained_head = EagleHead::load(dir + "/trained", *target);
  auto untrained_head = EagleHead::load(dir + "/untrained", *target);
  const double tau = train::measure_tau(*target, *trained_head, held, tau_tokens, pool);
  const double tau0 = train::measure_tau(*target, *untrained_head, held, tau_tokens, pool);
  std::printf(
      "train-head: %.0f s, held-out top-1 %.1f%% top-5 %.1f%%, tau %.2f (CLI %.2f), "
      "untrained tau %.2f\n",
      seconds, top1, top5, tau, cli_tau, tau0);
  EXPECT_NEAR(tau, cli_tau, 0.006);  // the CLI prints two decimals
  EXPECT_GE(tau, 1.0);
  EXPECT_GE(tau0, 1.0);
  if (full) {
    EXPECT_GE(tau, 1.5);
    EXPECT_GT(tau, tau0);
    EXPECT_GT(top1, 25.0);
  }
}

TEST(TrainHead, CliTrainsOnGivenText) {
  EAGLE2_SHARED_FILE(model_cfg, "data/models/stories260K-hf/config.json");
  EAGLE2_SHARED_FILE(corpus, "data/corpora/tinystories_valid_head.txt");
  const std::string model_dir = model_cfg.substr(0, model_cfg.rfind('/'));
  const std::string dir = test::temp_dir("train-head-text");
  const CliRun run = run_cli("train-head -m " + model_dir + " --text " + corpus +
                             " --limit 24 --eval-count 4 --steps 6 --batch 4 --seq-len 64 "
                             "--tau-tokens 16 --seed 2 -t 2 -o " +
                             dir + "/head");
  ASSERT_EQ(run.code, 0) << run.out;
  EXPECT_NE(run.out.find("given text"), std::string::npos) << run.out;
  EXPECT_GE(number_after(run.out, "top-1 "), 0) << run.out;
  EXPECT_GE(number_after(run.out, "new tokens): "), 1.0) << run.out;
  auto target = LlamaModel::load(model_dir);
  EXPECT_NO_THROW(EagleHead::load(dir + "/head", *target));
}

TEST(TrainHead, CliErrors) {
  const CliRun none = run_cli("train-head -m /nonexistent -o /tmp/x");
  EXPECT_NE(none.code, 0);
  EXPECT_NE(none.out.find("--prompts"), std::string::npos) << none.out;
  const CliRun both = run_cli("train-head -m /nonexistent --prompts a --text b -o /tmp/x");
  EXPECT_NE(both.code, 0);
  EXPECT_NE(both.out.find("not both"), std::string::npos) << both.out;
}

}  // namespace
}  // namespace eagle2

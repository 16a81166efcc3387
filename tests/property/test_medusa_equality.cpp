// Medusa and Hydra drafts are lossless: greedy output equals plain greedy decoding token for
// token, and seeded sampled output equals plain sampling with the seed (position-keyed
// verification), on random models with random heads and with a scripted oracle that makes full,
// partial and zero acceptance happen on purpose through the real drafter; near the end of the
// context; and many sequences decoded together (BatchDecoder) each equal their decoding alone.
#include <gtest/gtest.h>

#include <memory>

#include "draft/eagle_head.h"
#include "support/batch_runs.h"
#include "support/decoding.h"
#include "support/equality_runs.h"
#include "support/medusa_heads.h"
#include "support/random_models.h"

namespace eagle2 {
namespace {

class MedusaEquality : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    // A hot random model (init_std 0.3): its samples wander far from its argmax.
    target_ =
        test::load_random_model("medusa-eq", test::tiny_config(), DType::BF16, 21, 0.3f).release();
    medusa_dir_ = new std::string(test::write_random_heads("eq", *target_, {}));
    test::RandomHeadsOptions hydra;
    hydra.hydra = true;
    hydra_dir_ = new std::string(test::write_random_heads("eq", *target_, hydra));
  }
  static void TearDownTestSuite() {
    delete target_;
    delete medusa_dir_;
    delete hydra_dir_;
    target_ = nullptr;
    medusa_dir_ = nullptr;
    hydra_dir_ = nullptr;
  }
  std::vector<test::DrafterCase> cases() {
    std::vector<test::DrafterCase> all = test::medusa_cases(*target_, *medusa_dir_, pool_, log_);
    for (auto& c : test::hydra_cases(*target_, *hydra_dir_, pool_, log_)) all.push_back(c);
    return all;
  }
  // The oracle saw only features of the true path.
  void TearDown() override {
    EXPECT_EQ(log_->misses, 0) << "the drafter read a feature off the path";
  }

  static LlamaModel* target_;
  static std::string* medusa_dir_;
  static std::string* hydra_dir_;
  ThreadPool pool_{2};
  std::shared_ptr<test::OracleLog> log_ = std::make_shared<test::OracleLog>();
};
LlamaModel* MedusaEquality::target_ = nullptr;
std::string* MedusaEquality::medusa_dir_ = nullptr;
std::string* MedusaEquality::hydra_dir_ = nullptr;

void expect_full_partial_and_zero(const test::Coverage& cov, const std::string& name, size_t full) {
  SCOPED_TRACE(name);
  EXPECT_GT(cov.at(name, 0), 0) << "no cycle rejected everything";
  int64_t between = 0;
  for (size_t a = 1; a < full; ++a) between += cov.at(name, a);
  EXPECT_GT(between, 0) << "no partial acceptance";
  EXPECT_GT(cov.at(name, full), 0) << "no cycle accepted the full depth";
}

TEST_F(MedusaEquality, GreedyEqualsPlainDecoding) {
  const auto prompts = test::random_prompts(5, 10, target_->config().vocab_size);
  GenerationOptions opt;
  opt.max_new_tokens = 40;
  test::Coverage cov;
  test::check_equality(*target_, cases(), prompts, opt, 512, pool_, cov);
  expect_full_partial_and_zero(cov, "medusa-oracle", 3);
  expect_full_partial_and_zero(cov, "hydra-oracle", 3);
}

TEST_F(MedusaEquality, SampledEqualsPlainSamplingWithTheSeed) {
  const auto prompts = test::random_prompts(7, 4, target_->config().vocab_size);
  GenerationOptions opt;
  opt.max_new_tokens = 24;
  test::Coverage cov;
  for (const SamplingParams& sp :
       {SamplingParams{1.0f, 0, 1.0f, 3}, SamplingParams{0.7f, 20, 0.9f, 99}}) {
    opt.sampling = sp;
    test::check_equality(*target_, cases(), prompts, opt, 512, pool_, cov);
  }
  expect_full_partial_and_zero(cov, "medusa-oracle", 3);
  expect_full_partial_and_zero(cov, "hydra-oracle", 3);
}

// Each cycle the heads read the feature of the root's parent: the last accepted token of the
// previous cycle (or the prompt's last token), whatever was accepted.
void expect_heads_read_the_roots_parent(LlamaModel& target, Drafter& drafter,
                                        const test::OracleLog& log, ThreadPool& pool) {
  const std::vector<int32_t> prompt = {1, 17, 4, 60, 8};
  GenerationOptions opt;
  opt.max_new_tokens = 60;
  const auto plain = test::plain_tokens(target, prompt, opt, 512, pool);
  std::vector<int64_t> roots;
  int64_t accepted = 0;
  SpeculativeHooks hooks;
  hooks.trace = [&](const CycleTrace& c) {
    if (c.tree.size() > 1) roots.push_back(c.committed);
    accepted += c.verdict.accepted();
  };
  EXPECT_EQ(test::speculative_tokens(target, drafter, prompt, opt, 512, pool, hooks), plain);
  ASSERT_EQ(log.positions.size(), roots.size());
  for (size_t i = 0; i < roots.size(); ++i)
    EXPECT_EQ(log.positions[i], roots[i] - 1) << "cycle " << i;
  EXPECT_GT(accepted, 20) << "the oracle's drafts were hardly accepted";
}

std::vector<int32_t> truth_of(LlamaModel& target, const std::vector<int32_t>& prompt,
                              ThreadPool& pool) {
  GenerationOptions opt;
  opt.max_new_tokens = 60;
  std::vector<int32_t> truth = prompt;
  const auto plain = test::plain_tokens(target, prompt, opt, 512, pool);
  truth.insert(truth.end(), plain.begin(), plain.end());
  return truth;
}

TEST_F(MedusaEquality, HeadsReadTheFeatureOfTheRootsParent) {
  const auto truth = truth_of(*target_, {1, 17, 4, 60, 8}, pool_);
  MedusaDrafter medusa(
      std::make_unique<test::OracleMedusaPredictor>(*target_, truth, 3, 1, pool_, log_), pool_, 8);
  expect_heads_read_the_roots_parent(*target_, medusa, *log_, pool_);
  log_->positions.clear();
  HydraDrafter hydra(
      std::make_unique<test::OracleHydraPredictor>(*target_, truth, 3, 1, pool_, log_), pool_, 8);
  expect_heads_read_the_roots_parent(*target_, hydra, *log_, pool_);
}

// ctx 40: generation runs into the end of the context, where trees shrink to fit.
TEST_F(MedusaEquality, TightContext) {
  GenerationOptions opt;
  opt.max_new_tokens = 100;
  opt.stop_at_eos = false;
  test::Coverage cov;
  test::check_equality(*target_, cases(), {{1, 5, 7, 9}, {1, 2}}, opt, 40, pool_, cov);
  opt.sampling = SamplingParams{1.0f, 0, 1.0f, 5};
  test::check_equality(*target_, cases(), {{1, 5, 7, 9}}, opt, 40, pool_, cov);
}

// In company: Medusa sequences among EAGLE, lookup and plain ones in one BatchDecoder, sequences
// joining mid-way, greedy and sampled: each equals its decoding alone.
TEST_F(MedusaEquality, ManySequencesInOneEngine) {
  auto head = EagleHead::load(test::write_random_head("medusa-eq", *target_), *target_);
  std::vector<test::DrafterCase> all = cases();
  const auto eagle = test::drafter_cases(*head, pool_, target_->config().vocab_size, 256);
  for (const auto& c : eagle)
    if (c.name == "dynamic-16-3-4" || c.name == "lookup" || c.name == "none") all.push_back(c);
  const auto prompts = test::random_prompts(11, 5, target_->config().vocab_size);
  test::BatchRunOptions opt;
  opt.sequence_counts = {1, 3, 8};
  SamplingParams hot;
  hot.temperature = 0.9f;
  hot.seed = 5;
  opt.sampling = {SamplingParams{}, hot};
  EXPECT_EQ(test::check_batch_equality(*target_, all, prompts, opt, pool_), 2 * (1 + 3 + 8));
}

}  // namespace
}  // namespace eagle2

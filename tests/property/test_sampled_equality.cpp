// Seeded sampling does not depend on the tree: at temperature > 0 the token at output position n
// is drawn from counter_uniform(seed, n) by plain decoding and by verification alike, so with the
// same seed speculative output equals plain sampled output token for token, for every drafter
// (EAGLE dynamic/static/chain, lookup, the root alone, a scripted oracle, random trees), with
// temperature, top-k and top-p. Verifiers that key a level's uniform wrongly must break the
// equality. The heavier runs (the stories260K model and head) are in
// test_sampled_equality_slow.cpp.
#include <gtest/gtest.h>

#include "draft/eagle_head.h"
#include "support/broken_verifiers.h"
#include "support/decoding.h"
#include "support/eagle3_heads.h"
#include "support/equality_runs.h"
#include "support/random_models.h"
#include "support/scripted_drafter.h"

namespace eagle2 {
namespace {

SamplingParams sampled(float temperature, int32_t top_k, float top_p, uint64_t seed) {
  SamplingParams sp;
  sp.temperature = temperature;
  sp.top_k = top_k;
  sp.top_p = top_p;
  sp.seed = seed;
  return sp;
}

class SampledEquality : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    // A hot random model (init_std 0.3) so that sampled tokens are far from its argmax.
    target_ =
        test::load_random_model("sampled-eq", test::tiny_config(), DType::BF16, 21, 0.3f).release();
    head_ = EagleHead::load(test::write_random_head("sampled-eq", *target_), *target_).release();
    head3_ = test::load_random_eagle3_head("sampled-eq", *target_).release();
  }
  static void TearDownTestSuite() {
    delete head3_;
    head3_ = nullptr;
    delete head_;
    delete target_;
    head_ = nullptr;
    target_ = nullptr;
  }
  // Every drafter of the greedy equality test, plus random trees (mostly wrong: bonus tokens).
  std::vector<test::DrafterCase> cases(int64_t ctx) {
    const int64_t V = target_->config().vocab_size;
    auto all = test::drafter_cases(*head_, pool_, V, ctx, head3_);
    all.push_back({"random-trees",
                   [V](const std::vector<int32_t>& truth) -> std::unique_ptr<Drafter> {
                     return std::make_unique<test::ScriptedDrafter>(
                         test::random_tree_script(V, static_cast<uint32_t>(truth.size())));
                   },
                   3});
    return all;
  }
  static LlamaModel* target_;
  static EagleHead* head_;
  static EagleHead* head3_;  // EAGLE-3
  ThreadPool pool_{2};
};
LlamaModel* SampledEquality::target_ = nullptr;
EagleHead* SampledEquality::head_ = nullptr;
EagleHead* SampledEquality::head3_ = nullptr;

TEST_F(SampledEquality, EveryDrafterSeveralSeedsAndProcessors) {
  const auto prompts = test::random_prompts(7, 2, target_->config().vocab_size);
  const std::vector<SamplingParams> settings = {sampled(1.0f, 0, 1.0f, 0),
                                                sampled(0.7f, 20, 0.9f, 12345),
                                                sampled(1.3f, 8, 0.8f, ~uint64_t{0})};
  test::Coverage cov;
  GenerationOptions opt;
  opt.max_new_tokens = 20;
  for (const SamplingParams& sp : settings) {
    opt.sampling = sp;
    test::check_equality(*target_, cases(512), prompts, opt, 512, pool_, cov);
  }
  // The oracle proposes the true sampled continuation behind wrong siblings: long acceptances
  // past a non-first child. Random trees are mostly rejected: bonus tokens from the root.
  EXPECT_GT(cov.at("scripted", 0), 0);
  EXPECT_GT(cov.at("scripted", 5), 0) << "no cycle accepted the full scripted depth";
  EXPECT_GT(cov.at("random-trees", 0), 0);
}

// Suffix decoding at T > 0: its trees are deterministic proposals (the most frequent continuation
// first among siblings), verified by the position-keyed rule like any other. Prompts that repeat
// themselves, so that its trees are real: cycles that reject everything and cycles that accept
// drafted tokens must both occur, and the output is plain sampling's, token for token.
TEST_F(SampledEquality, SuffixTreesFromRepeatedText) {
  const int64_t V = target_->config().vocab_size;
  std::vector<std::vector<int32_t>> prompts;
  for (const auto& piece : test::random_prompts(11, 3, V)) {
    std::vector<int32_t> p;
    for (int r = 0; r < 3; ++r) p.insert(p.end(), piece.begin(), piece.end());
    prompts.push_back(p);
  }
  std::vector<test::DrafterCase> suffix;
  for (const test::DrafterCase& c : cases(512))
    if (c.name.starts_with("suffix")) suffix.push_back(c);
  ASSERT_EQ(suffix.size(), 1u);
  test::Coverage cov;
  GenerationOptions opt;
  opt.max_new_tokens = 40;
  for (const SamplingParams& sp : {sampled(0.3f, 0, 1.0f, 1), sampled(0.8f, 20, 0.9f, 99),
                                   sampled(1.2f, 0, 1.0f, ~uint64_t{0} - 5)}) {
    opt.sampling = sp;
    test::check_equality(*target_, suffix, prompts, opt, 512, pool_, cov);
  }
  const std::string name = suffix[0].name;
  EXPECT_GT(cov.at(name, 0), 0) << "no suffix tree was rejected whole";
  int64_t accepted = 0;
  for (size_t a = 1; a <= 6; ++a) accepted += cov.at(name, a);
  EXPECT_GT(accepted, 0) << "no suffix-drafted token was accepted";
}

// Near the end of the context the trees shrink; the output still equals plain sampling, up to the
// same last token.
TEST_F(SampledEquality, TightContext) {
  GenerationOptions opt;
  opt.max_new_tokens = 100;
  opt.stop_at_eos = false;
  opt.sampling = sampled(1.0f, 0, 1.0f, 5);
  test::Coverage cov;
  test::check_equality(*target_, cases(40), {{1, 5, 7, 9}}, opt, 40, pool_, cov);
}

// A verifier that picks the right distribution at each level but keys its uniform by anything else
// than the output position (and the rejection rule, lossless but tree-dependent, with its broken
// variants) gives other tokens than plain sampling with the same seed.
TEST_F(SampledEquality, WronglyKeyedVerifiersAreCaught) {
  const int64_t V = target_->config().vocab_size;
  const std::vector<int32_t> prompt = {1, 17, 4, 60};
  GenerationOptions opt;
  opt.max_new_tokens = 24;
  opt.sampling = sampled(1.0f, 0, 1.0f, 3);
  const auto plain = test::plain_tokens(*target_, prompt, opt, 512, pool_);
  std::vector<int32_t> truth = prompt;
  truth.insert(truth.end(), plain.begin(), plain.end());

  auto verifiers = test::broken_position_verifiers();
  for (auto& v : test::broken_rejection_verifiers()) verifiers.push_back(v);
  verifiers.push_back({"the rejection rule (lossless, but its tokens depend on the tree)",
                       verify_sampling_rejection});
  for (const auto& [name, verifier] : verifiers) {
    SpeculativeHooks hooks;
    hooks.verify_sampling = verifier;
    // The oracle's trees: the true continuation with wrong siblings before it at random levels.
    test::ScriptedDrafter oracle(test::oracle_script(truth, 5, V, 1));
    EXPECT_NE(test::speculative_tokens(*target_, oracle, prompt, opt, 512, pool_, hooks), plain)
        << name << " went unnoticed";
  }
  // The same drafter with the correct verifier: equal (the control).
  test::ScriptedDrafter oracle(test::oracle_script(truth, 5, V, 1));
  EXPECT_EQ(test::speculative_tokens(*target_, oracle, prompt, opt, 512, pool_), plain);
}

}  // namespace
}  // namespace eagle2

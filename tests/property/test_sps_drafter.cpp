// Speculative sampling with a separate draft model (SpsDrafter): greedy output equals plain
// decoding whether the draft agrees with the target always (the draft IS the target), often (a
// slightly perturbed copy) or never (an unrelated model); a tree of top-K drafts is exact at any
// temperature under the position-keyed rule; a sampled chain is reproducible from its seed alone,
// alone or in a batch; the draft cache keeps exactly the accepted drafted tokens. The
// distribution of sampled chains (the min(1, p/q) rule) is checked in
// tests/statistical/test_lossless_sampling_slow.cpp.
#include <gtest/gtest.h>

#include "speculative/batch_decoder.h"
#include "speculative/draft_policy.h"
#include "speculative/drafter_spec.h"
#include "speculative/sps_drafter.h"
#include "speculative/verify.h"
#include "support/batch_runs.h"
#include "support/decoding.h"
#include "support/equality_runs.h"
#include "support/errors.h"
#include "support/random_models.h"

namespace eagle2 {
namespace {

constexpr int64_t kCtx = 256;

void expect_error(const std::function<void()>& f, const std::string& part) {
  const std::string message = test::error_of(f);
  EXPECT_NE(message.find(part), std::string::npos) << message;
}

struct Models {
  std::shared_ptr<LlamaModel> target, same, close, unrelated;
};

// The target; the target itself as a draft; a copy with the same random draws at a slightly
// larger scale (its argmax agrees with the target's often, not always); an unrelated model.
Models models() {
  const LlamaConfig cfg = test::tiny_config();
  Models m;
  m.target = test::load_random_model("sps-target", cfg, DType::F32, 41, 0.3f);
  m.same = m.target;
  m.close = test::load_random_model("sps-close", cfg, DType::F32, 41, 0.33f);
  LlamaConfig small = cfg;
  small.num_layers = 1;
  m.unrelated = test::load_random_model("sps-unrelated", small, DType::F32, 42, 0.3f);
  return m;
}

test::DrafterCase sps_case(const std::string& name, std::shared_ptr<LlamaModel> draft,
                           ThreadPool& pool, int depth, int top_k) {
  SpsDrafterOptions o;
  o.depth = depth;
  o.top_k = top_k;
  o.context = kCtx;
  return {name,
          [draft, &pool, o](const std::vector<int32_t>&) -> std::unique_ptr<Drafter> {
            return std::make_unique<SpsDrafter>(draft, pool, o);
          },
          depth + 1};
}

TEST(SpsDrafter, GreedyEqualsPlainForEveryAgreement) {
  Models m = models();
  ThreadPool pool(2);
  const std::vector<test::DrafterCase> cases = {
      sps_case("same-chain", m.same, pool, 3, 1), sps_case("close-chain", m.close, pool, 3, 1),
      sps_case("unrelated-chain", m.unrelated, pool, 3, 1),
      sps_case("close-tree", m.close, pool, 2, 3), sps_case("same-tree", m.same, pool, 2, 3)};
  const auto prompts = test::random_prompts(11, 6, m.target->config().vocab_size);
  GenerationOptions opt;
  opt.max_new_tokens = 40;
  opt.stop_at_eos = false;
  test::Coverage cov;
  test::check_equality(*m.target, cases, prompts, opt, kCtx, pool, cov);
  // The draft that is the target is always right: every cycle but the last accepts the whole chain
  // (the draft cache holds exactly the committed tokens, or its predictions would drift).
  const auto& same = cov.hist.at("same-chain");
  int64_t cycles = 0;
  for (int64_t c : same) cycles += c;
  EXPECT_GE(cov.at("same-chain", 4), cycles - static_cast<int64_t>(prompts.size()));
  // Zero, partial and full acceptance all happened.
  EXPECT_GT(cov.at("unrelated-chain", 0), 0);
  EXPECT_GT(cov.at("close-chain", 1) + cov.at("close-chain", 2) + cov.at("close-chain", 3), 0);
  EXPECT_GT(cov.at("close-chain", 4), 0);
  EXPECT_GT(cov.at("close-tree", 0) + cov.at("close-tree", 1) + cov.at("close-tree", 2), 0);
  EXPECT_GE(cov.at("same-tree", 3), 1);
}

// Trees of top-K drafts are deterministic given the context, so the position-keyed rule keeps
// sampled output equal to plain sampled output with the same seed.
TEST(SpsDrafter, SampledTreeEqualsPlainSampled) {
  Models m = models();
  ThreadPool pool(1);
  const std::vector<test::DrafterCase> cases = {sps_case("close-tree", m.close, pool, 2, 3)};
  const auto prompts = test::random_prompts(12, 4, m.target->config().vocab_size);
  GenerationOptions opt;
  opt.max_new_tokens = 30;
  opt.stop_at_eos = false;
  opt.sampling = {0.8f, 20, 0.95f, 5};
  test::Coverage cov;
  test::check_equality(*m.target, cases, prompts, opt, kCtx, pool, cov);
}

std::vector<int32_t> solo(LlamaModel& target, std::shared_ptr<LlamaModel> draft, ThreadPool& pool,
                          const std::vector<int32_t>& prompt, const GenerationOptions& opt,
                          SpeculativeStats* st = nullptr) {
  SpsDrafter d(std::move(draft), pool, {3, 1, kCtx});
  return test::speculative_tokens(target, d, prompt, opt, kCtx, pool, {}, st);
}

// A sampled chain draws its draft tokens from a stream keyed by (seed, output position), and the
// min(1, p/q) rule its numbers from verification's: the output depends on the seed alone, not on
// the thread count or the company of other sequences in a batch.
TEST(SpsDrafter, SampledChainIsReproducibleAloneAndInABatch) {
  Models m = models();
  ThreadPool one(1), two(2);
  const auto prompts = test::random_prompts(13, 5, m.target->config().vocab_size);
  GenerationOptions opt;
  opt.max_new_tokens = 30;
  opt.stop_at_eos = false;
  std::vector<std::vector<int32_t>> expected;
  int64_t accepted = 0, rejected = 0;
  for (size_t p = 0; p < prompts.size(); ++p) {
    opt.sampling = {0.9f, 0, 1.0f, 100 + p};
    SpeculativeStats st;
    expected.push_back(solo(*m.target, m.close, one, prompts[p], opt, &st));
    EXPECT_EQ(solo(*m.target, m.close, two, prompts[p], opt), expected.back());
    for (size_t a = 0; a < st.accept_histogram.size(); ++a)
      (a == 0 ? rejected : accepted) += st.accept_histogram[a];
  }
  EXPECT_GT(accepted, 0);
  EXPECT_GT(rejected, 0);
  BatchDecoder decoder(*m.target, m.target->make_pool(prompts.size() * kCtx), kCtx, two);
  std::vector<int64_t> ids;
  for (size_t p = 0; p < prompts.size(); ++p) {
    opt.sampling = {0.9f, 0, 1.0f, 100 + p};
    ids.push_back(
        decoder.add(prompts[p], opt,
                    std::make_unique<SpsDrafter>(m.close, two, SpsDrafterOptions{3, 1, kCtx})));
  }
  while (decoder.live() > 0) decoder.step();
  for (size_t p = 0; p < prompts.size(); ++p) EXPECT_EQ(decoder.tokens(ids[p]), expected[p]);
}

// Greedy chains and trees among other drafters in one BatchDecoder equal plain decoding alone.
TEST(SpsDrafter, InCompanyEqualsPlainAlone) {
  Models m = models();
  ThreadPool pool(2);
  std::vector<test::DrafterCase> cases = {sps_case("close-chain", m.close, pool, 3, 1),
                                          sps_case("close-tree", m.close, pool, 2, 3),
                                          sps_case("same-chain", m.same, pool, 4, 1)};
  cases.push_back({"none",
                   [](const std::vector<int32_t>&) -> std::unique_ptr<Drafter> {
                     return std::make_unique<NoDrafter>();
                   },
                   0});
  const auto prompts = test::random_prompts(14, 4, m.target->config().vocab_size);
  test::BatchRunOptions opt;
  opt.sequence_counts = {1, 3, 8};
  EXPECT_EQ(test::check_batch_equality(*m.target, cases, prompts, opt, pool), 1 + 3 + 8);
}

// Drafted near the end of the context, the chain and the tree shrink to the room left (and the
// draft cache never runs past it); the output still equals plain decoding.
TEST(SpsDrafter, TightContext) {
  Models m = models();
  ThreadPool pool(1);
  constexpr int64_t ctx = 40;
  for (int top_k : {1, 3}) {
    SpsDrafterOptions o{4, top_k, ctx};
    const auto prompts = test::random_prompts(15, 3, m.target->config().vocab_size);
    GenerationOptions opt;
    opt.max_new_tokens = 100;
    opt.stop_at_eos = false;
    for (const auto& prompt : prompts) {
      SpsDrafter d(m.close, pool, o);
      EXPECT_EQ(test::speculative_tokens(*m.target, d, prompt, opt, ctx, pool),
                test::plain_tokens(*m.target, prompt, opt, ctx, pool));
    }
  }
}

// The rule's own checks: a sampled draft needs a q row per node.
TEST(SpsDrafter, DraftDistributionRuleRefusesMalformedTrees) {
  const int64_t V = 4;
  std::vector<float> logits(3 * V, 0.0f);
  SamplingParams sp{1.0f, 0, 1.0f, 3};
  DraftTree chain;
  chain.reset(1);
  chain.add(2, 0, -1.0f);
  chain.add(3, 1, -2.0f);
  expect_error([&] { verify_sampling_from_draft(chain, logits.data(), V, sp, 1); },
               "draft distribution at every node");
  chain.draft_q_vocab = V;
  chain.draft_q.assign(3 * V, 0.25);
  // q equal to p (uniform logits): every drafted token is accepted.
  const Verdict v = verify_sampling_from_draft(chain, logits.data(), V, sp, 1);
  EXPECT_EQ(v.path, (std::vector<int32_t>{0, 1, 2}));
  DraftTree fork = chain;
  fork.add(0, 0, -1.0f);
  fork.draft_q.assign(4 * V, 0.25);
  std::vector<float> logits4(4 * V, 0.0f);
  // Siblings drawn without replacement are verified recursively: with q = p the first is taken.
  EXPECT_EQ(verify_sampling_from_draft(fork, logits4.data(), V, sp, 1).path, v.path);
  // verify_sampled_tree picks the rule from the tree.
  EXPECT_EQ(verify_sampled_tree(chain, logits.data(), V, sp, 1).path, v.path);
}

// make_drafter: the draft model is loaded once per engine and must share the target's tokens.
TEST(SpsDrafter, SpecLoadsTheDraftOnceAndChecksTheVocabulary) {
  const LlamaConfig cfg = test::tiny_config();
  auto target = test::load_random_model("sps-target", cfg, DType::F32, 41, 0.3f);
  auto draft = test::load_random_model(
      "sps-unrelated",
      [&] {
        LlamaConfig small = cfg;
        small.num_layers = 1;
        return small;
      }(),
      DType::F32, 42, 0.3f);
  LlamaConfig other_vocab = cfg;
  other_vocab.vocab_size = cfg.vocab_size + 1;
  auto wrong = test::load_random_model("sps-other-vocab", other_vocab, DType::F32, 43, 0.3f);
  ThreadPool pool(1);
  DraftPolicies policies(nullptr, target.get());
  const DrafterSpec spec = parse_drafter_spec("sps:" + draft->dir() + ":2");
  auto a = make_drafter(spec, nullptr, pool, kCtx, policies, 0.0f);
  auto b = make_drafter(spec, nullptr, pool, kCtx, policies, 0.7f);
  EXPECT_EQ(a->name(), "sps");
  EXPECT_EQ(policies.assets().size(), 1u);
  expect_error(
      [&] {
        make_drafter(parse_drafter_spec("sps:" + wrong->dir()), nullptr, pool, kCtx, policies,
                     0.0f);
      },
      "must share the target's tokenizer");
  DraftPolicies no_target;
  expect_error([&] { make_drafter(spec, nullptr, pool, kCtx, no_target, 0.0f); },
               "needs the target model");
  expect_error(
      [&] {
        make_drafter(parse_drafter_spec("sps:/nonexistent/draft"), nullptr, pool, kCtx, policies,
                     0.0f);
      },
      "/nonexistent/draft");
}

}  // namespace
}  // namespace eagle2

// The EAGLE drafter's sampled tree (spec "sampled[:T:D:K]", EagleDrafterOptions::Shape::Sampled):
// greedy output equals plain decoding (the same shape holding the head's top-k); sampled output
// is reproducible from the seed alone, on one or two threads and in a batch, but is not plain
// sampling's text (the contract is the target's distribution: tests/statistical's chi-square);
// the shape is best first by each sibling index's measured acceptance; the spec and its checks.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>

#include "speculative/batch_decoder.h"
#include "speculative/draft_policy.h"
#include "speculative/drafter_spec.h"
#include "speculative/eagle_drafter.h"
#include "support/decoding.h"
#include "support/equality_runs.h"
#include "support/errors.h"
#include "support/random_models.h"

namespace eagle2 {
namespace {

constexpr int64_t kSampledTreeCtx = 256;

struct TargetAndHead {
  std::unique_ptr<LlamaModel> target;
  std::unique_ptr<EagleHead> head;
};

TargetAndHead target_and_head() {
  TargetAndHead m;
  m.target = test::load_random_model("sampled-tree", test::tiny_config(), DType::F32, 61, 0.3f);
  m.head = EagleHead::load(test::write_random_head("sampled-tree", *m.target, 7, 0.05f), *m.target);
  return m;
}

EagleDrafterOptions sampled_options(int total_tokens, int depth, int top_k) {
  EagleDrafterOptions o;
  o.shape = EagleDrafterOptions::Shape::Sampled;
  o.dynamic.total_tokens = total_tokens;
  o.dynamic.depth = depth;
  o.dynamic.top_k = top_k;
  o.context = kSampledTreeCtx;
  return o;
}

test::DrafterCase sampled_case(const std::string& name, EagleHead& head, ThreadPool& pool,
                               EagleDrafterOptions o) {
  return {name,
          [&head, &pool, o](const std::vector<int32_t>&) -> std::unique_ptr<Drafter> {
            return std::make_unique<EagleDrafter>(head, pool, o);
          },
          o.dynamic.depth + 1};
}

TEST(SampledTreeDrafter, GreedyEqualsPlain) {
  TargetAndHead m = target_and_head();
  ThreadPool pool(2);
  const std::vector<test::DrafterCase> cases = {
      sampled_case("tree-8-3-2", *m.head, pool, sampled_options(8, 3, 2)),
      sampled_case("chain-6-4-1", *m.head, pool, sampled_options(6, 4, 1))};
  const auto prompts = test::random_prompts(21, 6, m.target->config().vocab_size);
  GenerationOptions opt;
  opt.max_new_tokens = 40;
  opt.stop_at_eos = false;
  test::Coverage cov;
  test::check_equality(*m.target, cases, prompts, opt, kSampledTreeCtx, pool, cov);
  EXPECT_GT(cov.at("tree-8-3-2", 0), 0);
  EXPECT_GT(cov.at("tree-8-3-2", 1) + cov.at("tree-8-3-2", 2) + cov.at("tree-8-3-2", 3), 0);
}

// The draft's picks come from a stream keyed by (seed, the cycle's first output position) and the
// rule's from verification's: the output depends on the seed alone. It is the target's
// distribution, not plain sampling's text: some prompt gives another text than plain decoding.
TEST(SampledTreeDrafter, SampledIsReproducibleAloneAndInABatchButNotPlainText) {
  TargetAndHead m = target_and_head();
  ThreadPool one(1), two(2);
  const auto prompts = test::random_prompts(22, 5, m.target->config().vocab_size);
  const EagleDrafterOptions o = sampled_options(8, 3, 2);
  GenerationOptions opt;
  opt.max_new_tokens = 30;
  opt.stop_at_eos = false;
  std::vector<std::vector<int32_t>> expected;
  int differ_from_plain = 0;
  int64_t later_levels = 0;
  for (size_t p = 0; p < prompts.size(); ++p) {
    opt.sampling = {0.9f, 0, 1.0f, 300 + p};
    EagleDrafter a(*m.head, one, o), b(*m.head, two, o);
    SpeculativeStats st;
    expected.push_back(
        test::speculative_tokens(*m.target, a, prompts[p], opt, kSampledTreeCtx, one, {}, &st));
    EXPECT_EQ(test::speculative_tokens(*m.target, b, prompts[p], opt, kSampledTreeCtx, two),
              expected.back());
    if (expected.back() != test::plain_tokens(*m.target, prompts[p], opt, kSampledTreeCtx, one))
      ++differ_from_plain;
    for (size_t a_len = 2; a_len < st.accept_histogram.size(); ++a_len)
      later_levels += st.accept_histogram[a_len];
  }
  EXPECT_GT(later_levels, 0) << "no cycle accepted two levels";
  EXPECT_GT(differ_from_plain, 0);
  BatchDecoder decoder(*m.target, m.target->make_pool(prompts.size() * kSampledTreeCtx),
                       kSampledTreeCtx, two);
  std::vector<int64_t> ids;
  for (size_t p = 0; p < prompts.size(); ++p) {
    opt.sampling = {0.9f, 0, 1.0f, 300 + p};
    ids.push_back(decoder.add(prompts[p], opt, std::make_unique<EagleDrafter>(*m.head, two, o)));
  }
  while (decoder.live() > 0) decoder.step();
  for (size_t p = 0; p < prompts.size(); ++p) EXPECT_EQ(decoder.tokens(ids[p]), expected[p]);
}

// Under top-k 2 a node's q holds two tokens, so its third sibling slot has nothing left to draw:
// the slot is left out of the tree with everything under it, rather than repeating a draw the
// rule can never accept (head rows and verified tokens for nothing).
TEST(SampledTreeDrafter, SiblingSlotsPastAnExhaustedQAreLeftOut) {
  TargetAndHead m = target_and_head();
  ThreadPool pool(1);
  EagleDrafter d(*m.head, pool, sampled_options(8, 2, 3));
  const TreeChoices shape = d.sampled_shape(64);
  ASSERT_NE(std::find(shape.begin(), shape.end(), std::vector<int>{2}), shape.end());
  GenerationOptions opt;
  opt.max_new_tokens = 40;
  opt.stop_at_eos = false;
  opt.sampling = {0.9f, 2, 1.0f, 11};
  int64_t two_children = 0, cycles = 0;
  SpeculativeHooks hooks;
  hooks.trace = [&](const CycleTrace& c) {
    ++cycles;
    std::vector<std::vector<int32_t>> children(static_cast<size_t>(c.tree.size()));
    for (int64_t i = 1; i < c.tree.size(); ++i)
      children[static_cast<size_t>(c.tree.parents[static_cast<size_t>(i)])].push_back(
          c.tree.tokens[static_cast<size_t>(i)]);
    for (const std::vector<int32_t>& kids : children) {
      EXPECT_LE(kids.size(), 2u) << "cycle " << c.cycle;
      if (kids.size() == 2) {
        ++two_children;
        EXPECT_NE(kids[0], kids[1]) << "cycle " << c.cycle;
      }
    }
  };
  test::speculative_tokens(*m.target, d, {1, 5, 9}, opt, kSampledTreeCtx, pool, hooks);
  EXPECT_GT(cycles, 0);
  EXPECT_GT(two_children, 0);
}

// sampled:auto in one batch with requests at T = 0 and T = 1, drafting from one engine's policies
// (each from its temperature bucket's sibling counts): the greedy request's text is plain
// decoding's, and the sampled one decodes to its length with trees of more than the root.
TEST(SampledTreeDrafter, AutoBudgetInABatchAtTwoTemperatures) {
  TargetAndHead m = target_and_head();
  ThreadPool pool(2);
  DraftPolicies policies(std::make_shared<const VerifyCostModel>(
      std::vector<std::pair<int64_t, double>>{{1, 1.0}, {64, 1.0 + 0.1 * 63}}));
  const DrafterSpec spec = parse_drafter_spec("sampled:auto:4:2");
  const auto prompts = test::random_prompts(23, 2, m.target->config().vocab_size);
  GenerationOptions greedy, hot;
  greedy.max_new_tokens = hot.max_new_tokens = 30;
  greedy.stop_at_eos = hot.stop_at_eos = false;
  hot.sampling = {1.0f, 0, 1.0f, 9};
  BatchDecoder decoder(*m.target, m.target->make_pool(2 * kSampledTreeCtx), kSampledTreeCtx, pool);
  const int64_t a = decoder.add(
      prompts[0], greedy, make_drafter(spec, m.head.get(), pool, kSampledTreeCtx, policies, 0.0f));
  const int64_t b = decoder.add(
      prompts[1], hot, make_drafter(spec, m.head.get(), pool, kSampledTreeCtx, policies, 1.0f));
  while (decoder.live() > 0) decoder.step();
  EXPECT_EQ(decoder.tokens(a),
            test::plain_tokens(*m.target, prompts[0], greedy, kSampledTreeCtx, pool));
  EXPECT_EQ(decoder.tokens(b).size(), 30u);
  EXPECT_GT(policies.get(*m.head, 1.0f)->sibling_counts().tried.at(0), 0);
  EXPECT_GT(policies.get(*m.head, 0.0f)->sibling_counts().tried.at(0), 0);
}

// Before anything is measured every sibling index is accepted one time in two: the shape is then
// best first by 1/2 for a first child and 1/4 for a second, ties to the shorter path, then the
// lower indices; a node's children and later siblings come after it.
TEST(SampledTreeDrafter, ShapeIsBestFirstByMeasuredSiblingAcceptance) {
  TargetAndHead m = target_and_head();
  ThreadPool pool(1);
  EagleDrafter d(*m.head, pool, sampled_options(6, 2, 2));
  EXPECT_DOUBLE_EQ(d.sibling_acceptance(0), 0.5);
  const TreeChoices want = {{0}, {1}, {0, 0}, {0, 1}, {1, 0}};
  EXPECT_EQ(d.sampled_shape(64), want);
  EXPECT_EQ(d.sampled_shape(3), (TreeChoices{{0}, {1}}));  // the room left in the context
  EagleDrafter chain(*m.head, pool, sampled_options(6, 9, 1));
  EXPECT_EQ(chain.sampled_shape(64),
            (TreeChoices{{0}, {0, 0}, {0, 0, 0}, {0, 0, 0, 0}, {0, 0, 0, 0, 0}}));
  // After decoding: the first sibling's measured rate, learned from the cycles' outcomes.
  GenerationOptions opt;
  opt.max_new_tokens = 40;
  opt.stop_at_eos = false;
  opt.sampling = {0.9f, 0, 1.0f, 7};
  test::speculative_tokens(*m.target, d, {1, 5, 9}, opt, kSampledTreeCtx, pool);
  EXPECT_NE(d.sibling_acceptance(0), 0.5);
  d.reset();  // a fresh sequence's state
  EXPECT_DOUBLE_EQ(d.sibling_acceptance(0), 0.5);
}

TEST(SampledTreeDrafter, Spec) {
  const DrafterSpec s = parse_drafter_spec("sampled");
  EXPECT_EQ(s.to_string(), "sampled:8:6:2");
  EXPECT_TRUE(s.needs_head());
  const DrafterSpec t = parse_drafter_spec("sampled:16:5:3");
  EXPECT_EQ(t.dynamic.total_tokens, 16);
  EXPECT_EQ(t.dynamic.depth, 5);
  EXPECT_EQ(t.dynamic.top_k, 3);
  EXPECT_EQ(parse_drafter_spec(t.to_string()), t);
  EXPECT_EQ(parse_drafter_spec("sampled:8:6:2@heads/x").head, "heads/x");
  EXPECT_EQ(test::error_of([] { parse_drafter_spec("sampled:8:6"); }),
            "drafter 'sampled:8:6': expected sampled[:TOTAL_TOKENS:DEPTH:TOP_K] or "
            "sampled:auto[:DEPTH:TOP_K]");
  const DrafterSpec a = parse_drafter_spec("sampled:auto:4:3");
  EXPECT_EQ(a.to_string(), "sampled:auto:4:3");
  EXPECT_EQ(parse_drafter_spec(a.to_string()), a);
  EXPECT_EQ(test::error_of([] { parse_drafter_spec("sampled:auto:4"); }),
            "drafter 'sampled:auto:4': expected sampled:auto[:DEPTH:TOP_K]");
  EXPECT_EQ(test::error_of([] { parse_drafter_spec("sampled:8:6:0"); }),
            "drafter 'sampled:8:6:0': sampled:T:D:K needs T >= 1 tokens, D >= 0 levels after the "
            "first, K >= 1");
  TargetAndHead m = target_and_head();
  ThreadPool pool(1);
  DraftPolicies policies;
  EXPECT_EQ(make_drafter(s, m.head.get(), pool, kSampledTreeCtx, policies, 1.0f)->name(),
            "eagle2-sampled");
  // A budget past the context is capped by it: no cache sized by T, the same output as T =
  // kSampledTreeCtx.
  GenerationOptions opt;
  opt.max_new_tokens = 12;
  opt.stop_at_eos = false;
  opt.sampling = {0.9f, 0, 1.0f, 11};
  EagleDrafter huge(*m.head, pool, sampled_options(INT32_MAX, 6, 2));
  EagleDrafter capped(*m.head, pool, sampled_options(static_cast<int>(kSampledTreeCtx), 6, 2));
  EXPECT_EQ(test::speculative_tokens(*m.target, huge, {1, 2}, opt, kSampledTreeCtx, pool),
            test::speculative_tokens(*m.target, capped, {1, 2}, opt, kSampledTreeCtx, pool));
  EagleDrafterOptions bad = sampled_options(8, 6, 2);
  bad.calibrate = true;
  EXPECT_EQ(test::error_of([&] { EagleDrafter d(*m.head, pool, bad); }),
            "a sampled tree takes no calibration (:cal)");
}

}  // namespace
}  // namespace eagle2

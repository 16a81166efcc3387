// The per-cycle tree budget (src/speculative/tree_budget.h): the verify cost model, the chooser on
// synthetic cost curves, the dynamic tree builder asking for it (ChooseBudget), and losslessness
// with it on.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <random>

#include "core/error.h"
#include "draft/eagle_head.h"
#include "draft/tree_builder.h"
#include "model/cost_curve.h"
#include "speculative/eagle_drafter.h"
#include "speculative/generation.h"
#include "speculative/speculative_decoder.h"
#include "speculative/tree_budget.h"
#include "support/decoding.h"
#include "support/random_models.h"
#include "support/shared_data.h"
#include "support/table_draft.h"

namespace eagle2 {
namespace {

using Points = std::vector<std::pair<int64_t, double>>;

TEST(VerifyCostModel, InterpolatesBetweenPoints) {
  const VerifyCostModel m(Points{{1, 1.0}, {4, 4.0}, {8, 6.0}});
  EXPECT_DOUBLE_EQ(m.seconds(1), 1.0);
  EXPECT_DOUBLE_EQ(m.seconds(2), 2.0);
  EXPECT_DOUBLE_EQ(m.seconds(4), 4.0);
  EXPECT_DOUBLE_EQ(m.seconds(6), 5.0);
  EXPECT_DOUBLE_EQ(m.seconds(8), 6.0);
}

TEST(VerifyCostModel, ExtrapolatesWithTheLastSlope) {
  const VerifyCostModel m(Points{{1, 1.0}, {4, 4.0}, {8, 6.0}});
  EXPECT_DOUBLE_EQ(m.seconds(10), 7.0);
  EXPECT_DOUBLE_EQ(m.seconds(108), 56.0);
  EXPECT_DOUBLE_EQ(m.seconds(0), 1.0);  // below the first point: its time
  // Timing noise that makes the last segment fall must not make big batches cheaper.
  const VerifyCostModel noisy(Points{{1, 2.0}, {2, 1.5}});
  EXPECT_DOUBLE_EQ(noisy.seconds(50), 1.5);
  // One point: proportional to k above it.
  const VerifyCostModel one(Points{{2, 4.0}}, 0.5);
  EXPECT_DOUBLE_EQ(one.seconds(1), 4.0);
  EXPECT_DOUBLE_EQ(one.seconds(6), 12.0);
  EXPECT_DOUBLE_EQ(one.draft_seconds(), 0.5);
}

TEST(VerifyCostModel, RejectsBadPoints) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_THROW(VerifyCostModel(Points{}), Error);
  EXPECT_THROW(VerifyCostModel(Points{{1, 1.0}, {1, 2.0}}), Error);
  EXPECT_THROW(VerifyCostModel(Points{{4, 1.0}, {2, 2.0}}), Error);
  EXPECT_THROW(VerifyCostModel(Points{{0, 1.0}}), Error);
  EXPECT_THROW(VerifyCostModel(Points{{1, 0.0}}), Error);
  EXPECT_THROW(VerifyCostModel(Points{{1, 1.0}, {2, -1.0}}), Error);
  EXPECT_THROW(VerifyCostModel(Points{{1, nan}}), Error);
  EXPECT_THROW(VerifyCostModel(Points{{1, 1.0}}, -1.0), Error);
}

// Expected tokens per second of a budget, computed the long way.
double rate(const std::vector<float>& values, const VerifyCostModel& m, double draft, int64_t t) {
  double expected = 1;
  for (int64_t i = 0; i < t - 1; ++i) expected += std::exp(static_cast<double>(values[i]));
  return expected / (draft + m.seconds(t));
}

TEST(ChooseTotalTokens, CheapVerificationTakesEveryUsefulNode) {
  const VerifyCostModel flat(Points{{1, 0.01}, {64, 0.01}});
  const std::vector<float> v(100, -0.5f);
  EXPECT_EQ(choose_total_tokens(v, flat, 0.0, 60), 60);     // capped by the room
  EXPECT_EQ(choose_total_tokens(v, flat, 0.0, 1000), 101);  // every candidate
  // Nodes that can never be accepted add nothing, so the tie goes to the smaller tree.
  const float never = -std::numeric_limits<float>::infinity();
  const std::vector<float> w = {-0.1f, -0.2f, never, never};
  EXPECT_EQ(choose_total_tokens(w, flat, 0.0, 60), 3);
}

TEST(ChooseTotalTokens, ExpensiveVerificationKeepsTheTreeSmall) {
  // Cost linear in k from k = 1: a node pays for itself only if it is surely accepted.
  const VerifyCostModel linear(Points{{1, 1.0}, {64, 64.0}});
  const std::vector<float> v(100, -0.5f);
  EXPECT_EQ(choose_total_tokens(v, linear, 0.0, 60), 1);
  // A fixed draft cost makes a few likely nodes worth verifying, but far fewer than when
  // verification is flat.
  std::vector<float> desc(100);
  for (size_t i = 0; i < desc.size(); ++i) desc[i] = -0.1f * static_cast<float>(i);
  const int64_t t_lin = choose_total_tokens(desc, linear, 2.0, 60);
  const VerifyCostModel flat(Points{{1, 1.0}, {64, 1.0}});
  const int64_t t_flat = choose_total_tokens(desc, flat, 2.0, 60);
  EXPECT_GT(t_lin, 1);
  EXPECT_LT(t_lin, 10);
  EXPECT_EQ(t_flat, 60);
  // The CPU's shape: memory-bound plateau, then compute-bound: the chooser stays near the knee.
  const VerifyCostModel knee(Points{{1, 1.0}, {8, 1.05}, {64, 8.0}});
  const int64_t t_knee = choose_total_tokens(desc, knee, 0.0, 60);
  EXPECT_GE(t_knee, 8);
  EXPECT_LT(t_knee, 20);
  EXPECT_LT(t_lin, t_knee);
}

// An unobserved calibration trusts the draft probability; observations pull a bin toward what
// happened, unobserved bins of the same rank toward what that rank does elsewhere (the head's own
// probability stays in, so order within a bin is kept), and the draft's top choice is learned
// apart from its siblings.
TEST(AcceptanceCalibration, LearnsFromOutcomes) {
  AcceptanceCalibration cal;
  const float lp = std::log(0.12f);  // bin [0.10, 0.15)
  EXPECT_NEAR(cal.estimate(lp, 0), 0.12, 1e-6);
  EXPECT_NEAR(cal.log_confidence(lp, 1), lp, 1e-6);
  EXPECT_EQ(cal.observations(), 0);
  for (int i = 0; i < 180; ++i) cal.record(lp, 0, i % 10 < 7);  // top choices: 70 % accepted
  EXPECT_EQ(cal.observations(), 180);
  auto prior = [](double p) { return (126 + 5 * p) / 185.0; };  // the rank's record + p
  EXPECT_NEAR(cal.estimate(lp, 0), (126 + 5 * prior(0.12)) / 185.0, 1e-6);
  EXPECT_NEAR(cal.estimate(std::log(0.9f), 0), prior(0.9), 1e-6);    // unobserved bin: the rank's
  EXPECT_NEAR(cal.estimate(std::log(0.02f), 0), prior(0.02), 1e-6);  // rate, not the head's 0.02
  EXPECT_NEAR(cal.estimate(lp, 1), 0.12, 1e-6);                      // siblings: nothing learned
  EXPECT_NEAR(cal.estimate(lp, -1), 0.12, 1e-6);                     // unknown rank: a sibling
  EXPECT_GT(cal.estimate(std::log(0.13f), 0), cal.estimate(lp, 0));  // same bin, more likely
  EXPECT_LE(cal.estimate(0.0f, 0), 1.0);
  EXPECT_LE(cal.log_confidence(0.0f, 0), 0.0f);  // never above 0
  for (int i = 0; i < 50; ++i) cal.record(-std::numeric_limits<float>::infinity(), 1, false);
  EXPECT_EQ(cal.estimate(-std::numeric_limits<float>::infinity(), 1), 0.0);
}

TEST(ChooseTotalTokens, EdgeCases) {
  const VerifyCostModel flat(Points{{1, 1.0}});
  const std::vector<float> v = {-0.1f, -0.2f};
  EXPECT_EQ(choose_total_tokens({}, flat, 0.0, 60), 1);
  EXPECT_EQ(choose_total_tokens(v, flat, 0.0, 1), 1);
  EXPECT_EQ(choose_total_tokens(v, flat, 0.0, 0), 1);
  EXPECT_EQ(choose_total_tokens(v, flat, 0.0, -5), 1);
}

TEST(ChooseTotalTokens, MaximizesTheObjectiveOnRandomInputs) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> logp(-6.0f, 0.0f);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (int trial = 0; trial < 500; ++trial) {
    std::vector<float> v(rng() % 80);
    for (float& x : v) x = logp(rng);
    std::sort(v.begin(), v.end(), std::greater<>());
    Points pts;
    int64_t k = 1 + static_cast<int64_t>(rng() % 3);
    double s = 0.001 + u(rng);
    for (int p = 0, n = 1 + static_cast<int>(rng() % 6); p < n; ++p) {
      pts.emplace_back(k, s);
      k += 1 + static_cast<int64_t>(rng() % 20);
      s = std::max(1e-4, s + u(rng) - 0.2);  // mostly rising, sometimes noisy
    }
    const VerifyCostModel m(pts);
    const double draft = trial % 3 == 0 ? 0.0 : u(rng);
    const int64_t max_tokens = 1 + static_cast<int64_t>(rng() % 100);
    const int64_t t = choose_total_tokens(v, m, draft, max_tokens);
    const int64_t t_top = std::min<int64_t>(max_tokens, static_cast<int64_t>(v.size()) + 1);
    ASSERT_GE(t, 1);
    ASSERT_LE(t, t_top);
    const double best = rate(v, m, draft, t);
    for (int64_t other = 1; other <= t_top; ++other) {
      SCOPED_TRACE(testing::Message() << "trial " << trial << ", T " << other);
      if (other < t)
        EXPECT_LT(rate(v, m, draft, other), best * (1 + 1e-12));  // ties: the smaller T
      else
        EXPECT_LE(rate(v, m, draft, other), best * (1 + 1e-12));
    }
  }
}

using test::ChildTable;
using test::TableDraft;

// The tree a scripted drafter gets from a dynamic builder (a chosen budget when draft.choose is
// set).
// K = 2, depth 2. Pool values: a -0.1, b -1.0 | c -0.3, d -2.1, e -1.05, f -4.0 |
// g -0.4, h -1.8, i -1.55, j -1.95 (frontier after the first expansion: c, e).
ChildTable two_by_two() {
  return {
      {{}, {{10, -0.1f}, {11, -1.0f}}},       {{10}, {{12, -0.2f}, {13, -2.0f}}},
      {{11}, {{14, -0.05f}, {15, -3.0f}}},    {{10, 12}, {{16, -0.1f}, {17, -1.5f}}},
      {{11, 14}, {{18, -0.5f}, {19, -0.9f}}},
  };
}

TEST(DynamicTreeBudget, ChooserSeesThePoolInRerankOrderAndSizesTheTree) {
  std::vector<float> seen;
  int64_t seen_max = 0;
  TableDraft draft(two_by_two());
  draft.choose = [&](std::span<const float> values, int64_t max_tokens) {
    seen.assign(values.begin(), values.end());
    seen_max = max_tokens;
    return int64_t{4};
  };
  const DraftTree tree = test::dynamic_tree_of(draft, {2, 2, 100}, 50);
  // Asked once, after the last expansion.
  ASSERT_EQ(draft.steps.size(), 4u);
  EXPECT_EQ(draft.steps.back().kind, DraftStep::Kind::ChooseBudget);
  const std::vector<float> want = {-0.1f,  -0.3f, -0.4f,  -1.0f, -1.05f,
                                   -1.55f, -1.8f, -1.95f, -2.1f, -4.0f};
  ASSERT_EQ(seen.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(seen[i], want[i], 1e-6) << i;
  EXPECT_EQ(seen_max, 50);  // total_tokens (100) no longer caps anything
  // The best 3 (a, c, g) in pool order under the root.
  EXPECT_EQ(tree.tokens, (std::vector<int32_t>{1, 10, 12, 16}));
  EXPECT_EQ(tree.parents, (std::vector<int32_t>{-1, 0, 1, 2}));
}

TEST(DynamicTreeBudget, ChoiceIsClampedToTheRoom) {
  TableDraft draft(two_by_two());
  draft.choose = [](std::span<const float>, int64_t) { return int64_t{1000}; };
  EXPECT_EQ(test::dynamic_tree_of(draft, {2, 2, 3}, 6).size(), 6);
  draft.choose = [](std::span<const float>, int64_t) { return int64_t{0}; };
  EXPECT_EQ(test::dynamic_tree_of(draft, {2, 2, 3}, 6).tokens, (std::vector<int32_t>{1}));
  // No room at all: the root alone, and neither the head nor the chooser is asked anything.
  TableDraft none(two_by_two());
  none.choose = [](std::span<const float>, int64_t) { return int64_t{1000}; };
  EXPECT_EQ(test::dynamic_tree_of(none, {2, 2, 3}, 1).size(), 1);
  EXPECT_TRUE(none.steps.empty());
}

// A level that cannot pay is not drafted: the pool stops growing there, the chooser sees what was
// drafted, and the tree holds only drafted nodes.
TEST(DynamicTreeBudget, StoppingALevelKeepsWhatWasDrafted) {
  TableDraft draft(two_by_two());
  std::vector<float> seen;
  draft.choose = [&](std::span<const float> values, int64_t) {
    seen.assign(values.begin(), values.end());
    return int64_t{100};
  };
  int asked = 0;
  std::vector<float> frontier_seen;
  draft.expand = [&](std::span<const float> pool, std::span<const float> frontier) {
    ++asked;
    EXPECT_EQ(pool.size(), 2u);  // level 1: a (-0.1), b (-1.0)
    frontier_seen.assign(frontier.begin(), frontier.end());
    return false;
  };
  const DraftTree tree = test::dynamic_tree_of(draft, {2, 2, 100}, 50);
  EXPECT_EQ(asked, 1);
  EXPECT_EQ(frontier_seen, (std::vector<float>{-0.1f, -1.0f}));
  EXPECT_EQ(seen, (std::vector<float>{-0.1f, -1.0f}));
  EXPECT_EQ(tree.tokens, (std::vector<int32_t>{1, 10, 11}));
  EXPECT_EQ(tree.parents, (std::vector<int32_t>{-1, 0, 0}));
  EXPECT_TRUE(draft.fed_steps.empty());  // nothing was fed to the head
  // Stopping after one expansion keeps that level.
  TableDraft once(two_by_two());
  once.choose = [](std::span<const float>, int64_t) { return int64_t{100}; };
  int levels = 0;
  once.expand = [&](std::span<const float>, std::span<const float>) { return levels++ < 1; };
  EXPECT_EQ(test::dynamic_tree_of(once, {2, 2, 100}, 50).size(), 7);  // root + 2 + 2 x 2
  // A fixed budget cannot stop.
  DynamicTreeBuilder fixed;
  fixed.start(1, {2, 2, 10}, 50);
  const std::vector<int32_t> tokens = {10, 11};
  const std::vector<float> logp = {-0.1f, -1.0f};
  fixed.supply(tokens, logp);
  ASSERT_EQ(fixed.next().kind, DraftStep::Kind::Expand);
  EXPECT_THROW(fixed.stop_expanding(), Error);
}

TEST(DeeperLevel, PaysWhereVerifyingIsCheapNotWhereItIsDear) {
  const std::vector<float> pool = {-0.05f, -0.1f, -0.15f};  // a likely chain so far
  const std::vector<float> likely = {-0.2f}, unlikely = {-3.0f};
  // Memory-bound verification (flat): a likely node is worth a cheap level, an unlikely one not
  // worth a dear one.
  const VerifyCostModel flat(Points{{1, 1.0}, {64, 1.0}});
  EXPECT_TRUE(deeper_level_may_pay(pool, likely, flat, 0.5, 0.05, 60));
  EXPECT_FALSE(deeper_level_may_pay(pool, unlikely, flat, 0.5, 0.5, 60));
  // Compute-bound (each token costs one more unit, the best tree so far makes 0.83 tokens per
  // unit): a node accepted half the time does not pay for its verification plus a level; a sure
  // one does.
  const VerifyCostModel linear(Points{{1, 1.0}, {64, 64.0}});
  EXPECT_FALSE(
      deeper_level_may_pay(pool, std::vector<float>{std::log(0.5f)}, linear, 0.5, 0.05, 60));
  EXPECT_TRUE(deeper_level_may_pay(pool, std::vector<float>{0.0f}, linear, 0.5, 0.05, 60));
  // No room for another token: never.
  EXPECT_FALSE(deeper_level_may_pay(pool, likely, flat, 0.5, 0.0, 4));
  // Empty pool (nothing drafted yet beyond the root's level) with a sure frontier: pays.
  EXPECT_TRUE(
      deeper_level_may_pay(std::vector<float>{}, std::vector<float>{0.0f}, flat, 0.1, 0.01, 60));
}

TEST(DynamicTreeBudget, CostModelsGiveTheTreesTheyPredict) {
  // Verification linear in k plus a draft cost of 2: rates for T = 1..5 are 1/3, 0.476, 0.529,
  // 0.553, 0.526, so the tree is the root plus a, c, g.
  const VerifyCostModel linear(Points{{1, 1.0}, {64, 64.0}});
  TableDraft draft(two_by_two());
  draft.choose = [&](std::span<const float> v, int64_t max_t) {
    return choose_total_tokens(v, linear, 2.0, max_t);
  };
  EXPECT_EQ(test::dynamic_tree_of(draft, {2, 2, 60}, 100).tokens,
            (std::vector<int32_t>{1, 10, 12, 16}));
  // Flat verification keeps the whole pool.
  const VerifyCostModel flat(Points{{1, 1.0}, {64, 1.0}});
  draft.choose = [&](std::span<const float> v, int64_t max_t) {
    return choose_total_tokens(v, flat, 2.0, max_t);
  };
  EXPECT_EQ(test::dynamic_tree_of(draft, {2, 2, 60}, 100).size(), 11);
}

// The start-up curve times every k up to 8 (where the chooser mostly lands, and where tile shapes
// make the curve uneven, so interpolating 5-7 from 4 and 8 misjudged them), then doubles to 64,
// as far as the context (half of it timed as history) allows.
TEST(MeasureVerifyCost, TimesEveryKUpToEightThenDoubles) {
  LlamaConfig cfg = test::tiny_config();
  auto target = test::load_random_model("budget-ks", cfg, DType::F32, 7, 0.3f);
  ThreadPool pool(1);
  auto ks_for = [&](int64_t ctx) {
    std::vector<CostPoint> curve;
    measure_verify_cost(*target, ctx, pool, &curve);
    std::vector<int64_t> ks;
    for (const CostPoint& p : curve) ks.push_back(p.k);
    return ks;
  };
  EXPECT_EQ(ks_for(512), (std::vector<int64_t>{1, 2, 3, 4, 5, 6, 7, 8, 16, 32, 64}));
  EXPECT_EQ(ks_for(80), (std::vector<int64_t>{1, 2, 3, 4, 5, 6, 7, 8, 16, 32}));  // 40 + k <= 80
  EXPECT_EQ(ks_for(12), (std::vector<int64_t>{1, 2, 3, 4, 5, 6}));                // 6 + k <= 12
  EXPECT_THROW(ks_for(0), Error);  // no room for even one token
}

TEST(DynamicTreeBudget, GreedyOutputEqualsPlainWithAutoBudgets) {
  const int64_t ctx = 512;
  LlamaConfig cfg = test::tiny_config();
  auto target = test::load_random_model("budget-eq", cfg, DType::F32, 31, 0.3f);
  auto head = EagleHead::load(test::write_random_head("budget-eq", *target), *target);
  ThreadPool pool(2);

  CostCurveOptions copt;
  copt.ks = {1, 2, 4, 8, 16, 32, 64};
  copt.context = 64;
  copt.repetitions = 2;
  Points measured;
  for (const CostPoint& p : measure_cost_curve(*target, copt, pool))
    measured.emplace_back(p.k, p.seconds);
  struct Case {
    const char* name;
    std::shared_ptr<const VerifyCostModel> cost;
  };
  const std::vector<Case> cases = {
      {"flat", std::make_shared<const VerifyCostModel>(Points{{1, 1.0}, {64, 1.0}})},
      // A second token costs a million first tokens: no drafted node can pay for itself, whatever
      // the draft confidences and the measured draft time (so the assertion cannot depend on the
      // machine's speed).
      {"steep", std::make_shared<const VerifyCostModel>(Points{{1, 1.0}, {2, 1e6}})},
      {"measured", std::make_shared<const VerifyCostModel>(measured)},
  };

  std::mt19937 rng(3);
  GenerationOptions opt;
  opt.max_new_tokens = 40;
  for (int p = 0; p < test::scaled(4); ++p) {
    std::vector<int32_t> prompt(1 + rng() % 20);
    for (auto& t : prompt) t = static_cast<int32_t>(rng() % cfg.vocab_size);
    const std::vector<int32_t> plain = test::plain_tokens(*target, prompt, opt, ctx, pool);
    for (const Case& c : cases) {
      SCOPED_TRACE(testing::Message() << c.name << ", prompt " << p);
      EagleDrafterOptions o;
      o.dynamic = {4, 3, 60};  // pool of 4 + 3 * 16 = 52 candidates
      o.context = ctx;
      o.auto_budget = true;
      EagleDrafter drafter(*head, pool, o, std::make_shared<DraftPolicy>(c.cost));
      std::vector<int64_t> sizes;
      SpeculativeHooks hooks;
      hooks.trace = [&](const CycleTrace& t) { sizes.push_back(t.tree.size()); };
      ASSERT_EQ(test::speculative_tokens(*target, drafter, prompt, opt, ctx, pool, hooks), plain);
      ASSERT_FALSE(sizes.empty());
      EXPECT_GE(drafter.draft_seconds_estimate(), 0.0);
      const int64_t largest = *std::max_element(sizes.begin(), sizes.end());
      if (std::string(c.name) == "flat") {
        EXPECT_EQ(largest, 53);
      } else if (std::string(c.name) == "steep") {
        EXPECT_EQ(largest, 1);
      }
    }
  }
}

// With calibration the auto budget first explores (trees of kExploreTokens while little is
// known), then judges after kJudgeAfter cycles whether speculating pays: under a cost no draft can
// pay for, it pauses (root-only cycles, kPauseCycles of them), and greedy output stays exact.
TEST(DynamicTreeBudget, CalibratedAutoBudgetExploresThenPausesWhenSpeculationCannotPay) {
  const int64_t ctx = 512;
  LlamaConfig cfg = test::tiny_config();
  auto target = test::load_random_model("budget-pause", cfg, DType::F32, 32, 0.3f);
  auto head = EagleHead::load(test::write_random_head("budget-pause", *target), *target);
  ThreadPool pool(2);
  GenerationOptions opt;
  opt.max_new_tokens = 48;
  const std::vector<int32_t> prompt = {5, 9, 2, 7};
  const std::vector<int32_t> plain = test::plain_tokens(*target, prompt, opt, ctx, pool);
  for (const bool steep : {true, false}) {
    SCOPED_TRACE(steep ? "steep" : "flat");
    EagleDrafterOptions o;
    o.dynamic = {2, 3, 60};
    o.context = ctx;
    o.calibrate = true;
    o.auto_budget = true;
    EagleDrafter drafter(*head, pool, o,
                         std::make_shared<DraftPolicy>(std::make_shared<const VerifyCostModel>(
                             steep ? Points{{1, 1.0}, {2, 1e6}} : Points{{1, 1.0}, {64, 1.0}})));
    std::vector<int64_t> sizes;
    SpeculativeHooks hooks;
    hooks.trace = [&](const CycleTrace& t) { sizes.push_back(t.tree.size()); };
    ASSERT_EQ(test::speculative_tokens(*target, drafter, prompt, opt, ctx, pool, hooks), plain);
    ASSERT_GE(sizes.size(), 4u);
    // Nothing learned yet: at least the exploration size, exactly that when no node pays.
    EXPECT_GE(sizes[0], DraftPacing::kExploreTokens);
    if (steep) {
      EXPECT_EQ(sizes[0], DraftPacing::kExploreTokens);
      // Judged after kJudgeAfter drafting cycles, then a pause of kPauseCycles root-only ones.
      const size_t judged = DraftPacing::kJudgeAfter;
      for (size_t i = judged; i < std::min(sizes.size(), judged + DraftPacing::kPauseCycles); ++i)
        EXPECT_EQ(sizes[i], 1) << "cycle " << i;
    } else {
      // Free verification: nothing to pause for before the first judgement (later ones depend
      // on how often this random head happens to be right, so they are not asserted).
      for (size_t i = 0; i < DraftPacing::kJudgeAfter; ++i) EXPECT_GT(sizes[i], 1) << "cycle " << i;
    }
  }
}

}  // namespace
}  // namespace eagle2

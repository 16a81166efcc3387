// Policy apart from mechanism (src/speculative/draft_policy.h, draft_pacing.h): what is learned
// per (head, temperature) is shared by the drafters of that pair through the engine's
// DraftPolicies, and each drafter's pacing (pause state, timing averages) stays its own.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <thread>

#include "core/error.h"
#include "draft/eagle_head.h"
#include "speculative/draft_pacing.h"
#include "speculative/draft_policy.h"
#include "speculative/drafter_spec.h"
#include "speculative/eagle_drafter.h"
#include "support/errors.h"
#include "support/random_models.h"

namespace eagle2 {
namespace {

using Points = std::vector<std::pair<int64_t, double>>;

// A second token costs a million first tokens: no draft can pay, so an auto budget pauses after
// DraftPacing::kJudgeAfter drafted cycles, whatever the head and the machine's speed.
std::shared_ptr<const VerifyCostModel> steep_cost() {
  return std::make_shared<const VerifyCostModel>(Points{{1, 1.0}, {2, 1e6}});
}

class DraftPolicyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    target_ = test::load_random_model("draft-policy", test::tiny_config(), DType::F32, 41, 0.3f);
    head_ = EagleHead::load(test::write_random_head("draft-policy", *target_), *target_);
    other_head_ = EagleHead::load(test::write_random_head("draft-policy-2", *target_, 6), *target_);
  }
  EagleDrafter& eagle(const std::unique_ptr<Drafter>& d) { return dynamic_cast<EagleDrafter&>(*d); }

  // One cycle by hand: draft, then verification kept `accepted` levels of the first-child chain
  // (0: the root alone). Features are zeros: the head only needs finite inputs.
  void begin(Drafter& d) {
    const std::vector<int32_t> context = {5, 9, 2, 7};
    const std::vector<float> features(context.size() * hidden(), 0.0f);
    d.begin(context, features.data(), 3);
  }
  DraftTree cycle(Drafter& d, int accepted = 0) {
    DraftTree tree;
    d.draft(64, tree);
    std::vector<int32_t> path = {0};
    for (int a = 0; a < accepted; ++a) {
      int32_t child = -1;
      for (int64_t i = 1; i < tree.size() && child < 0; ++i)
        if (tree.parents[static_cast<size_t>(i)] == path.back()) child = static_cast<int32_t>(i);
      if (child < 0) break;
      path.push_back(child);
    }
    const std::vector<float> features(path.size() * hidden(), 0.0f);
    d.accept(tree, path, features.data(), 11);
    return tree;
  }
  size_t hidden() const { return static_cast<size_t>(head_->config().hidden_size); }

  std::unique_ptr<LlamaModel> target_;
  std::unique_ptr<EagleHead> head_, other_head_;
  ThreadPool pool_{1};
};

TEST_F(DraftPolicyTest, OnePolicyPerHeadAndTemperature) {
  DraftPolicies policies;
  const auto p = policies.get(*head_, 0.7f);
  EXPECT_EQ(policies.get(*head_, 0.7f), p);
  EXPECT_NE(policies.get(*head_, 0.0f), p);
  EXPECT_NE(policies.get(*other_head_, 0.7f), p);
  EXPECT_EQ(policies.get(*head_, -0.0f), policies.get(*head_, 0.0f));
  EXPECT_EQ(policies.size(), 3u);
  EXPECT_THROW(policies.get(*head_, -1.0f), Error);
  EXPECT_THROW(policies.get(*head_, std::numeric_limits<float>::quiet_NaN()), Error);
}

// Temperatures share a policy by bucket: a request at 0.71 drafts from what requests at 0.7
// learned, greedy stays apart from every T > 0, and a client choosing a new temperature for each
// request cannot grow the map past a bucket per 0.05 (it was keyed by the exact float).
TEST_F(DraftPolicyTest, TemperaturesShareAPolicyByBucket) {
  DraftPolicies policies;
  const auto p = policies.get(*head_, 0.7f);
  EXPECT_EQ(policies.get(*head_, 0.71f), p);
  EXPECT_EQ(policies.get(*head_, 0.68f), p);
  EXPECT_NE(policies.get(*head_, 0.75f), p);
  EXPECT_NE(policies.get(*head_, 1.0f), p);
  EXPECT_NE(policies.get(*head_, 1e-6f), policies.get(*head_, 0.0f));
  EXPECT_EQ(DraftPolicies::temperature_bucket(0.7f), 15);
  EXPECT_EQ(DraftPolicies::temperature_bucket(1e-30f), 1);
  EXPECT_EQ(policies.get(*head_, 2.0f), policies.get(*head_, 1e30f));
  EXPECT_EQ(policies.get(*head_, 5.0f),
            policies.get(*head_, std::numeric_limits<float>::infinity()));
  for (int i = 0; i < 5000; ++i) policies.get(*head_, 0.0004f * static_cast<float>(i));
  EXPECT_LE(policies.size(), 2u + DraftPolicies::kLastBucket);
  // A drafter at 0.72 sees the calibration a drafter at 0.7 learned; one at 1 does not.
  DraftPolicies shared;
  const DrafterSpec spec = parse_drafter_spec("dynamic:8:3:2:cal");
  const auto warm = make_drafter(spec, head_.get(), pool_, 256, shared, 0.7f);
  const auto near = make_drafter(spec, head_.get(), pool_, 256, shared, 0.72f);
  const auto hot = make_drafter(spec, head_.get(), pool_, 256, shared, 1.0f);
  begin(*warm);
  for (int c = 0; c < 3; ++c) cycle(*warm, 1);
  EXPECT_GT(eagle(near).calibration().observations(), 0);
  EXPECT_EQ(eagle(near).calibration().observations(), eagle(warm).calibration().observations());
  EXPECT_EQ(eagle(hot).calibration().observations(), 0);
}

// sampled:auto sizes each tree from the sibling acceptance learned at the request's temperature
// (DraftPolicy::sibling_counts, per bucket) and the verify cost, before any token is drawn: two
// requests of one engine, at T = 0 and T = 1, each get the tree their own acceptance pays for.
// Were the bucket ignored, both would draft from one record and get one size.
TEST_F(DraftPolicyTest, SampledAutoBudgetUsesTheRequestsTemperaturesAcceptance) {
  // Each verified token beyond the first costs 0.3 of a forward of one.
  const auto cost = std::make_shared<const VerifyCostModel>(Points{{1, 1.0}, {64, 1.0 + 0.3 * 63}});
  DraftPolicies policies(cost);
  // Learned before: at T = 0 the first sibling is accepted 95 % of the time, at T = 1 half.
  const std::vector<int64_t> tried = {1000, 1000};
  policies.get(*head_, 0.0f)->record_siblings(tried, std::vector<int64_t>{950, 40});
  policies.get(*head_, 1.0f)->record_siblings(tried, std::vector<int64_t>{500, 200});
  const DrafterSpec spec = parse_drafter_spec("sampled:auto:6:2");
  const auto cold = make_drafter(spec, head_.get(), pool_, 256, policies, 0.0f);
  const auto hot = make_drafter(spec, head_.get(), pool_, 256, policies, 1.0f);
  hot->set_sampling({1.0f, 0, 1.0f, 5});
  std::vector<int64_t> sizes;
  for (const auto* d : {&cold, &hot}) {
    std::vector<float> keys;
    eagle(*d).sampled_shape(64, &keys);
    const int64_t want = choose_total_tokens(keys, *cost, 0.0, 64);
    begin(**d);
    const DraftTree tree = cycle(**d, 1);
    EXPECT_EQ(tree.size(), want);
    sizes.push_back(tree.size());
  }
  EXPECT_EQ(sizes[0], 8);  // 0.95 per level: the 7-level chain pays
  EXPECT_EQ(sizes[1], 2);  // 0.5: one drafted token
  // Each learned into its own bucket's record (and only there).
  EXPECT_GT(policies.get(*head_, 0.0f)->sibling_counts().tried[0], 1000);
  EXPECT_GT(policies.get(*head_, 1.0f)->sibling_counts().tried[0], 1000);
  EXPECT_TRUE(policies.get(*head_, 0.5f)->sibling_counts().tried.empty());
  // The spec: its numbers, its errors, and the cost curve it needs.
  const DrafterSpec plain_auto = parse_drafter_spec("sampled:auto");
  EXPECT_TRUE(plain_auto.auto_budget);
  EXPECT_EQ(plain_auto.dynamic.depth, DrafterSpec::kSampledDefaultDepth);
  EXPECT_EQ(plain_auto.dynamic.total_tokens, DrafterSpec::kAutoMaxTokens);
  EXPECT_NE(test::error_of([] { parse_drafter_spec("sampled:auto:4"); }), "");
  DraftPolicies unpriced;
  EXPECT_EQ(test::error_of([&] { make_drafter(spec, head_.get(), pool_, 256, unpriced, 1.0f); }),
            "drafter 'sampled:auto:6:2': an auto budget needs the verify cost curve");
}

// Shared counts that say nothing pays (a burst of hopeless requests at one temperature) must not
// lock every later sampled:auto request of that bucket into root-only trees, which would never
// record again: each sequence explores with DraftPacing::kExploreTokens-token trees until it has
// tried kExploreObservations first siblings itself, and the shared counts are a window.
TEST_F(DraftPolicyTest, SampledAutoExploresPastPoisonedCounts) {
  const auto cost = std::make_shared<const VerifyCostModel>(Points{{1, 1.0}, {64, 1.0 + 0.3 * 63}});
  DraftPolicies policies(cost);
  const auto policy = policies.get(*head_, 0.7f);
  const std::vector<int64_t> tried = {1000, 1000}, none = {0, 0};
  for (int i = 0; i < 100; ++i) policy->record_siblings(tried, none);
  EXPECT_LE(policy->sibling_counts().tried[0], DraftPolicy::kSiblingWindow);
  EXPECT_GT(policy->sibling_counts().tried[0], DraftPolicy::kSiblingWindow / 2);
  const auto d =
      make_drafter(parse_drafter_spec("sampled:auto:6:2"), head_.get(), pool_, 256, policies, 0.7f);
  d->set_sampling({0.7f, 0, 1.0f, 3});
  std::vector<float> keys;
  eagle(d).sampled_shape(64, &keys);
  ASSERT_EQ(choose_total_tokens(keys, *cost, 0.0, 64), 1);  // the counts alone: the root only
  begin(*d);
  const int64_t before = policy->sibling_counts().tried[0];
  EXPECT_EQ(cycle(*d, 1).size(), DraftPacing::kExploreTokens);
  EXPECT_GT(policy->sibling_counts().tried[0], before);  // and it records again
}

TEST_F(DraftPolicyTest, AnAutoBudgetNeedsAPolicyWithACostModel) {
  EagleDrafterOptions o;
  o.auto_budget = true;
  o.context = 256;
  EXPECT_EQ(test::error_of([&] { EagleDrafter d(*head_, pool_, o); }),
            "an auto tree budget needs the verify cost curve (a policy with a cost model)");
  EagleDrafter priced(*head_, pool_, o, std::make_shared<DraftPolicy>(steep_cost()));
  DraftPolicies unpriced;
  EXPECT_EQ(test::error_of([&] {
              make_drafter(parse_drafter_spec("dynamic:auto"), head_.get(), pool_, 256, unpriced,
                           0);
            }),
            "drafter 'dynamic:auto': an auto budget needs the verify cost curve");
}

TEST_F(DraftPolicyTest, DraftersOfOneHeadAndTemperatureShareTheCalibration) {
  DraftPolicies policies;
  const DrafterSpec spec = parse_drafter_spec("dynamic:8:3:2:cal");
  const auto a = make_drafter(spec, head_.get(), pool_, 256, policies, 0.0f);
  const auto b = make_drafter(spec, head_.get(), pool_, 256, policies, 0.0f);
  const auto hot = make_drafter(spec, head_.get(), pool_, 256, policies, 1.0f);
  EXPECT_EQ(eagle(a).policy(), eagle(b).policy());
  EXPECT_NE(eagle(a).policy(), eagle(hot).policy());
  begin(*a);
  for (int c = 0; c < 3; ++c) cycle(*a, 1);
  const int64_t learned = eagle(a).calibration().observations();
  EXPECT_GT(learned, 0);
  EXPECT_EQ(eagle(b).calibration().observations(), learned);  // b never decoded
  EXPECT_EQ(eagle(hot).calibration().observations(), 0);
  // b learns into the same record.
  begin(*b);
  cycle(*b, 1);
  EXPECT_GT(eagle(a).calibration().observations(), learned);
  // The owner forgets for every drafter; reset() alone does not.
  a->reset();
  EXPECT_GT(eagle(b).calibration().observations(), learned);
  policies.forget();
  EXPECT_EQ(eagle(a).calibration().observations(), 0);
  EXPECT_EQ(eagle(b).calibration().observations(), 0);
}

TEST_F(DraftPolicyTest, PausingOneSequenceDoesNotPauseAnother) {
  DraftPolicies policies(steep_cost());
  const DrafterSpec spec = parse_drafter_spec("dynamic:auto:3:2:cal");
  const auto a = make_drafter(spec, head_.get(), pool_, 256, policies, 0.0f);
  const auto b = make_drafter(spec, head_.get(), pool_, 256, policies, 0.0f);
  ASSERT_EQ(eagle(a).policy(), eagle(b).policy());
  begin(*a);
  begin(*b);
  // Nothing can pay: a explores kExploreTokens-token trees, is judged, and pauses.
  for (int c = 0; c < DraftPacing::kJudgeAfter; ++c)
    EXPECT_EQ(cycle(*a).size(), DraftPacing::kExploreTokens) << "cycle " << c;
  EXPECT_EQ(eagle(a).pacing().pause_left(), DraftPacing::kPauseCycles);
  EXPECT_EQ(cycle(*a).size(), 1);  // paused: the root alone
  EXPECT_TRUE(eagle(a).pacing().skipped());
  // b shares a's calibration (and so still explores) but not its pause.
  EXPECT_EQ(eagle(b).pacing().pause_left(), 0);
  EXPECT_EQ(cycle(*b).size(), DraftPacing::kExploreTokens);
  EXPECT_FALSE(eagle(b).pacing().skipped());
  EXPECT_EQ(eagle(a).pacing().pause_left(), DraftPacing::kPauseCycles - 1);
  // reset() ends a's pause (its own state), and leaves the shared calibration alone.
  const int64_t learned = eagle(b).calibration().observations();
  a->reset();
  EXPECT_EQ(eagle(a).pacing().pause_left(), 0);
  EXPECT_EQ(cycle(*a).size(), DraftPacing::kExploreTokens);
  EXPECT_GT(eagle(b).calibration().observations(), learned);
}

TEST_F(DraftPolicyTest, APolicyOutlivesItsDraftersAndDraftersOutliveTheOwner) {
  auto policies = std::make_unique<DraftPolicies>();
  const DrafterSpec spec = parse_drafter_spec("dynamic:8:3:2:cal");
  {
    const auto a = make_drafter(spec, head_.get(), pool_, 256, *policies, 0.0f);
    begin(*a);
    cycle(*a, 1);
  }
  // What the finished sequence taught stays for the next one.
  const auto b = make_drafter(spec, head_.get(), pool_, 256, *policies, 0.0f);
  const int64_t learned = eagle(b).calibration().observations();
  EXPECT_GT(learned, 0);
  // The drafter holds its policy: it keeps working, and learning, without the owner.
  policies.reset();
  begin(*b);
  cycle(*b, 1);
  EXPECT_GT(eagle(b).calibration().observations(), learned);
}

TEST(DraftPolicy, ConcurrentRecordsAllLandAndSnapshotsAreWhole) {
  DraftPolicy policy;
  constexpr int kPerThread = 2000;
  auto writer = [&policy](bool accepted) {
    for (int i = 0; i < kPerThread; ++i) {
      const NodeOutcome o{-0.5f, i % 2, accepted};
      policy.record(std::span(&o, 1));
    }
  };
  std::thread t1(writer, true), t2(writer, false);
  int64_t last = 0;
  for (int i = 0; i < 200; ++i) {
    const int64_t now = policy.calibration().observations();
    EXPECT_GE(now, last);  // never a torn or stale-then-fresh read
    last = now;
  }
  t1.join();
  t2.join();
  EXPECT_EQ(policy.calibration().observations(), 2 * kPerThread);
  EXPECT_EQ(policy.cost(), nullptr);
}

TEST(DraftPacing, PausesAfterJudgingAndDoublesEachFailedTry) {
  const auto cost = steep_cost();
  DraftPacing pacing;
  EXPECT_FALSE(pacing.skip_cycle(false));
  for (int c = 0; c < DraftPacing::kJudgeAfter; ++c) {
    EXPECT_FALSE(pacing.skip_cycle(true));
    pacing.judge(1, 4, *cost);
  }
  EXPECT_EQ(pacing.pause_left(), DraftPacing::kPauseCycles);
  EXPECT_FALSE(pacing.skip_cycle(false)) << "without an auto budget nothing is skipped";
  for (int c = 0; c < DraftPacing::kPauseCycles; ++c) EXPECT_TRUE(pacing.skip_cycle(true));
  EXPECT_FALSE(pacing.skip_cycle(true));
  for (int c = 0; c < DraftPacing::kJudgeAfter; ++c) pacing.judge(1, 4, *cost);
  EXPECT_EQ(pacing.pause_left(), 2 * DraftPacing::kPauseCycles);
  // Paying cycles (free verification) do not pause.
  const VerifyCostModel flat(Points{{1, 1.0}, {64, 1.0}});
  DraftPacing paying;
  for (int c = 0; c < 3 * DraftPacing::kJudgeAfter; ++c) paying.judge(3, 8, flat);
  EXPECT_EQ(paying.pause_left(), 0);
}

// A rate a little below plain decoding's waits for the slow average's judgement; far below, the
// fast one pauses at once; a few unlucky cycles among paying ones pause nothing.
TEST(DraftPacing, OnlyARateFarBelowPlainPausesEarly) {
  const VerifyCostModel cost(Points{{1, 1.0}, {8, 1.5}, {64, 2.0}});  // plain: 1 token per second
  DraftPacing near;  // 1 token per 1.5 s: 0.67x plain
  for (int c = 1; c < DraftPacing::kSteadyJudgeAfter; ++c) {
    near.judge(1, 8, cost);
    EXPECT_EQ(near.pause_left(), 0) << "cycle " << c;
  }
  near.judge(1, 8, cost);
  EXPECT_EQ(near.pause_left(), DraftPacing::kPauseCycles);
  DraftPacing far;  // 1 token per 2 s: 0.5x plain, under kFarBelow
  for (int c = 1; c < DraftPacing::kJudgeAfter; ++c) far.judge(1, 64, cost);
  EXPECT_EQ(far.pause_left(), 0);
  far.judge(1, 64, cost);
  EXPECT_EQ(far.pause_left(), DraftPacing::kPauseCycles);
  // 1.33x plain, then three cycles at 0.67x: the fast average dips under plain (0.95x), the slow
  // one does not (1.15x).
  DraftPacing dip;
  for (int c = 0; c < DraftPacing::kSteadyJudgeAfter; ++c) dip.judge(2, 8, cost);
  for (int c = 0; c < 3; ++c) dip.judge(1, 8, cost);
  EXPECT_EQ(dip.pause_left(), 0);
}

TEST(DraftPacing, DraftTimeAverageAndExplorationFloor) {
  const VerifyCostModel cost(Points{{1, 1.0}, {2, 1e6}}, 0.5);
  DraftPacing pacing;
  EXPECT_EQ(pacing.draft_seconds(&cost), 0.5);  // the model's until measured
  EXPECT_EQ(pacing.draft_seconds(nullptr), 0.0);
  pacing.measured_draft(2.0);
  pacing.measured_draft(4.0);
  EXPECT_DOUBLE_EQ(pacing.draft_seconds(&cost), 0.75 * 2.0 + 0.25 * 4.0);
  const std::vector<float> values = {-0.1f, -0.2f, -0.3f, -0.4f, -0.5f};
  EXPECT_EQ(pacing.budget(values, cost, 64, nullptr), 1);  // nothing pays
  AcceptanceCalibration fresh;
  EXPECT_EQ(pacing.budget(values, cost, 64, &fresh), DraftPacing::kExploreTokens);
  EXPECT_EQ(pacing.budget(values, cost, 2, &fresh), 2);  // never past the room
  AcceptanceCalibration seasoned;
  for (int i = 0; i < DraftPacing::kExploreObservations; ++i) seasoned.record(-0.1f, 0, false);
  EXPECT_EQ(pacing.budget(values, cost, 64, &seasoned), 1);
}

// A drafter's weights are loaded once per (kind, folder) for all the sequences of an engine, a
// failed load is not cached, and forgetting what was learned keeps them.
TEST(DraftAssets, LoadOncePerKindAndFolder) {
  DraftPolicies policies;
  DraftAssets& assets = policies.assets();
  EXPECT_EQ(assets.target(), nullptr);
  int loads = 0;
  const std::function<std::unique_ptr<int>()> load = [&] {
    ++loads;
    return std::make_unique<int>(loads);
  };
  const std::shared_ptr<int> a = assets.get<int>("sps", "models/x", load);
  EXPECT_EQ(assets.get<int>("sps", "models/./x/", load), a);  // one folder, written twice
  EXPECT_NE(assets.get<int>("medusa", "models/x", load), a);  // another kind, another load
  EXPECT_EQ(loads, 2);
  const std::function<std::unique_ptr<int>()> failing = [&]() -> std::unique_ptr<int> {
    ++loads;
    fail("broken folder");
  };
  EXPECT_THROW(assets.get<int>("sps", "models/y", failing), Error);
  EXPECT_EQ(*assets.get<int>("sps", "models/y", load), 4);  // tried again, not cached
  policies.forget();
  EXPECT_EQ(assets.get<int>("sps", "models/x", load), a);
  EXPECT_EQ(loads, 4);
}

}  // namespace
}  // namespace eagle2

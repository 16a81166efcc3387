// A failure while EAGLE-2 trees are drafted in lockstep (one head forward per level for several
// sequences, speculative/batch_drafting.h) fails only the sequence whose drafting fails: which
// drafter broke cannot be told from the exception, so the batch decoder drafts each member of the
// group again alone, and that is sound only because a failed lockstep leaves every EagleDrafter
// clean (EagleDrafter::abandon_lockstep). Both are shown here: twin drafters, one of which goes
// through a failed lockstep before every cycle it drafts alone, stay equal in trees, head position
// and pacing (paused cycles included); and in a batch, the faulty sequence fails alone while the
// others of its group decode on to exactly their plain greedy tokens.
#include <gtest/gtest.h>

#include <random>

#include "core/error.h"
#include "draft/eagle_head.h"
#include "speculative/batch_decoder.h"
#include "speculative/batch_drafting.h"
#include "speculative/draft_policy.h"
#include "speculative/eagle_drafter.h"
#include "support/decoding.h"
#include "support/errors.h"
#include "support/random_models.h"

namespace eagle2 {
namespace {

std::vector<float> random_features(int64_t rows, int64_t width, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> v(static_cast<size_t>(rows * width));
  for (float& x : v) x = dist(rng);
  return v;
}

// Where the faulty group member breaks the lockstep: in its catch-up rows (its head cache is too
// small for its prompt, a real fault: the others' catch-up rows are then reserved, not
// committed), or in its first expansion (an injected fault: the others' catch-up is committed
// and their trees half built).
enum class Breaks { InCatchUp, InExpansion };

// X and Y: the same head, options, policy and inputs. Before each of X's cycles, a lockstep of X
// with the faulty F throws; X abandons it and proposes alone, as the batch decoder does. Y only
// ever proposes alone. Any state the failed lockstep left behind (a pause counted twice, a
// catch-up lost or fed twice, a tree half built) would make them differ. Verification accepts the
// root alone and the verify cost is steep, so the pacing pauses: paused cycles are in the test.
void failed_lockstep_leaves_the_drafter_clean(Breaks breaks) {
  auto target =
      test::load_random_model("lockstep-faults", test::tiny_config(), DType::BF16, 21, 0.3f);
  auto head = EagleHead::load(test::write_random_head("lockstep-faults", *target), *target);
  ThreadPool pool(1);
  const auto curve = std::make_shared<const VerifyCostModel>(
      std::vector<std::pair<int64_t, double>>{{1, 1e-3}, {4, 1e-2}, {64, 2e-2}});
  auto policy = std::make_shared<DraftPolicy>(curve);
  EagleDrafterOptions o;
  o.context = 256;
  o.auto_budget = true;
  o.adaptive_depth = false;  // a level's worth would depend on measured time
  o.dynamic.top_k = 4;
  o.dynamic.depth = 3;
  EagleDrafter x(*head, pool, o, policy), y(*head, pool, o, policy);
  EagleDrafterOptions faulty = o;
  faulty.auto_budget = false;  // never paused: it reaches its fault every time
  if (breaks == Breaks::InCatchUp) faulty.context = 4;  // 24 prompt rows do not fit its cache
  EagleDrafter f(*head, pool, faulty, policy);
  if (breaks == Breaks::InExpansion) f.inject_expansion_fault(0);

  const int64_t vocab = target->config().vocab_size, width = head->feature_width();
  std::vector<int32_t> prompt(24);
  for (size_t i = 0; i < prompt.size(); ++i) prompt[i] = static_cast<int32_t>((i * 7 + 3) % vocab);
  const std::vector<float> features = random_features(24, width, 1);
  x.begin(prompt, features.data(), 11);
  y.begin(prompt, features.data(), 11);
  f.begin(prompt, features.data(), 11);

  constexpr int64_t kMaxTokens = 16;
  int paused = 0, drafted = 0;
  for (int cycle = 0; cycle < 30; ++cycle) {
    SCOPED_TRACE("cycle " + std::to_string(cycle));
    std::vector<EagleDrafter*> group{&x, &f};
    const std::vector<int64_t> limits{kMaxTokens, kMaxTokens};
    std::vector<Drafter::Proposal> made;
    EXPECT_THROW(propose_in_lockstep(group, limits, *head, pool, made), Error);
    x.abandon_lockstep();
    const Drafter::Proposal px = x.propose(kMaxTokens), py = y.propose(kMaxTokens);
    ASSERT_EQ(px.choosable, py.choosable);
    ASSERT_EQ(std::vector<float>(px.values_desc.begin(), px.values_desc.end()),
              std::vector<float>(py.values_desc.begin(), py.values_desc.end()));
    DraftTree tx, ty;
    x.complete(8, tx);
    y.complete(8, ty);
    ASSERT_EQ(tx.tokens, ty.tokens);
    ASSERT_EQ(tx.parents, ty.parents);
    EXPECT_EQ(x.stable_length(), y.stable_length());
    EXPECT_EQ(x.pacing().skipped(), y.pacing().skipped());
    ASSERT_EQ(x.pacing().pause_left(), y.pacing().pause_left());
    paused += y.pacing().skipped() ? 1 : 0;
    drafted += ty.size() > 1 ? 1 : 0;
    // The root alone accepted, the bonus some token: one new pair to catch up on.
    const std::vector<int32_t> path{0};
    const std::vector<float> path_features = random_features(1, width, 100 + cycle);
    const auto bonus = static_cast<int32_t>((cycle * 13 + 5) % vocab);
    x.accept(tx, path, path_features.data(), bonus);
    y.accept(ty, path, path_features.data(), bonus);
  }
  EXPECT_GT(paused, 0) << "the pacing never paused: paused cycles untested";
  EXPECT_GT(drafted, 0) << "no tree was drafted";
}

TEST(LockstepFaults, ALockstepFailingInAnotherCatchUpLeavesTheDrafterClean) {
  failed_lockstep_leaves_the_drafter_clean(Breaks::InCatchUp);
}

TEST(LockstepFaults, ALockstepFailingInAnotherExpansionLeavesTheDrafterClean) {
  failed_lockstep_leaves_the_drafter_clean(Breaks::InExpansion);
}

struct Group {
  std::unique_ptr<LlamaModel> target;
  std::unique_ptr<EagleHead> head;
  ThreadPool pool{1};
  std::shared_ptr<KvPool> kv_pool;
  std::unique_ptr<BatchDecoder> decoder;
  GenerationOptions opt;
  std::vector<std::vector<int32_t>> prompts;
  std::vector<int64_t> ids;
};

// Three sequences with EAGLE-2 dynamic trees on one head under a batch cost model (as a server
// runs them: drafted in lockstep), the middle one with `fault` from its `after`-th cycle on.
std::unique_ptr<Group> lockstep_group(GenerationOptions::TestFault fault, int64_t after) {
  auto g = std::make_unique<Group>();
  g->target =
      test::load_random_model("lockstep-faults", test::tiny_config(), DType::BF16, 21, 0.3f);
  g->head = EagleHead::load(test::write_random_head("lockstep-faults", *g->target), *g->target);
  g->kv_pool = g->target->make_pool(16 * 16, 16);
  const VerifyCostModel curve({{1, 1e-3}, {12, 1.1e-3}, {64, 6e-3}});
  g->decoder = std::make_unique<BatchDecoder>(
      *g->target, g->kv_pool, 64, g->pool,
      std::make_shared<const BatchCostModel>(BatchCostModel::single(curve)));
  g->opt.max_new_tokens = 16;
  g->opt.stop_at_eos = false;
  EagleDrafterOptions eagle;
  eagle.context = 64;
  eagle.auto_budget = true;
  eagle.dynamic.top_k = 4;
  eagle.dynamic.depth = 3;
  auto policy = std::make_shared<DraftPolicy>(std::make_shared<const VerifyCostModel>(curve));
  for (int32_t i = 0; i < 3; ++i) {
    g->prompts.emplace_back(32, 5 + i);
    GenerationOptions opt = g->opt;
    if (i == 1) {
      opt.test_fault = fault;
      opt.test_fault_after_cycles = after;
    }
    g->ids.push_back(g->decoder->add(
        g->prompts.back(), opt, std::make_unique<EagleDrafter>(*g->head, g->pool, eagle, policy)));
  }
  return g;
}

// The middle sequence's head expansion fails from its `after`-th cycle on, inside the lockstep:
// it fails alone in that step (reported, its KV memory released), the step does not throw, and
// the two others decode on to exactly their plain greedy tokens.
void the_faulty_member_fails_alone(int64_t after) {
  auto g = lockstep_group(GenerationOptions::TestFault::Drafting, after);
  BatchDecoder& d = *g->decoder;
  const int64_t a = g->ids[0], f = g->ids[1], c = g->ids[2];
  int steps = 0;
  while (!d.finished(f)) {
    ASSERT_LT(++steps, 40);
    d.step();
    if (d.finished(f)) {
      EXPECT_EQ(d.failed_in_last_step(), std::vector<int64_t>{f});
    } else {
      EXPECT_TRUE(d.failed_in_last_step().empty());
    }
  }
  EXPECT_TRUE(d.failed(f));
  EXPECT_EQ(d.stats(f).cycles, after);
  EXPECT_FALSE(d.finished(a));
  EXPECT_FALSE(d.finished(c));
  while (d.live() > 0) {
    d.step();
    EXPECT_TRUE(d.failed_in_last_step().empty());
  }
  EXPECT_FALSE(d.failed(a));
  EXPECT_FALSE(d.failed(c));
  for (int64_t id : {a, c}) {
    EXPECT_EQ(d.tokens(id), test::plain_tokens(*g->target, g->prompts[static_cast<size_t>(id)],
                                               g->opt, 64, g->pool))
        << "sequence " << id;
    EXPECT_GT(d.stats(id).drafted_tokens, 0);
  }
  EXPECT_EQ(g->kv_pool->used_blocks(), 0);
}

TEST(LockstepFaults, AMemberWhoseFirstLockstepFailsFailsAlone) {
  the_faulty_member_fails_alone(0);
}

TEST(LockstepFaults, AMemberWhoseLockstepFailsMidDecodingFailsAlone) {
  the_faulty_member_fails_alone(3);
}

// The fault above is the drafter's own, thrown inside the lockstep: with the other two gone, the
// faulty sequence's step fails as a whole with the head's message (not the decoder's own check).
TEST(LockstepFaults, TheInjectedDraftingFaultIsTheHeadExpansions) {
  auto g = lockstep_group(GenerationOptions::TestFault::Drafting, 0);
  BatchDecoder& d = *g->decoder;
  d.cancel(g->ids[0]);
  d.cancel(g->ids[2]);
  d.step();  // the prompt
  EXPECT_EQ(test::error_of([&] { d.step(); }),
            "draft head: injected test fault in this sequence's expansion");
  EXPECT_EQ(d.failed_in_last_step(), std::vector<int64_t>{g->ids[1]});
}

// An injected verification fault (after the drafter's accept) fails the lockstep member alone too.
// The batch pacing judges every drafting step but that one (a lost sequence's tokens would count
// as drafting that did not pay).
TEST(LockstepFaults, AMemberWhoseVerificationFailsFailsAlone) {
  auto g = lockstep_group(GenerationOptions::TestFault::Verification, 2);
  BatchDecoder& d = *g->decoder;
  int64_t judged_before_failure = 0;
  while (d.live() > 0) {
    const int64_t judged = d.batch_pacing().steps_judged();
    d.step();
    if (!d.failed_in_last_step().empty()) {
      EXPECT_EQ(d.batch_pacing().steps_judged(), judged) << "the failing step was judged";
      judged_before_failure = judged;
    }
  }
  EXPECT_GT(judged_before_failure, 0) << "no drafting step was judged before the failure";
  EXPECT_GT(d.batch_pacing().steps_judged(), judged_before_failure) << "none after it";
  EXPECT_TRUE(d.failed(g->ids[1]));
  EXPECT_EQ(d.stats(g->ids[1]).cycles, 2);
  for (int64_t id : {g->ids[0], g->ids[2]}) {
    EXPECT_FALSE(d.failed(id));
    EXPECT_EQ(d.tokens(id), test::plain_tokens(*g->target, g->prompts[static_cast<size_t>(id)],
                                               g->opt, 64, g->pool));
  }
  EXPECT_EQ(g->kv_pool->used_blocks(), 0);
}

}  // namespace
}  // namespace eagle2

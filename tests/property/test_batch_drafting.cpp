// Drafting in lockstep (speculative/batch_drafting.h) gives every sequence exactly the tree its
// drafter drafts alone: the same tokens, parents and values, cycle after cycle, whatever the
// other sequences (their prompts, depths, widths, budgets, calibration, ablation), because every
// head row and every draft log-prob row is bit-identical to its sequence's own. With EAGLE-2 and
// EAGLE-3 heads (whose catch-up rows are target features of another width, through fc).
#include <gtest/gtest.h>

#include <random>

#include "draft/eagle_head.h"
#include "speculative/batch_drafting.h"
#include "speculative/eagle_drafter.h"
#include "support/eagle3_heads.h"
#include "support/equality_runs.h"
#include "support/random_models.h"

namespace eagle2 {
namespace {

void expect_lockstep_trees_equal_own(LlamaModel* target, EagleHead* head) {
  ThreadPool pool(2);
  // The width of the made-up target features: the head's (three layers for EAGLE-3).
  const int64_t V = target->config().vocab_size, d = head->feature_width();
  const auto prompts = test::random_prompts(7, 8, V);
  // Verify costs in seconds, so that the measured draft times (milliseconds, more under the
  // sanitizers) weigh nothing in the pacing's judgement: a drafter pausing because its own draft
  // took longer than its twin's would make the two proposals differ by timing alone.
  auto policy = std::make_shared<DraftPolicy>(std::make_shared<const VerifyCostModel>(
      std::vector<std::pair<int64_t, double>>{{1, 1.0}, {8, 1.1}, {64, 4.0}}));
  // Per sequence: its options (different shapes of dynamic trees).
  std::vector<EagleDrafterOptions> options(prompts.size());
  for (size_t i = 0; i < options.size(); ++i) {
    options[i].context = 256;
    options[i].dynamic.top_k = 2 + static_cast<int>(i % 3);
    options[i].dynamic.depth = 2 + static_cast<int>(i);
    options[i].dynamic.total_tokens = 5 + 4 * static_cast<int>(i);
    options[i].auto_budget = i % 2 == 1;
    options[i].calibrate = i >= 2;
    // The EAGLE-2 ablation, with fixed and chosen budgets: 4, 5 without the value, 6, 7 without
    // reranking.
    if (i == 4 || i == 5) options[i].dynamic.ranking = DynamicTreeParams::Ranking::OwnConfidence;
    if (i >= 6) options[i].dynamic.rerank = false;
    // Levels stopped by measured times would make the two pools differ by timing alone (lockstep
    // drafting drafts every level): compared here is the drafting itself.
    options[i].adaptive_depth = false;
  }
  // Two drafters per sequence: one drafting alone, one in lockstep with the others.
  std::vector<std::unique_ptr<EagleDrafter>> alone, together;
  std::mt19937 rng(3);
  std::normal_distribution<float> feature(0.0f, 1.0f);
  for (size_t i = 0; i < prompts.size(); ++i) {
    alone.push_back(std::make_unique<EagleDrafter>(*head, pool, options[i], policy));
    together.push_back(std::make_unique<EagleDrafter>(*head, pool, options[i], policy));
    std::vector<float> f(prompts[i].size() * static_cast<size_t>(d));
    for (float& x : f) x = feature(rng);
    const int32_t root = static_cast<int32_t>(i + 1);
    alone[i]->begin(prompts[i], f.data(), root);
    together[i]->begin(prompts[i], f.data(), root);
  }
  std::vector<EagleDrafter*> group;
  for (auto& t : together) group.push_back(t.get());
  int64_t nodes = 0;
  for (int cycle = 0; cycle < 6; ++cycle) {
    const std::vector<int64_t> limits(prompts.size(), 40);
    std::vector<Drafter::Proposal> proposals;
    propose_in_lockstep(group, limits, *head, pool, proposals);
    // Every proposal before any acceptance: the drafters share one calibration, and a snapshot
    // must not see this cycle's outcomes of the others in one run and not in the other.
    std::vector<Drafter::Proposal> owns;
    for (size_t i = 0; i < prompts.size(); ++i) owns.push_back(alone[i]->propose(40));
    std::vector<DraftTree> trees(prompts.size());
    for (size_t i = 0; i < prompts.size(); ++i) {
      const Drafter::Proposal& own = owns[i];
      ASSERT_EQ(own.choosable, proposals[i].choosable);
      ASSERT_EQ(
          std::vector<float>(own.values_desc.begin(), own.values_desc.end()),
          std::vector<float>(proposals[i].values_desc.begin(), proposals[i].values_desc.end()))
          << "sequence " << i << ", cycle " << cycle;
      // Both complete at one size (a budget the batch might choose).
      const int64_t t = 1 + (cycle + static_cast<int64_t>(i)) % 7;
      DraftTree b;
      alone[i]->complete(t, trees[i]);
      together[i]->complete(t, b);
      const DraftTree& a = trees[i];
      ASSERT_EQ(a.tokens, b.tokens) << "sequence " << i << ", cycle " << cycle;
      ASSERT_EQ(a.parents, b.parents);
      ASSERT_EQ(a.values, b.values);
      nodes += a.size() - 1;
    }
    for (size_t i = 0; i < prompts.size(); ++i) {
      const DraftTree& a = trees[i];
      // Accept the first child chain up to 2 nodes, with the same made-up target features.
      std::vector<int32_t> path{0};
      for (int32_t n = 1; n < a.size() && path.size() < 3; ++n)
        if (a.parents[n] == path.back()) path.push_back(n);
      std::vector<float> f(path.size() * static_cast<size_t>(d));
      for (float& x : f) x = feature(rng);
      const int32_t bonus = static_cast<int32_t>((cycle * 7 + i) % V);
      alone[i]->accept(a, path, f.data(), bonus);
      together[i]->accept(a, path, f.data(), bonus);
    }
  }
  EXPECT_GT(nodes, 20) << "the trees were not trivial";
}

TEST(BatchDrafting, LockstepTreesEqualEachDraftersOwn) {
  auto target = test::load_random_model("lockstep", test::tiny_config(), DType::BF16, 21, 0.3f);
  auto head = EagleHead::load(test::write_random_head("lockstep", *target), *target);
  expect_lockstep_trees_equal_own(target.get(), head.get());
}

TEST(BatchDrafting, LockstepTreesEqualEachDraftersOwnWithAnEagle3Head) {
  auto target = test::load_random_model("lockstep", test::tiny_config(), DType::BF16, 21, 0.3f);
  auto head = test::load_random_eagle3_head("lockstep", *target);
  ASSERT_EQ(head->feature_width(), 2 * target->config().hidden_size);
  expect_lockstep_trees_equal_own(target.get(), head.get());
}

}  // namespace
}  // namespace eagle2

// Trees sized for the whole batch (speculative/batch_budget.h): the candidates of all sequences
// compete by value for the step's rows, and the number kept maximizes the step's expected tokens
// per second under a (here scripted) multi-sequence cost curve.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>

#include "speculative/batch_budget.h"
#include "speculative/batch_pacing.h"
#include "support/errors.h"

namespace eagle2 {
namespace {

// Rows up to `plateau` cost `base` seconds (memory-bound: the weights are read once whatever the
// rows), every row past it `slope` more (compute-bound).
BatchCostModel plateau_cost(int64_t plateau, double base, double slope) {
  std::vector<std::pair<int64_t, double>> points = {{1, base}};
  if (plateau > 1) points.emplace_back(plateau, base);
  points.emplace_back(plateau + 100, base + slope * 100);
  return BatchCostModel::single(VerifyCostModel(std::move(points)));
}

double rate_of(const std::vector<std::vector<float>>& values, const std::vector<int64_t>& totals,
               int64_t sequences, int64_t fixed_rows, double fixed_tokens, double draft,
               const BatchCostModel& cost) {
  double tokens = fixed_tokens;
  int64_t rows = fixed_rows;
  for (size_t j = 0; j < values.size(); ++j) {
    tokens += 1;
    rows += totals[j];
    for (int64_t i = 0; i + 1 < totals[j]; ++i)
      tokens += std::exp(values[j][static_cast<size_t>(i)]);
  }
  return tokens / (draft + cost.seconds(sequences, rows));
}

std::vector<SequenceCandidates> candidates_of(const std::vector<std::vector<float>>& values,
                                              int64_t max_tokens = 64) {
  std::vector<SequenceCandidates> c;
  for (const auto& v : values) c.push_back({v, 1, max_tokens});
  return c;
}

TEST(BatchBudget, KeepsTheGlobalTopMSoConfidentSequencesGetMore) {
  // A confident sequence and a weak one: the kept set is the best M values of both together.
  const std::vector<std::vector<float>> values = {{-0.05f, -0.1f, -0.2f, -0.3f, -0.5f, -0.7f},
                                                  {-1.0f, -2.0f, -3.0f, -4.0f}};
  const BatchCostModel cost = plateau_cost(6, 1e-3, 2e-4);
  const BatchBudget b = choose_batch_budget(candidates_of(values), 2, 0, 0, 0, cost);
  ASSERT_EQ(b.total_tokens.size(), 2u);
  EXPECT_GT(b.total_tokens[0], b.total_tokens[1]);
  EXPECT_EQ(b.kept, b.total_tokens[0] - 1 + b.total_tokens[1] - 1);
  // Global top-M: every kept value beats (or ties) every value left out.
  float worst_kept = 0, best_left = -1e9f;
  for (size_t j = 0; j < values.size(); ++j)
    for (size_t i = 0; i < values[j].size(); ++i) {
      if (static_cast<int64_t>(i) + 1 < b.total_tokens[j])
        worst_kept = std::min(worst_kept, values[j][i]);
      else
        best_left = std::max(best_left, values[j][i]);
    }
  EXPECT_GE(worst_kept, best_left);
  EXPECT_GT(b.kept, 0);
}

TEST(BatchBudget, ChoiceIsTheBestOfEveryCombinationOfTreeSizes) {
  // Exhaustive over every per-sequence tree size: no combination beats the chosen one.
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> value(-4.0f, 0.0f);
  std::uniform_int_distribution<int> plateau(1, 12);
  for (int trial = 0; trial < 200; ++trial) {
    const int n = 1 + trial % 3;
    std::vector<std::vector<float>> values(static_cast<size_t>(n));
    for (auto& v : values) {
      v.resize(static_cast<size_t>(1 + rng() % 5));
      for (float& x : v) x = value(rng);
      std::sort(v.begin(), v.end(), std::greater<float>());
    }
    const BatchCostModel cost = plateau_cost(plateau(rng), 1e-3, 1e-4 * (1 + rng() % 20));
    const int64_t fixed_rows = rng() % 4;
    const double fixed_tokens = static_cast<double>(fixed_rows), draft = 1e-4 * (rng() % 5);
    const int64_t sequences = n + fixed_rows;
    const BatchBudget b = choose_batch_budget(candidates_of(values), sequences, fixed_rows,
                                              fixed_tokens, draft, cost);
    const double chosen =
        rate_of(values, b.total_tokens, sequences, fixed_rows, fixed_tokens, draft, cost);
    EXPECT_NEAR(chosen, b.expected_tokens / b.seconds, 1e-7 * chosen);  // summation order
    std::vector<int64_t> totals(static_cast<size_t>(n), 1);
    std::function<void(size_t)> each = [&](size_t j) {
      if (j == totals.size()) {
        EXPECT_LE(rate_of(values, totals, sequences, fixed_rows, fixed_tokens, draft, cost),
                  chosen * (1 + 1e-9))
            << "trial " << trial;
        return;
      }
      for (int64_t t = 1; t <= static_cast<int64_t>(values[j].size()) + 1; ++t) {
        totals[j] = t;
        each(j + 1);
      }
    };
    each(0);
  }
}

TEST(BatchBudget, KeptRowsFallAsSequencesGrowAndStopWhenDraftingCannotPay) {
  // Every sequence has the same candidates; the forward is free up to 16 rows, then each row costs
  // a quarter of the base. With few sequences the trees fill the plateau and more; with many, the
  // sequences' own rows use it up and no draft token is worth its compute.
  const std::vector<float> head = {-0.05f, -0.2f, -0.4f, -0.7f, -1.0f, -1.4f, -1.9f, -2.5f};
  const BatchCostModel cost = plateau_cost(16, 1e-3, 2.5e-4);
  int64_t previous_total = std::numeric_limits<int64_t>::max();
  double previous_per_sequence = 1e9;
  for (int64_t B : {1, 2, 4, 8, 16, 32}) {
    const std::vector<std::vector<float>> values(static_cast<size_t>(B), head);
    const BatchBudget b = choose_batch_budget(candidates_of(values), B, 0, 0, 0, cost);
    const double per_sequence = static_cast<double>(b.kept) / static_cast<double>(B);
    EXPECT_LE(per_sequence, previous_per_sequence) << B << " sequences";
    if (B >= 4) {
      EXPECT_LE(b.kept, previous_total) << B << " sequences";
    }
    previous_total = b.kept;
    previous_per_sequence = per_sequence;
    if (B == 1) {
      EXPECT_EQ(b.kept, 8) << "one sequence fills the free plateau";
    }
    if (B >= 16) {
      EXPECT_EQ(b.kept, 0) << B << " sequences: drafting cannot pay";
    }
  }
}

TEST(BatchBudget, FloorsAndLimitsAreKept) {
  const std::vector<float> weak = {-5.0f, -6.0f, -7.0f};
  std::vector<SequenceCandidates> c = {{weak, 3, 64}, {weak, 1, 2}};
  const BatchBudget b = choose_batch_budget(c, 2, 0, 0, 0, plateau_cost(1, 1e-3, 1e-3));
  EXPECT_EQ(b.total_tokens[0], 3);  // the exploration floor, however weak
  EXPECT_EQ(b.total_tokens[1], 1);
  // A free forward keeps everything up to each limit.
  const BatchBudget all = choose_batch_budget(c, 2, 0, 0, 0, plateau_cost(100, 1e-3, 1e-3));
  EXPECT_EQ(all.total_tokens[0], 4);
  EXPECT_EQ(all.total_tokens[1], 2);
}

// The batch pauses drafting while it loses against the same steps without drafts, for 16 steps,
// then 32 after a failed retry; a winning retry resets the pause length.
TEST(BatchPacing, PausesWhileDraftingLosesAndRetries) {
  BatchPacing p;
  auto steps_until_drafting = [&] {
    int paused = 0;
    while (!p.drafting_step()) ++paused;
    return paused;
  };
  for (int i = 0; i < BatchPacing::kJudgeAfter; ++i) {
    EXPECT_EQ(steps_until_drafting(), 0);
    p.judge(4, 2.0, 4, 1.0);  // half the plain rate
  }
  EXPECT_EQ(steps_until_drafting(), BatchPacing::kPauseSteps);
  for (int i = 1; i < BatchPacing::kJudgeAfter; ++i) {
    p.judge(4, 2.0, 4, 1.0);
    EXPECT_EQ(steps_until_drafting(), 0);
  }
  p.judge(4, 2.0, 4, 1.0);
  EXPECT_EQ(steps_until_drafting(), 2 * BatchPacing::kPauseSteps) << "a failed retry doubles";
  for (int i = 0; i < BatchPacing::kJudgeAfter; ++i) {
    p.judge(12, 2.0, 4, 1.0);  // 1.5x the plain rate
    EXPECT_EQ(steps_until_drafting(), 0);
  }
  int paused = 0;
  for (int i = 0; i < 4 * BatchPacing::kJudgeAfter && paused == 0; ++i) {
    p.judge(4, 2.0, 4, 1.0);
    paused = steps_until_drafting();
  }
  EXPECT_EQ(paused, BatchPacing::kPauseSteps) << "a win resets the pause length";
}

TEST(BatchBudget, CostModelInterpolatesBetweenMeasuredSequenceCounts) {
  std::map<int64_t, VerifyCostModel> curves;
  curves.emplace(1, VerifyCostModel({{1, 1.0}, {9, 2.0}}));
  curves.emplace(5, VerifyCostModel({{5, 3.0}, {13, 5.0}}));
  const BatchCostModel cost(std::move(curves));
  EXPECT_DOUBLE_EQ(cost.seconds(1, 5), 1.5);
  EXPECT_DOUBLE_EQ(cost.seconds(5, 9), 4.0);
  EXPECT_DOUBLE_EQ(cost.seconds(3, 9), 0.5 * 2.0 + 0.5 * 4.0);  // halfway between the counts
  EXPECT_DOUBLE_EQ(cost.seconds(8, 13), 5.0);                   // past the last count: its curve
  EXPECT_EQ(test::error_of([] { BatchCostModel({}); }), "batch cost model: no curves");
}

}  // namespace
}  // namespace eagle2

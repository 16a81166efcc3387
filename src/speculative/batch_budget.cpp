#include "speculative/batch_budget.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "model/cost_curve.h"

namespace eagle2 {

BatchCostModel::BatchCostModel(std::map<int64_t, VerifyCostModel> curves)
    : curves_(std::move(curves)) {
  if (curves_.empty()) fail("batch cost model: no curves");
  if (curves_.begin()->first < 1) fail("batch cost model: sequence counts must be >= 1");
}

BatchCostModel BatchCostModel::single(const VerifyCostModel& curve) {
  return BatchCostModel({{1, curve}});
}

double BatchCostModel::seconds(int64_t sequences, int64_t rows) const {
  const auto hi = curves_.lower_bound(sequences);  // first count >= sequences
  if (hi == curves_.end()) return curves_.rbegin()->second.seconds(rows);
  if (hi->first == sequences || hi == curves_.begin()) return hi->second.seconds(rows);
  const auto lo = std::prev(hi);
  const double t =
      static_cast<double>(sequences - lo->first) / static_cast<double>(hi->first - lo->first);
  return (1 - t) * lo->second.seconds(rows) + t * hi->second.seconds(rows);
}

BatchBudget choose_batch_budget(std::span<const SequenceCandidates> candidates, int64_t sequences,
                                int64_t fixed_rows, double fixed_tokens, double draft_seconds,
                                const BatchCostModel& cost) {
  BatchBudget out;
  out.total_tokens.resize(candidates.size());
  // The floors: each candidate sequence's root and forced nodes.
  int64_t rows = fixed_rows;
  double expected = fixed_tokens;
  std::vector<size_t> next(candidates.size());   // per sequence: its next value's index
  std::vector<size_t> limit(candidates.size());  // per sequence: values it may keep in all
  for (size_t j = 0; j < candidates.size(); ++j) {
    const SequenceCandidates& c = candidates[j];
    const int64_t cap = std::max<int64_t>(
        1, std::min<int64_t>(c.max_tokens, static_cast<int64_t>(c.values_desc.size()) + 1));
    const int64_t floor = std::clamp<int64_t>(c.min_tokens, 1, cap);
    out.total_tokens[j] = floor;
    rows += floor;
    expected += 1;  // the bonus token
    for (int64_t i = 0; i + 1 < floor; ++i)
      expected += std::exp(static_cast<double>(c.values_desc[static_cast<size_t>(i)]));
    next[j] = static_cast<size_t>(floor - 1);
    limit[j] = static_cast<size_t>(cap - 1);
  }
  // Merge the sequences' remaining candidates by value, best first (a k-way merge: each list is
  // already sorted), and track the best prefix.
  std::vector<size_t> taken;  // sequence of each candidate in merge order
  double best_rate = expected / (draft_seconds + cost.seconds(sequences, rows));
  int64_t best_m = 0;
  double best_expected = expected, best_seconds = draft_seconds + cost.seconds(sequences, rows);
  for (int64_t m = 1;; ++m) {
    size_t pick = candidates.size();
    float value = 0;
    for (size_t j = 0; j < candidates.size(); ++j) {
      if (next[j] >= limit[j]) continue;
      const float v = candidates[j].values_desc[next[j]];
      if (pick == candidates.size() || v > value) {  // ties: the earlier sequence
        pick = j;
        value = v;
      }
    }
    if (pick == candidates.size()) break;
    ++next[pick];
    taken.push_back(pick);
    expected += std::exp(static_cast<double>(value));
    const double seconds = draft_seconds + cost.seconds(sequences, rows + m);
    const double rate = expected / seconds;
    if (rate > best_rate) {
      best_rate = rate;
      best_m = m;
      best_expected = expected;
      best_seconds = seconds;
    }
  }
  for (int64_t i = 0; i < best_m; ++i) ++out.total_tokens[taken[static_cast<size_t>(i)]];
  out.kept = best_m;
  out.expected_tokens = best_expected;
  out.seconds = best_seconds;
  return out;
}

BatchCostModel measure_batch_cost(LlamaModel& target, const std::vector<int64_t>& sequence_counts,
                                  int64_t context, ThreadPool& pool) {
  CostCurveOptions opt;
  opt.context = context;
  opt.repetitions = 3;
  const std::vector<int64_t> extras = {0, 1, 2, 4, 8, 16, 32, 64};
  std::map<int64_t, VerifyCostModel> curves;
  for (const auto& [b, points] : measure_batch_curves(target, sequence_counts, extras, opt, pool)) {
    std::vector<std::pair<int64_t, double>> xy;
    for (const CostPoint& p : points) xy.emplace_back(p.k, p.seconds);
    curves.emplace(b, VerifyCostModel(std::move(xy)));
  }
  return BatchCostModel(std::move(curves));
}

}  // namespace eagle2

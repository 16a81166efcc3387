// Trees sized for the whole batch (docs/SPECULATIVE.md "Trees sized for the whole batch"). With B
// sequences in one target forward, the marginal cost of a drafted token depends on the whole
// step's row count, not on its own sequence's tree: on a memory-bound plateau extra rows are
// nearly free, past it every row costs compute that all sequences wait for. So the candidates of
// all sequences are ranked together by their value (the calibrated estimate of their acceptance,
// EAGLE-2's own criterion, now compared across sequences) and the step keeps the global best M,
// where M maximizes the expected tokens the whole step commits per second.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "speculative/tree_budget.h"

namespace eagle2 {

// Seconds of one target forward of `rows` rows spread over `sequences` sequences, from curves
// measured at a few sequence counts (measure_batch_cost). Between two measured counts the time is
// interpolated linearly in the count; outside them the nearest curve is used. Each curve is a
// VerifyCostModel over rows (piecewise linear, extrapolated by its last slope).
class BatchCostModel {
 public:
  // curves: sequence count (>= 1) -> that count's curve over total rows. Error when empty.
  explicit BatchCostModel(std::map<int64_t, VerifyCostModel> curves);
  // One sequence's curve for every count: a single-sequence cost model as a batch model.
  static BatchCostModel single(const VerifyCostModel& curve);
  double seconds(int64_t sequences, int64_t rows) const;
  const std::map<int64_t, VerifyCostModel>& curves() const { return curves_; }

 private:
  std::map<int64_t, VerifyCostModel> curves_;
};

// One sequence's candidates for the step (Drafter::Proposal of a choosable drafter).
struct SequenceCandidates {
  std::span<const float> values_desc;  // best first
  int64_t min_tokens = 1;              // root included: kept whatever the choice
  int64_t max_tokens = 1;              // root included
};

struct BatchBudget {
  std::vector<int64_t> total_tokens;  // per candidate sequence, root included
  int64_t kept = 0;                   // M: candidates kept beyond the floors
  double expected_tokens = 0;         // the step's expected committed tokens at M
  double seconds = 0;                 // the step's modelled time at M
};

// The step holds `sequences` sequences in all. fixed_rows: rows that do not depend on the choice
// (trees of drafters whose size is fixed, single tokens of plain decoding, prefill chunks), the
// candidate sequences' roots and floors NOT included; fixed_tokens: the tokens those rows are
// expected to commit (e.g. one per non-candidate sequence that verifies). draft_seconds: the
// step's drafting time, paid whatever M is. Each candidate sequence keeps its floor, then the
// candidates of all sequences compete by value for M more rows (ties: earlier sequence, then
// its own order), M maximizing
//   (fixed_tokens + candidate sequences + sum of exp(value) kept) /
//   (draft_seconds + cost.seconds(sequences, fixed_rows + floors + M))
// with ties towards the smaller M. A sequence's kept candidates are a prefix of its own order, so
// every kept set is a tree.
BatchBudget choose_batch_budget(std::span<const SequenceCandidates> candidates, int64_t sequences,
                                int64_t fixed_rows, double fixed_tokens, double draft_seconds,
                                const BatchCostModel& cost);

class LlamaModel;
class ThreadPool;

// Times forwards of B sequences (B in sequence_counts, each on `context` committed tokens) with
// B + extra rows for extra in {0, 1, 2, 4, ... 64} spread over them as trees: what a step of B
// sequences costs as their trees grow. A few repetitions each (the median); quick enough for a
// server's start-up on small models. Error when a count is < 1.
BatchCostModel measure_batch_cost(LlamaModel& target, const std::vector<int64_t>& sequence_counts,
                                  int64_t context, ThreadPool& pool);

}  // namespace eagle2

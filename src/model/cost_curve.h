// The verify cost curve (DESIGN "The performance model of a CPU"): how long one forward of a
// k-token batch takes relative to one token, on top of a context of a given length. It decides how
// large a draft tree this CPU can afford.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "core/thread_pool.h"
#include "model/llama_model.h"

namespace eagle2 {

struct CostPoint {
  int64_t k = 0;
  double seconds = 0;   // median seconds of one forward of k tokens
  double relative = 0;  // seconds / seconds at k = 1
  // Mixture-of-experts models (measure_cost_curve): distinct experts one forward of the k tokens
  // reads per layer, averaged over the layers (its weights read grow with it, not with k); 0 for
  // a dense model.
  double experts = 0;
};

struct CostCurveOptions {
  std::vector<int64_t> ks = {1, 2, 4, 8, 16, 32, 64};
  int64_t context = 128;  // committed tokens the batches sit on
  int repetitions = 5;
  bool tree = true;  // batches shaped as a tree (root + children) rather than a chain
};

// Measures the curve on random token ids. The cache must hold context + max(ks) tokens.
std::vector<CostPoint> measure_cost_curve(LlamaModel& model, const CostCurveOptions& options,
                                          ThreadPool& pool);

// The cost of one token for each of B independent sequences in one forward (one row per
// sequence, each on its own context of options.context tokens, all over one shared KV pool),
// for each B in `sequence_counts`: k = B, relative = seconds / seconds of one sequence alone.
// This is what serving B requests at once costs per step against serving one.
std::vector<CostPoint> measure_sequence_cost(LlamaModel& model,
                                             const std::vector<int64_t>& sequence_counts,
                                             const CostCurveOptions& options, ThreadPool& pool);

// What a step of B sequences costs as their trees grow: for each B in sequence_counts, forwards of
// B sequences (each on options.context committed tokens, over one shared KV pool) with B + extra
// rows for each extra in `extras`, the extra rows spread round-robin over the sequences as
// children of their roots. Per B, the points k = total rows (relative to B rows, extra = 0, when
// measured). options.repetitions timed runs each (the median).
std::map<int64_t, std::vector<CostPoint>> measure_batch_curves(
    LlamaModel& model, const std::vector<int64_t>& sequence_counts,
    const std::vector<int64_t>& extras, const CostCurveOptions& options, ThreadPool& pool);

}  // namespace eagle2

// What decoding costs on this machine: the verify cost curve (one forward of k tokens against one
// token), the same across independent sequences, and the memory read bandwidth that bounds
// memory-bound decoding. The curve decides how large a draft tree this CPU can afford.
//
// Contract. Units: seconds (medians of options.repetitions forwards), k and context in tokens,
// bandwidth in GB/s (1e9 bytes per second). Ownership: the measure functions borrow the model and
// threads for the call; a VerifyCost owns its measurements, and an Engine or drafter given one
// borrows it (it must outlive them). Errors: eagle2::Error for an empty list of batch sizes or
// sequence counts, a size below 1, a context too short to time one batch. Threads: the
// measurements use every thread of `threads` and must not run while the same model decodes
// (eagle2/error.h); timings are only as quiet as the machine.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "eagle2/model.h"
#include "eagle2/runtime.h"

namespace eagle2::api {

struct CostPoint {
  int64_t k = 0;
  double seconds = 0;   // median seconds of one forward of k tokens
  double relative = 0;  // seconds / seconds at k = 1
  // Mixture-of-experts models (measure_cost_curve only): distinct experts a forward of the k
  // tokens reads per layer, averaged over layers; 0 for a dense model.
  double experts = 0;
};

struct CostCurveOptions {
  std::vector<int64_t> ks = {1, 2, 4, 8, 16, 32, 64};
  int64_t context = 128;  // committed tokens the batches sit on
  int repetitions = 5;
  bool tree = true;  // batches shaped as a tree (root + children) rather than a chain
};

// Times forwards of k random tokens for each k of options.ks.
std::vector<CostPoint> measure_cost_curve(Model& model, const CostCurveOptions& options,
                                          Threads& threads);
// One token for each of B independent sequences in one forward (each on its own context of
// options.context tokens, over one shared KV memory), for each B: k = B, relative = against one
// sequence alone. What serving B requests at once costs per step.
std::vector<CostPoint> measure_sequence_cost(Model& model,
                                             const std::vector<int64_t>& sequence_counts,
                                             const CostCurveOptions& options, Threads& threads);

// The best read rate of a fresh buffer of `bytes` with all threads, in GB/s (1e9 bytes/s).
double measure_read_bandwidth_gbs(Threads& threads, size_t bytes);

// The target's verify cost as the "auto" tree budget uses it, measured at start-up on a short
// context (batches of 1, 2, 4, .. 64 tokens as fit in ctx). Error if ctx cannot time even one.
// max_sequences > 1 also measures steps of 1, 2, 4, .. max_sequences (at most 64) sequences with
// growing trees (what an Engine sizes its batch-wide trees with); without them an Engine assumes
// one sequence's curve for the whole step.
class VerifyCost {
 public:
  static VerifyCost measure(Model& target, int64_t ctx, Threads& threads,
                            int64_t max_sequences = 1);
  ~VerifyCost();
  VerifyCost(VerifyCost&&) noexcept;
  VerifyCost& operator=(VerifyCost&&) noexcept;

  const std::vector<CostPoint>& curve() const;  // the measurements
  // The multi-sequence measurements: per sequence count, k = the step's total rows.
  const std::vector<std::pair<int64_t, std::vector<CostPoint>>>& batch_curves() const;

  struct Impl;  // the library's side of the handle (src/api)
  explicit VerifyCost(std::unique_ptr<Impl> impl);
  Impl& impl() const { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace eagle2::api

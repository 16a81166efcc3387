// Sizing each cycle's draft tree to the hardware (DESIGN "The performance model of a CPU"): a
// node's value estimates the log of its acceptance probability, so a tree of T tokens is expected
// to emit 1 + sum of exp(value) over its T - 1 best nodes; the tree worth verifying is the one
// with the most expected tokens per second of drafting plus verifying.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <utility>
#include <vector>

namespace eagle2 {

// Seconds of one target forward of k tokens, from measured points (e.g. measure_cost_curve).
struct VerifyCostModel {
  // points: (k, seconds) with k strictly increasing from >= 1 and seconds > 0; Error otherwise.
  // draft_seconds: a per-cycle draft cost to assume until the drafter has measured its own.
  explicit VerifyCostModel(std::vector<std::pair<int64_t, double>> points,
                           double draft_seconds = 0);

  // Piecewise-linear in k between points. Below the first point the first point's time (a
  // smaller batch is never dearer); past the last point the last segment's slope, floored at 0 so
  // that timing noise cannot make large batches look free or negative (one point: time
  // proportional to k, the compute-bound assumption).
  double seconds(int64_t k) const;

  const std::vector<std::pair<int64_t, double>>& points() const { return points_; }
  double draft_seconds() const { return draft_seconds_; }

 private:
  std::vector<std::pair<int64_t, double>> points_;
  double draft_seconds_;
};

// The T in [1, max_tokens] (root included) maximizing
//   (1 + sum_{i < T-1} exp(values_desc[i])) / (draft_seconds + cost.seconds(T)),
// ties towards the smaller T. values_desc: the candidates' values (natural-log acceptance
// estimates), best first; T never exceeds values_desc.size() + 1. max_tokens < 1 counts as 1.
int64_t choose_total_tokens(std::span<const float> values_desc, const VerifyCostModel& cost,
                            double draft_seconds, int64_t max_tokens);

// Whether drafting one more level of a dynamic tree can raise the cycle's rate, expected tokens
// per second of drafting plus verifying, at best. values: the pool drafted so far (any order);
// frontier: the values of the nodes the level would expand; drafted_seconds: this cycle's drafting
// so far; level_seconds: what one more level costs. The level is credited with one new node per
// frontier node at its parent's value: an upper bound, since a child's value (its parent's plus a
// log-confidence <= 0) never exceeds its parent's and the children of one node are alternatives.
// True when the best tree with those nodes, paying the level, beats the best tree without them.
// One level ahead only: the auto budget uses it to stop drafting levels it would not verify.
bool deeper_level_may_pay(std::span<const float> values, std::span<const float> frontier,
                          const VerifyCostModel& cost, double drafted_seconds, double level_seconds,
                          int64_t max_tokens);

// How often a draft token was accepted, given that its parent was, by its rank among its siblings
// (the draft's top choice, or not) and its draft probability, learned while decoding. EAGLE-2 ranks
// nodes by the product of draft probabilities along their path, which assumes the head is
// calibrated; a head can be far off. The bundled code head at T = 0 is under-confident about its
// top choice, which matches the target's argmax far more often than its probability says, so raw
// values cut the deep greedy path in favour of shallow siblings that are rarely right. Bins:
// {top choice, other} x kBins equal-width probability bins over [0, 1]. A bin's estimate is its
// record plus kPrior pseudo-observations of a prior, and the prior is the record of all bins of
// the same rank plus kPrior pseudo-observations of the probability itself. So a bin nothing has
// been learned about follows what its rank does elsewhere (a tree that only ever verified top
// choices of probability 0.7, all accepted, still dares a top choice of 0.05: without that, a
// pessimistic bin is never verified and never corrected), a well-observed bin follows its own
// record, and order within a bin follows the head. Deterministic (counts only); it shapes trees,
// never what is accepted.
class AcceptanceCalibration {
 public:
  static constexpr int kBins = 20;
  static constexpr double kPrior = 5.0;
  // A verified node whose parent was accepted: its draft log-prob, its sibling rank (0 = the
  // draft's top choice; < 0 = unknown, counted as not the top), and whether it was accepted.
  void record(float logp, int rank, bool accepted);
  // The acceptance estimate for such a node, in [0, 1].
  double estimate(float logp, int rank) const;
  // log(estimate): the calibrated log-confidence a tree value sums (<= 0).
  float log_confidence(float logp, int rank) const;
  int64_t observations() const { return static_cast<int64_t>(rank_seen_[0] + rank_seen_[1]); }

 private:
  static int bin_of(float logp, int rank);
  double accepted_[2 * kBins] = {};
  double seen_[2 * kBins] = {};
  double rank_accepted_[2] = {};  // per rank class, over all bins
  double rank_seen_[2] = {};
};

class LlamaModel;
class ThreadPool;
struct CostPoint;

// Times the target on batches of k = 1, 2, .. 8, 16, 32, 64 tokens (as fit in ctx) on a short
// context (min(64, ctx / 2)), 3 repetitions each: enough to see where the curve leaves the
// memory-bound plateau, and quick enough to run at start-up. `curve`, when given, receives the
// measurements. Error if ctx is too small to time even k = 1.
std::shared_ptr<const VerifyCostModel> measure_verify_cost(LlamaModel& target, int64_t ctx,
                                                           ThreadPool& pool,
                                                           std::vector<CostPoint>* curve = nullptr);

}  // namespace eagle2

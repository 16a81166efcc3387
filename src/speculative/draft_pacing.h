// One sequence's side of the auto budget: how long drafting takes here (a moving average of
// measured draft times), whether speculating pays (a moving average of the modelled rate), and the
// pause that follows when it does not. Unlike the DraftPolicy (cost model and calibration, shared
// by every sequence of a (head, temperature)), this belongs to one sequence's drafter: one hard
// prompt pausing must not pause the others, and draft times depend on the sequence's length.
#pragma once

#include <cstdint>
#include <span>

#include "speculative/tree_budget.h"

namespace eagle2 {

class DraftPacing {
 public:
  // Whether speculating pays is judged from the modelled rate of drafted cycles (tokens per second
  // of drafting plus verifying) against plain decoding's, on two moving averages. A fast one
  // (kFastWeight, judged after kJudgeAfter cycles, so that the calibration can learn first) pauses
  // when the rate falls far below plain (under kFarBelow of it: a head that does not help, a high
  // temperature); a slow one (kSlowWeight, judged after kSteadyJudgeAfter cycles) when it stays
  // below plain at all. The fast average alone, judged against plain itself, paused on a few
  // unlucky cycles of code windows where speculating ran 1.3-1.5x plain (docs/bench/draft-pacing/,
  // 2026-12-03). A pause is kPauseCycles cycles that draft nothing, doubling after each failed try
  // up to kMaxPauseCycles; then it tries again.
  static constexpr int kJudgeAfter = 4, kSteadyJudgeAfter = 8, kPauseCycles = 16,
                       kMaxPauseCycles = 256;
  static constexpr double kFastWeight = 0.25, kSlowWeight = 0.1, kFarBelow = 0.6;
  // With calibration: until it has kExploreObservations verified nodes, trees have at least
  // kExploreTokens tokens, whatever the (uncorrected) estimates say.
  static constexpr int64_t kExploreObservations = 48, kExploreTokens = 4;

  // At the start of a cycle: whether it drafts nothing (paused; only ever with an auto budget).
  bool skip_cycle(bool auto_budget);
  // The current cycle drafted nothing.
  bool skipped() const { return skipped_; }
  // Root-only cycles left in the current pause.
  int pause_left() const { return skip_left_; }

  // The per-cycle draft time the budget assumes: the moving average of measured draft() times,
  // or the cost model's draft_seconds (0 without one) before the first measurement.
  double draft_seconds(const VerifyCostModel* cost) const;
  void measured_draft(double seconds);

  // The cycle's verify budget T (root included) for a pool with these values (best first):
  // choose_total_tokens at this sequence's draft time, raised to the exploration size while the
  // calibration (nullptr: values are raw log-probs) has seen little.
  int64_t budget(std::span<const float> values_desc, const VerifyCostModel& cost,
                 int64_t max_tokens, const AcceptanceCalibration* calibration) const;
  // The exploration floor alone: the smallest T budget() may return for `candidates` values.
  static int64_t min_tokens(size_t candidates, int64_t max_tokens,
                            const AcceptanceCalibration* calibration);

  // After verifying a drafted (not skipped) cycle: `tokens` committed by a tree of `tree_size`
  // nodes. Updates the rate average and starts a pause when speculation is slower than plain.
  void judge(int64_t tokens, int64_t tree_size, const VerifyCostModel& cost);

 private:
  double draft_seconds_ema_ = -1;           // < 0: nothing measured yet
  double fast_rate_ = -1, slow_rate_ = -1;  // < 0: nothing judged since the last pause
  int judged_cycles_ = 0;
  int pause_cycles_ = kPauseCycles;
  int skip_left_ = 0;
  bool skipped_ = false;
};

}  // namespace eagle2

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
  // When the modelled rate of speculative cycles (moving average of tokens per second, judged
  // after kJudgeAfter cycles, so that the calibration can learn first) falls below plain
  // decoding's, the next cycles draft nothing (kPauseCycles, doubling after each failed try up to
  // kMaxPauseCycles); then it tries again. This keeps an unhelpful head (a hard prompt, a high
  // temperature) from making decoding much slower than plain.
  static constexpr int kJudgeAfter = 4, kPauseCycles = 16, kMaxPauseCycles = 256;
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
  double draft_seconds_ema_ = -1;  // < 0: nothing measured yet
  double rate_ema_ = -1;
  int judged_cycles_ = 0;
  int pause_cycles_ = kPauseCycles;
  int skip_left_ = 0;
  bool skipped_ = false;
};

}  // namespace eagle2

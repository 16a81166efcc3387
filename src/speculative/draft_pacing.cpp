#include "speculative/draft_pacing.h"

#include <algorithm>

namespace eagle2 {
namespace {

// A moving average in place; a negative one holds nothing yet and takes the sample itself.
void blend(double& average, double sample, double weight) {
  average = average < 0 ? sample : (1 - weight) * average + weight * sample;
}

}  // namespace

bool DraftPacing::skip_cycle(bool auto_budget) {
  skipped_ = auto_budget && skip_left_ > 0;
  if (skipped_) --skip_left_;
  return skipped_;
}

double DraftPacing::draft_seconds(const VerifyCostModel* cost) const {
  if (draft_seconds_ema_ >= 0) return draft_seconds_ema_;
  return cost ? cost->draft_seconds() : 0;
}

void DraftPacing::measured_draft(double seconds) {
  blend(draft_seconds_ema_, seconds, 0.25);  // recent cycles dominate within a few cycles
}

int64_t DraftPacing::budget(std::span<const float> values_desc, const VerifyCostModel& cost,
                            int64_t max_tokens, const AcceptanceCalibration* calibration) const {
  const int64_t t = choose_total_tokens(values_desc, cost, draft_seconds(&cost), max_tokens);
  return std::max(t, min_tokens(values_desc.size(), max_tokens, calibration));
}

int64_t DraftPacing::min_tokens(size_t candidates, int64_t max_tokens,
                                const AcceptanceCalibration* calibration) {
  // While the calibration has seen little, verify a few nodes regardless: estimates of nodes that
  // are never verified are never corrected.
  if (calibration && calibration->observations() < kExploreObservations)
    return std::max<int64_t>(
        1, std::min<int64_t>({kExploreTokens, max_tokens, static_cast<int64_t>(candidates) + 1}));
  return 1;
}

void DraftPacing::judge(int64_t tokens, int64_t tree_size, const VerifyCostModel& cost) {
  // Is speculating paying off? Tokens per cycle over the cycle's modelled time (drafting plus
  // verifying the tree) against plain decoding's 1 token per cost(1): far below it on the fast
  // average, or below it on the slow one, pause.
  const double seconds = draft_seconds(&cost) + cost.seconds(tree_size);
  const double rate = static_cast<double>(tokens) / seconds;
  blend(fast_rate_, rate, kFastWeight);
  blend(slow_rate_, rate, kSlowWeight);
  ++judged_cycles_;
  const double plain = 1.0 / cost.seconds(1);
  const bool far_below = judged_cycles_ >= kJudgeAfter && fast_rate_ < kFarBelow * plain;
  const bool steady = judged_cycles_ >= kSteadyJudgeAfter;
  if (far_below || (steady && slow_rate_ < plain)) {
    // Each failed try doubles the pause, so that a head that does not help costs little.
    skip_left_ = pause_cycles_;
    pause_cycles_ = std::min(pause_cycles_ * 2, kMaxPauseCycles);
    fast_rate_ = slow_rate_ = -1;  // judged afresh on the next real cycles
    judged_cycles_ = 0;
  } else if (steady) {
    pause_cycles_ = kPauseCycles;
  }
}

}  // namespace eagle2

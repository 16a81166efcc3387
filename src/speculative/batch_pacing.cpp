#include "speculative/batch_pacing.h"

#include <algorithm>

namespace eagle2 {

bool BatchPacing::drafting_step() {
  if (pause_left_ > 0) {
    --pause_left_;
    return false;
  }
  return true;
}

void BatchPacing::judge(double tokens, double seconds, double plain_tokens, double plain_seconds) {
  if (!(seconds > 0) || !(plain_seconds > 0) || !(plain_tokens > 0)) return;
  ++steps_judged_;
  constexpr double kWeight = 0.25;
  const double advantage = (tokens / seconds) / (plain_tokens / plain_seconds);
  advantage_ema_ =
      advantage_ema_ < 0 ? advantage : (1 - kWeight) * advantage_ema_ + kWeight * advantage;
  if (++judged_ < kJudgeAfter) return;
  if (advantage_ema_ < 1) {
    pause_left_ = pause_steps_;
    pause_steps_ = std::min(pause_steps_ * 2, kMaxPauseSteps);
    advantage_ema_ = -1;
    judged_ = 0;
  } else {
    pause_steps_ = kPauseSteps;
  }
}

}  // namespace eagle2

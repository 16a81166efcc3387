// Whether drafting pays for the batch as a whole (the batch-wide counterpart of DraftPacing). A
// sequence's own pacing compares its cycles with plain decoding as if it were alone; in a batch
// the comparison is different: every sequence's drafting time adds to the step that all of them
// wait for, and once the forward is compute-bound a draft row costs as much as any other. So the
// decoder judges its steps: after each drafting step, the tokens the choosable sequences committed
// per modelled second (their measured drafting plus the cost of the step's rows) against what the
// same step would have given without their drafts (one token each, their roots' rows only). When
// the moving average says drafting loses, the next steps verify roots alone (kPauseSteps,
// doubling after each failed try up to kMaxPauseSteps), then drafting is tried again.
#pragma once

#include <cstdint>

namespace eagle2 {

class BatchPacing {
 public:
  static constexpr int kJudgeAfter = 4, kPauseSteps = 16, kMaxPauseSteps = 256;

  // At the start of a step: whether choosable drafters draft in it (false: paused).
  bool drafting_step();
  // After a drafting step: its tokens and modelled seconds with the drafts, and without them.
  void judge(double tokens, double seconds, double plain_tokens, double plain_seconds);
  int pause_left() const { return pause_left_; }
  // Steps judged so far (for tests: which steps the decoder judges).
  int64_t steps_judged() const { return steps_judged_; }

 private:
  double advantage_ema_ = -1;  // speculative rate / plain rate; < 0: nothing judged yet
  int judged_ = 0;
  int pause_steps_ = kPauseSteps;
  int pause_left_ = 0;
  int64_t steps_judged_ = 0;
};

}  // namespace eagle2

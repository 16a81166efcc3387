// What `eagle2 train-head` shares between its archs: progress lines and CPU time, and the
// --arch eagle3 run (cmd_train_head_eagle3.cpp) on the data cmd_train_head.cpp built.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "eagle2/model.h"
#include "eagle2/runtime.h"
#include "eagle2/train_head.h"

namespace eagle2::cli {

// Seconds of CPU this process has used so far (user, sys).
std::pair<double, double> cpu_seconds();
// m:ss
std::string clock(double s);
// On a terminal the bars redraw in place; in a log (pipe or file) a plain line is written only at
// each tenth of the work, so logs stay readable.
bool stderr_is_tty();
bool log_line_due(int64_t done, int64_t total);
// Whether a training step's progress line is due: on a terminal at most 4 redraws a second (and
// the last step), in a log at each tenth (log_line_due). Sets `last` to `seconds` when it is.
bool progress_due(double& last, double seconds, int64_t step, int64_t steps);
// Seconds left at `step` of `steps` after `seconds`, at the pace so far.
double eta_seconds(double seconds, int64_t step, int64_t steps);

struct Eagle3Run {
  std::string out_dir;
  bool bf16 = false;
  api::HeadTrainOptions train;
  api::Eagle3Init init;
  int64_t eval_seq_len = 0;  // held-out windows
  // Held-out prompts for tau with the saved head (none: not measured).
  std::vector<std::vector<int32_t>> tau_prompts;
  int64_t tau_tokens = 96;
};

// Trains, saves, and reports per-step losses and agreement, held-out agreement, tau with the saved
// head, and CPU time.
int train_eagle3_head(const Eagle3Run& run, api::Model& target, const api::HeadData& data,
                      const api::HeadData& held, api::Threads& threads);

}  // namespace eagle2::cli

// What every arch of `eagle2 train-head` uses to report: progress lines (a redrawn bar on a
// terminal, a line per tenth of the work in a log) and the process's CPU time.
#pragma once

#include <cstdint>
#include <string>
#include <utility>

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

}  // namespace eagle2::cli

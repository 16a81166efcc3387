// train_progress.h: progress lines and CPU time for eagle2 train-head.
#include "train_progress.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>

namespace eagle2::cli {

std::pair<double, double> cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  auto s = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) + 1e-6 * static_cast<double>(t.tv_usec);
  };
  return {s(u.ru_utime), s(u.ru_stime)};
}

std::string clock(double s) {
  const auto t = static_cast<long long>(s + 0.5);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%lld:%02lld", t / 60, t % 60);
  return buf;
}

bool stderr_is_tty() {
  static const bool tty = isatty(fileno(stderr)) != 0;
  return tty;
}

bool log_line_due(int64_t done, int64_t total) {
  total = std::max<int64_t>(1, total);
  return done == total || done * 10 / total != (done - 1) * 10 / total;
}

bool progress_due(double& last, double seconds, int64_t step, int64_t steps) {
  const bool due =
      stderr_is_tty() ? seconds - last >= 0.25 || step == steps : log_line_due(step, steps);
  if (due) last = seconds;
  return due;
}

double eta_seconds(double seconds, int64_t step, int64_t steps) {
  return seconds / static_cast<double>(std::max<int64_t>(1, step)) *
         static_cast<double>(steps - step);
}

}  // namespace eagle2::cli

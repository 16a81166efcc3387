// Wall-clock seconds for the statistics the decoding loops report (never for a decision that
// changes output: timings only size trees and fill stats lines).
#pragma once

#include <chrono>

namespace eagle2 {

using SteadyClock = std::chrono::steady_clock;

inline double seconds_since(SteadyClock::time_point start) {
  return std::chrono::duration<double>(SteadyClock::now() - start).count();
}

}  // namespace eagle2

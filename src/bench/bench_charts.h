// SVG charts of a benchmark's summaries, for reading results at a glance next to the JSON/CSV.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "bench/bench_runner.h"

namespace eagle2 {

// File name -> SVG text, in a fixed order. Per prompt set and temperature (file names
// "<set>_t<temp>_<chart>.svg", unsafe characters replaced by '_'):
//   speedup      bars: speedup over plain decoding per drafter
//   tau          bars: tokens committed per cycle per drafter (drafters without cycles left out)
//   budget_tau, budget_speedup  lines against the tree size (root included): the dynamic:T:D:K
//                drafters at T, static trees at their size, chain:D at D + 2; dynamic:auto drafters
//                as a level line across those sizes (to compare with the best fixed budget); only
//                when a fixed-size dynamic drafter is present.
//   calibration  lines: observed acceptance rate against the mean estimate exp(value) per bin, for
//                the tree drafters (dynamic, static, chain) that drafted nodes, with the diagonal;
//                only when one has data.
std::vector<std::pair<std::string, std::string>> bench_charts(const std::vector<Summary>& rows);

}  // namespace eagle2

// Bounds for every numeric flag of the command line. The validators run on the flag's text before
// CLI11 converts it, so a value out of range or out of the type (-1 for a count, 2^64 for a seed)
// is refused as a flag error (exit 2) instead of wrapping or saturating on the way in.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>

namespace eagle2::cli {

// An integer in [min, max].
CLI::Validator integer_in(int64_t min, int64_t max);

// A seed: any integer in [0, 2^64 - 1].
CLI::Validator seed_value();

// Any finite number (the range is checked where the value is used).
CLI::Validator finite_number();

// A finite number in [min, max], or in (min, max] with min_exclusive.
CLI::Validator number_in(double min, double max, bool min_exclusive = false);

// CPUs this process may run on: its affinity mask (what a container or taskset grants), else the
// machine's logical CPU count.
int available_cpus();

// A thread count in [1, available_cpus()]: more threads than CPUs only time-slice, and a large
// count makes every parallel step wait on descheduled workers (-t 1000 ran 1000x slower).
CLI::Validator thread_count();

}  // namespace eagle2::cli

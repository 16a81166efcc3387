// Measured memory read bandwidth: the roofline that bounds memory-bound decoding (DESIGN, "The
// performance model of a CPU").
#pragma once

#include <cstddef>

#include "core/thread_pool.h"

namespace eagle2 {

// Reads a freshly allocated buffer of `bytes` (rounded to whole 4 KiB pages; use something far
// larger than the last-level cache, e.g. 512 MiB) with all of the pool's threads, several times,
// and returns the best rate in GB/s (1e9 bytes per second). Throws eagle2::Error if the buffer
// cannot be allocated.
double measure_read_bandwidth_gbs(ThreadPool& pool, size_t bytes);

}  // namespace eagle2

// The thread pool every micro-benchmark runs on: EAGLE2_BENCH_THREADS threads, by default
// default_thread_count() (the physical cores).
#pragma once

#include <cstdlib>

#include "core/thread_pool.h"

namespace eagle2 {

inline ThreadPool& bench_pool() {
  static ThreadPool pool([] {
    const char* s = std::getenv("EAGLE2_BENCH_THREADS");
    return s && *s ? std::atoi(s) : default_thread_count();
  }());
  return pool;
}

}  // namespace eagle2

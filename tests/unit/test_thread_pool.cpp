// ThreadPool: every task runs exactly once, for any task count and thread count, over many reuses;
// exceptions reach the caller; nested calls run inline instead of deadlocking.
#include "core/thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

namespace eagle2 {
namespace {

void expect_each_task_once(ThreadPool& pool, int64_t n) {
  std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
  for (auto& h : hits) h.store(0);
  pool.parallel_for(n, [&](int64_t t) { hits[static_cast<size_t>(t)].fetch_add(1); });
  for (int64_t t = 0; t < n; ++t) ASSERT_EQ(hits[static_cast<size_t>(t)].load(), 1) << "task " << t << " of " << n;
}

TEST(ThreadPool, EveryTaskRunsExactlyOnce) {
  for (int threads : {1, 2, 3, 4, 8}) {
    ThreadPool pool(threads);
    EXPECT_EQ(pool.size(), threads);
    for (int64_t n : {0, 1, 2, 3, 7, 64, 1000, 100000}) expect_each_task_once(pool, n);
  }
}

TEST(ThreadPool, NonPositiveThreadCountMeansCallerOnly) {
  ThreadPool pool(0);
  EXPECT_EQ(pool.size(), 1);
  expect_each_task_once(pool, 10);
}

TEST(ThreadPool, ReusedManyTimes) {
  ThreadPool pool(3);
  int64_t total = 0;
  for (int rep = 0; rep < 3000; ++rep) {
    std::atomic<int64_t> sum{0};
    const int64_t n = rep % 13;
    pool.parallel_for(n, [&](int64_t t) { sum.fetch_add(t + 1); });
    ASSERT_EQ(sum.load(), n * (n + 1) / 2) << "rep " << rep;
    total += sum.load();
  }
  EXPECT_GT(total, 0);
}

TEST(ThreadPool, WorksAfterWorkersFallAsleep) {
  ThreadPool pool(2);
  for (int rep = 0; rep < 5; ++rep) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));  // longer than the spin phase
    expect_each_task_once(pool, 100);
  }
}

TEST(ThreadPool, UsesMoreThanOneThread) {
  ThreadPool pool(2);
  std::atomic<int> inside{0}, max_inside{0};
  // Each task waits (up to 50 ms, generous for a loaded CI machine) for company; with two threads
  // some task must see it.
  for (int attempt = 0; attempt < 50 && max_inside.load() < 2; ++attempt) {
    pool.parallel_for(4, [&](int64_t) {
      const int now = inside.fetch_add(1) + 1;
      int prev = max_inside.load();
      while (now > prev && !max_inside.compare_exchange_weak(prev, now)) {
      }
      const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(50);
      while (std::chrono::steady_clock::now() < until && max_inside.load() < 2) std::this_thread::yield();
      inside.fetch_sub(1);
    });
  }
  EXPECT_EQ(max_inside.load(), 2);
}

TEST(ThreadPool, FirstExceptionPropagatesAndPoolStaysUsable) {
  for (int threads : {1, 2, 3}) {
    ThreadPool pool(threads);
    std::atomic<int> ran{0};
    EXPECT_THROW(pool.parallel_for(1000,
                                   [&](int64_t t) {
                                     ran.fetch_add(1);
                                     if (t == 17) throw std::runtime_error("task 17 failed");
                                   }),
                 std::runtime_error);
    EXPECT_LE(ran.load(), 1000);
    expect_each_task_once(pool, 500);  // the pool still works afterwards
  }
}

TEST(ThreadPool, NestedCallRunsInline) {
  ThreadPool pool(2);
  std::atomic<int> inner{0};
  pool.parallel_for(4, [&](int64_t) { pool.parallel_for(3, [&](int64_t) { inner.fetch_add(1); }); });
  EXPECT_EQ(inner.load(), 12);
}

TEST(ThreadPool, DefaultThreadCountIsPositive) {
  const int n = default_thread_count();
  EXPECT_GE(n, 1);
  EXPECT_LE(n, static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
}

}  // namespace
}  // namespace eagle2

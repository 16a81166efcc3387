// ThreadPool: every task runs exactly once, for any task count and thread count, over many reuses;
// exceptions reach the caller; nested calls run inline instead of deadlocking.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "core/thread_pool.h"
#include "support/errors.h"

namespace eagle2 {
namespace {

void expect_each_task_once(ThreadPool& pool, int64_t n) {
  std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
  for (auto& h : hits) h.store(0);
  pool.parallel_for(n, [&](int64_t t) { hits[static_cast<size_t>(t)].fetch_add(1); });
  for (int64_t t = 0; t < n; ++t)
    ASSERT_EQ(hits[static_cast<size_t>(t)].load(), 1) << "task " << t << " of " << n;
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
      while (std::chrono::steady_clock::now() < until && max_inside.load() < 2)
        std::this_thread::yield();
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
  pool.parallel_for(4,
                    [&](int64_t) { pool.parallel_for(3, [&](int64_t) { inner.fetch_add(1); }); });
  EXPECT_EQ(inner.load(), 12);
}

// The system refusing a thread (as std::thread does under a process limit) is an Error naming the
// thread count, after the workers already started are joined: no std::terminate, no leak (ASan),
// and no worker left running (the counter stays put once the constructor has failed).
TEST(ThreadPool, RefusedThreadIsAnErrorAndStartedWorkersAreJoined) {
  std::atomic<int> started{0}, finished{0};
  const ThreadPool::Spawner refuse_third = [&](std::function<void()> body) {
    if (started.load() == 2)
      throw std::system_error(std::make_error_code(std::errc::resource_unavailable_try_again),
                              "thread creation");
    started.fetch_add(1);
    return std::thread([&finished, body = std::move(body)] {
      body();
      finished.fetch_add(1);
    });
  };
  const std::string message = test::error_of([&] { ThreadPool pool(4, refuse_third); });
  EXPECT_EQ(message.rfind("cannot start 4 threads: thread creation: ", 0), 0u) << message;
  EXPECT_EQ(started.load(), 2);
  EXPECT_EQ(finished.load(), 2);  // both workers returned and were joined before the Error

  // A spawner that hands back no thread is refused the same way.
  const std::string empty = test::error_of(
      [] { ThreadPool pool(2, [](std::function<void()>) { return std::thread(); }); });
  EXPECT_EQ(empty, "cannot start 2 threads: the thread spawner returned no thread");

  // The injected spawner is what the pool runs on when it works.
  ThreadPool pool(3, [](std::function<void()> body) { return std::thread(std::move(body)); });
  expect_each_task_once(pool, 1000);
}

TEST(ThreadPool, DefaultThreadCountIsPositive) {
  const int n = default_thread_count();
  EXPECT_GE(n, 1);
  EXPECT_LE(n, static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
}

}  // namespace
}  // namespace eagle2

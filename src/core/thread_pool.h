// One persistent pool of worker threads for the whole process (DESIGN principle 3): kernels split
// their output rows/columns into tasks and call parallel_for; nothing nests.
#pragma once

#include <cstdint>
#include <functional>
#include <thread>

namespace eagle2 {

class ThreadPool {
 public:
  // Starts one worker thread running `body`; std::thread by default. Tests inject one that fails.
  using Spawner = std::function<std::thread(std::function<void()> body)>;

  // n_threads counts the calling thread, which takes part in the work: 1 means no workers.
  // Error "cannot start N threads: ..." if the system refuses a thread (the workers already
  // started are stopped and joined first).
  explicit ThreadPool(int n_threads);
  ThreadPool(int n_threads, const Spawner& spawn);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return n_threads_; }

  // Runs fn(task) for task in [0, n_tasks), spread over the threads, and returns when all are
  // done. Which thread runs which task must never change a result: callers make every task write
  // its own outputs with a fixed computation order.
  // If a task throws, no further tasks are started and the first exception is rethrown here once
  // the running ones have finished. Called from inside a task it runs the tasks serially on the
  // calling thread (no nesting). One pool serves one calling thread at a time.
  void parallel_for(int64_t n_tasks, const std::function<void(int64_t task)>& fn);

 private:
  struct State;
  void stop_workers() noexcept;

  State* state_;
  int n_threads_;
};

// Number of physical cores (the default for --threads).
int default_thread_count();

}  // namespace eagle2

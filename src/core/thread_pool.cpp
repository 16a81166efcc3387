// The pool is dispatched ~10 times per transformer layer per token, so a dispatch must cost far
// less than a microsecond-scale kernel. Workers therefore spin on a generation counter for a short
// while after each job (the next parallel_for usually arrives within microseconds during decoding)
// and only then block on a condition variable, so that an idle process does not burn its cores.
//
// Protocol (why it is race-free), built on one atomic word `state` = generation (high 32 bits) |
// closed flag | number of workers registered in the current job:
//  * The caller writes the job (fn, n_tasks, next task = 0) and publishes it by storing a new
//    generation with release semantics, holding the mutex so the condition-variable wait cannot
//    miss it.
//  * A worker joins a job by a CAS that increments the registered count, which succeeds only while
//    the job is open and still the generation it saw (acquire: it then sees the job fields).
//  * Tasks are claimed with fetch_add on `next_task`, so each index runs exactly once.
//  * When the caller has run out of tasks it closes the job (no further joins) and waits until the
//    registered count drops to zero. Every claimed task belongs to the caller or a registered
//    worker, so all tasks are then finished, no worker can still read the job fields, and the
//    caller's std::function outlives every use. A worker that was not scheduled in time simply
//    misses the job: the caller never waits for a thread that is not running, which matters on a
//    loaded or oversubscribed machine.
//  * A task that throws stops the hand-out of further tasks; the first exception is rethrown in
//    the caller after the job is closed and drained.
//  * parallel_for called from inside a task (nesting, which the design forbids) runs serially on
//    the calling thread instead of deadlocking. One pool serves one calling thread at a time.
#include "core/thread_pool.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <exception>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "core/error.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace eagle2 {

namespace {

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#else
  std::this_thread::yield();
#endif
}

// Set while a thread executes tasks of some pool: a nested parallel_for then runs inline.
thread_local bool t_inside_pool_task = false;

// How long a worker keeps spinning for the next job before it sleeps. Between the matmuls of one
// token the gap is microseconds; between tokens of interactive use it can be anything.
constexpr auto kSpinDuration = std::chrono::microseconds(200);

}  // namespace

struct ThreadPool::State {
  std::mutex mutex;
  std::condition_variable wake;
  static constexpr uint64_t kClosed = uint64_t{1} << 31;
  static constexpr uint64_t kCountMask = kClosed - 1;
  static uint64_t gen_of(uint64_t s) { return s >> 32; }
  // Starts closed: generation 0 is no job.
  std::atomic<uint64_t> state{kClosed};
  int sleepers = 0;               // guarded by mutex
  std::atomic<bool> stop{false};  // set before the generation bump that announces it

  // The current job: written by the caller only while no worker is inside a job.
  const std::function<void(int64_t)>* fn = nullptr;
  int64_t n_tasks = 0;
  std::atomic<int64_t> next_task{0};

  std::mutex error_mutex;
  std::exception_ptr error;  // guarded by error_mutex

  std::vector<std::thread> workers;

  // Claims and runs tasks until none are left. Safe to run on any participating thread.
  void run_tasks() {
    const bool was_inside = t_inside_pool_task;
    t_inside_pool_task = true;
    for (;;) {
      const int64_t t = next_task.fetch_add(1, std::memory_order_relaxed);
      if (t >= n_tasks) break;
      try {
        (*fn)(t);
      } catch (...) {
        {
          std::lock_guard<std::mutex> lock(error_mutex);
          if (!error) error = std::current_exception();
        }
        // Nobody else starts a new task; the running ones finish.
        next_task.store(n_tasks, std::memory_order_relaxed);
        break;
      }
    }
    t_inside_pool_task = was_inside;
  }

  // Waits for a generation other than `seen`: spins briefly, then sleeps.
  uint64_t wait_for_new_job(uint64_t seen) {
    uint64_t st = state.load(std::memory_order_acquire);
    if (gen_of(st) != seen) return st;
    const auto spin_until = std::chrono::steady_clock::now() + kSpinDuration;
    int spins = 0;
    while (gen_of(st = state.load(std::memory_order_acquire)) == seen) {
      cpu_relax();
      // Reading the clock costs ~20 ns; checking it every 64 pauses keeps that negligible.
      if ((++spins & 63) == 0 && std::chrono::steady_clock::now() > spin_until) break;
    }
    if (gen_of(st) != seen) return st;
    std::unique_lock<std::mutex> lock(mutex);
    ++sleepers;
    wake.wait(lock, [&] { return gen_of(state.load(std::memory_order_acquire)) != seen; });
    --sleepers;
    return state.load(std::memory_order_acquire);
  }

  void worker_loop() {
    uint64_t seen = 0;
    for (;;) {
      uint64_t st = wait_for_new_job(seen);
      if (stop.load(std::memory_order_acquire)) return;
      // Join the job unless it has been closed (the caller already ran every task) or replaced.
      bool joined = false;
      while (!(st & kClosed)) {
        if (state.compare_exchange_weak(st, st + 1, std::memory_order_acquire,
                                        std::memory_order_acquire)) {
          joined = true;
          break;
        }
      }
      seen = gen_of(st);
      if (!joined) continue;
      run_tasks();
      state.fetch_sub(1, std::memory_order_release);
    }
  }
};

ThreadPool::ThreadPool(int n_threads)
    : ThreadPool(n_threads,
                 [](std::function<void()> body) { return std::thread(std::move(body)); }) {}

ThreadPool::ThreadPool(int n_threads, const Spawner& spawn)
    : state_(new State), n_threads_(n_threads < 1 ? 1 : n_threads) {
  // A thread the system refuses (std::system_error, e.g. EAGAIN under a process limit) must not
  // escape with workers running and a leaked state: that would terminate the process.
  try {
    state_->workers.reserve(static_cast<size_t>(n_threads_ - 1));
    for (int i = 1; i < n_threads_; ++i) {
      std::thread t = spawn([s = state_] { s->worker_loop(); });
      if (!t.joinable()) fail("the thread spawner returned no thread");
      state_->workers.push_back(std::move(t));
    }
  } catch (const std::exception& e) {
    stop_workers();
    fail("cannot start ", n_threads_, " threads: ", e.what());
  }
}

ThreadPool::~ThreadPool() {
  stop_workers();
}

void ThreadPool::stop_workers() noexcept {
  {
    std::lock_guard<std::mutex> lock(state_->mutex);
    state_->stop.store(true, std::memory_order_release);
    const uint64_t g = State::gen_of(state_->state.load(std::memory_order_relaxed)) + 1;
    state_->state.store(g << 32 | State::kClosed, std::memory_order_release);
  }
  state_->wake.notify_all();
  for (auto& t : state_->workers) t.join();
  delete state_;
  state_ = nullptr;
}

void ThreadPool::parallel_for(int64_t n_tasks, const std::function<void(int64_t task)>& fn) {
  if (n_tasks <= 0) return;
  State& s = *state_;
  if (s.workers.empty() || n_tasks == 1 || t_inside_pool_task) {
    for (int64_t t = 0; t < n_tasks; ++t) fn(t);
    return;
  }

  // The previous job is closed and drained, so no worker reads these fields now.
  s.fn = &fn;
  s.n_tasks = n_tasks;
  s.error = nullptr;
  s.next_task.store(0, std::memory_order_relaxed);
  bool notify;
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    const uint64_t g = State::gen_of(s.state.load(std::memory_order_relaxed)) + 1;
    s.state.store(g << 32, std::memory_order_release);
    notify = s.sleepers > 0;
  }
  if (notify) s.wake.notify_all();

  s.run_tasks();

  // Every task is claimed: close the job and wait for the workers that joined it to finish theirs.
  uint64_t st = s.state.fetch_or(State::kClosed, std::memory_order_acq_rel);
  int spins = 0;
  while ((st & State::kCountMask) != 0) {
    // Registered workers are running their last task; on an oversubscribed machine one may need
    // our core, so stop hogging it after a while.
    if (++spins < 4096)
      cpu_relax();
    else
      std::this_thread::yield();
    st = s.state.load(std::memory_order_acquire);
  }
  s.fn = nullptr;
  if (s.error) {
    std::exception_ptr e = s.error;
    s.error = nullptr;
    std::rethrow_exception(e);
  }
}

int default_thread_count() {
  // Physical cores: count distinct (package, core id) pairs in /proc/cpuinfo would be exact, but
  // hyper-threaded siblings share the FMA units and the memory bus, so we read the sysfs topology
  // when available and fall back to the logical count.
  unsigned logical = std::thread::hardware_concurrency();
  if (logical == 0) logical = 1;
  std::vector<std::pair<int, int>> cores;
  for (unsigned cpu = 0; cpu < logical; ++cpu) {
    const std::string base = "/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/topology/";
    FILE* fc = std::fopen((base + "core_id").c_str(), "r");
    FILE* fp = std::fopen((base + "physical_package_id").c_str(), "r");
    int core = -1, pkg = -1;
    if (fc) {
      if (std::fscanf(fc, "%d", &core) != 1) core = -1;
      std::fclose(fc);
    }
    if (fp) {
      if (std::fscanf(fp, "%d", &pkg) != 1) pkg = -1;
      std::fclose(fp);
    }
    if (core < 0 || pkg < 0) return static_cast<int>(logical);
    std::pair<int, int> id{pkg, core};
    bool found = false;
    for (const auto& c : cores) found = found || c == id;
    if (!found) cores.push_back(id);
  }
  return cores.empty() ? static_cast<int>(logical) : static_cast<int>(cores.size());
}

}  // namespace eagle2

#include "kernels/bandwidth.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <memory>

#include "core/error.h"

namespace eagle2 {

namespace {

// Several independent XOR chains so the loop is bound by loads, not by a dependency; the compiler
// turns this into wide vector loads. The result is returned so the reads cannot be elided.
uint64_t read_chunk(const uint64_t* p, size_t n) {
  uint64_t a[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  size_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int j = 0; j < 8; ++j) a[j] ^= p[i + j];
  for (; i < n; ++i) a[0] ^= p[i];
  return a[0] ^ a[1] ^ a[2] ^ a[3] ^ a[4] ^ a[5] ^ a[6] ^ a[7];
}

struct FreeDeleter {
  void operator()(void* p) const { std::free(p); }
};

}  // namespace

double measure_read_bandwidth_gbs(ThreadPool& pool, size_t bytes) {
  constexpr size_t kPage = 4096;
  bytes = std::max(kPage, (bytes + kPage - 1) / kPage * kPage);
  std::unique_ptr<void, FreeDeleter> buf(std::aligned_alloc(kPage, bytes));
  if (!buf) fail("measure_read_bandwidth_gbs: cannot allocate ", bytes, " bytes");
  auto* words = static_cast<uint64_t*>(buf.get());
  const size_t n_words = bytes / 8;

  // Many more tasks than threads so a thread slowed by a neighbour does not stretch the timing.
  const int64_t n_tasks =
      std::max<int64_t>(1, std::min<int64_t>(static_cast<int64_t>(bytes / (1 << 20)), 1024));
  const size_t per_task =
      (n_words + static_cast<size_t>(n_tasks) - 1) / static_cast<size_t>(n_tasks);
  auto range = [&](int64_t t, size_t* b, size_t* e) {
    *b = std::min(n_words, static_cast<size_t>(t) * per_task);
    *e = std::min(n_words, *b + per_task);
  };
  // First touch from the pool, so pages are faulted in (and placed) by the threads that read them.
  pool.parallel_for(n_tasks, [&](int64_t t) {
    size_t b, e;
    range(t, &b, &e);
    for (size_t i = b; i < e; ++i) words[i] = i * 0x9e3779b97f4a7c15ull;
  });

  std::atomic<uint64_t> sink{0};
  double best = 0.0;
  for (int rep = 0; rep < 5; ++rep) {
    const auto t0 = std::chrono::steady_clock::now();
    pool.parallel_for(n_tasks, [&](int64_t t) {
      size_t b, e;
      range(t, &b, &e);
      sink.fetch_xor(read_chunk(words + b, e - b), std::memory_order_relaxed);
    });
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (s > 0) best = std::max(best, static_cast<double>(bytes) / s / 1e9);
  }
  if (sink.load() == 0x5eed) best += 0.0;  // keeps `sink` observable
  return best;
}

}  // namespace eagle2

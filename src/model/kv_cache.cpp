#include "model/kv_cache.h"

#include <unistd.h>

#include <cstring>

#include "core/error.h"

namespace eagle2 {

namespace {

// The machine's physical memory in bytes (0 if unknown). A cache larger than that cannot be used:
// zero-filling it would only end in the kernel's OOM killer, so it is refused with a message.
uint64_t physical_memory_bytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page <= 0) return 0;
  return static_cast<uint64_t>(pages) * static_cast<uint64_t>(page);
}

}  // namespace

KvCache::KvCache(int64_t n_layers, int64_t kv_dim, int64_t capacity)
    : n_layers_(n_layers), kv_dim_(kv_dim), capacity_(capacity) {
  if (capacity <= 0) fail("KV cache: context size must be positive (got ", capacity, ")");
  if (n_layers <= 0 || kv_dim <= 0)
    fail("KV cache: layers (", n_layers, ") and key/value width (", kv_dim, ") must be positive");
  // Keys and values: 2 * layers * capacity * kv_dim floats, every product checked.
  uint64_t n = 0, bytes = 0;
  if (__builtin_mul_overflow(static_cast<uint64_t>(n_layers), static_cast<uint64_t>(capacity), &n) ||
      __builtin_mul_overflow(n, static_cast<uint64_t>(kv_dim), &n) ||
      __builtin_mul_overflow(n, 2 * sizeof(float), &bytes))
    fail("KV cache: ", n_layers, " layers x ", capacity, " tokens x ", kv_dim,
         " key/value width does not fit in memory; use a smaller --ctx");
  const uint64_t ram = physical_memory_bytes();
  if (ram > 0 && bytes > ram)
    fail("KV cache: ", n_layers, " layers x ", capacity, " tokens x ", kv_dim, " key/value width needs ",
         bytes >> 20, " MiB, more than this machine's ", ram >> 20, " MiB of memory; use a smaller --ctx");
  k_.assign(n, 0.0f);
  v_.assign(n, 0.0f);
}

void KvCache::begin_batch(int64_t n_rows) {
  if (size_ + n_rows > capacity_)
    fail("context full: ", size_, " cached tokens + ", n_rows, " new ones exceed --ctx ", capacity_);
  pending_ = n_rows;
}

void KvCache::keep(std::span<const int32_t> rows) {
  int64_t prev = -1;
  for (int32_t r : rows) {
    if (r <= prev || r >= pending_)
      fail("KV cache: rows to keep must be increasing pending rows (got ", r, ")");
    prev = r;
  }
  const size_t row_bytes = static_cast<size_t>(kv_dim_) * sizeof(float);
  for (int64_t l = 0; l < n_layers_; ++l) {
    for (size_t j = 0; j < rows.size(); ++j) {
      const int64_t from = size_ + rows[j], to = size_ + static_cast<int64_t>(j);
      if (from == to) continue;
      // to < from always (rows increase), and each row is moved before it can be overwritten.
      std::memmove(key(l, to), key(l, from), row_bytes);
      std::memmove(value(l, to), value(l, from), row_bytes);
    }
  }
  size_ += static_cast<int64_t>(rows.size());
  pending_ = 0;
}

void KvCache::keep_all() {
  size_ += pending_;
  pending_ = 0;
}

void KvCache::truncate(int64_t n) {
  if (n < 0 || n > size_) fail("KV cache: cannot truncate ", size_, " slots to ", n);
  size_ = n;
  pending_ = 0;
}

}  // namespace eagle2

#include "model/kv_pool.h"

#include <unistd.h>

#include <algorithm>
#include <climits>
#include <utility>

#include "core/error.h"
#include "core/splitmix64.h"

namespace eagle2 {

namespace {

// The machine's physical memory in bytes (0 if unknown). A pool larger than that cannot be used:
// zero-filling it would only end in the kernel's OOM killer, so it is refused with a message.
uint64_t physical_memory_bytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page <= 0) return 0;
  return static_cast<uint64_t>(pages) * static_cast<uint64_t>(page);
}

}  // namespace

KvPool::KvPool(int64_t n_layers, int64_t kv_dim, int64_t block_size, int64_t n_blocks)
    : n_layers_(n_layers), kv_dim_(kv_dim), n_blocks_(n_blocks) {
  if (n_layers <= 0 || kv_dim <= 0)
    fail("KV cache: layers (", n_layers, ") and key/value width (", kv_dim, ") must be positive");
  if (block_size <= 0 || block_size > (int64_t{1} << 20) || (block_size & (block_size - 1)) != 0)
    fail("KV cache: the block size must be a power of two in [1, 1048576] (got ", block_size, ")");
  if (n_blocks <= 0 || n_blocks > INT32_MAX)
    fail("KV cache: the number of blocks must be in [1, ", INT32_MAX, "] (got ", n_blocks, ")");
  while ((int64_t{1} << shift_) < block_size) ++shift_;
  // Keys and values: 2 * layers * tokens * kv_dim floats, every product checked.
  uint64_t tokens = 0, per_layer = 0, n = 0, bytes = 0;
  if (__builtin_mul_overflow(static_cast<uint64_t>(n_blocks), static_cast<uint64_t>(block_size),
                             &tokens) ||
      __builtin_mul_overflow(tokens, static_cast<uint64_t>(kv_dim), &per_layer) ||
      __builtin_mul_overflow(per_layer, static_cast<uint64_t>(n_layers), &n) ||
      __builtin_mul_overflow(n, 2 * sizeof(float), &bytes))
    fail("KV cache: ", n_layers, " layers x ", n_blocks * block_size, " tokens x ", kv_dim,
         " key/value width does not fit in memory; use a smaller --ctx");
  const uint64_t ram = physical_memory_bytes();
  if (ram > 0 && bytes > ram)
    fail("KV cache: ", n_layers, " layers x ", tokens, " tokens x ", kv_dim,
         " key/value width needs ", bytes >> 20, " MiB, more than this machine's ", ram >> 20,
         " MiB of memory; use a smaller --ctx");
  layer_floats_ = static_cast<size_t>(per_layer);
  k_.assign(static_cast<size_t>(n), 0.0f);
  v_.assign(static_cast<size_t>(n), 0.0f);
  // Block 0 is handed out first, then 1, 2, ...: one sequence alone gets its blocks in storage
  // order, which keeps its reads sequential.
  free_.resize(static_cast<size_t>(n_blocks));
  for (int64_t i = 0; i < n_blocks; ++i)
    free_[static_cast<size_t>(i)] = static_cast<int32_t>(n_blocks - 1 - i);
  in_use_.assign(static_cast<size_t>(n_blocks), 0);
}

int32_t KvPool::allocate() {
  if (free_.empty())
    fail("KV memory full: all ", n_blocks_, " blocks of ", block_size(), " tokens are in use");
  const int32_t b = free_.back();
  free_.pop_back();
  in_use_[static_cast<size_t>(b)] = 1;
  peak_used_ = std::max(peak_used_, used_blocks());
  return b;
}

void KvPool::release(int32_t block) {
  if (block < 0 || block >= n_blocks_ || !in_use_[static_cast<size_t>(block)])
    fail("KV cache: block ", block, " released but not in use");
  in_use_[static_cast<size_t>(block)] = 0;
  free_.push_back(block);
}

void KvPool::shuffle_free_list(uint64_t seed) {
  SplitMix64 rng(seed);
  for (size_t i = free_.size(); i > 1; --i) std::swap(free_[i - 1], free_[rng.next_u64() % i]);
}

}  // namespace eagle2

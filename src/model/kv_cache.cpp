#include "model/kv_cache.h"

#include <cstring>
#include <utility>

#include "core/error.h"

namespace eagle2 {

namespace {

int64_t blocks_for(int64_t slots, int shift) {
  return (slots + (int64_t{1} << shift) - 1) >> shift;
}

std::shared_ptr<KvPool> own_pool(int64_t n_layers, int64_t kv_dim, int64_t capacity,
                                 int64_t block_size) {
  if (capacity <= 0) fail("KV cache: context size must be positive (got ", capacity, ")");
  // A bad block size is refused by the pool, which names it; rounding up cannot overflow.
  const int64_t n_blocks = block_size > 0 ? KvPool::blocks_for_tokens(capacity, block_size) : 1;
  return std::make_shared<KvPool>(n_layers, kv_dim, block_size, n_blocks);
}

}  // namespace

KvCache::KvCache(int64_t n_layers, int64_t kv_dim, int64_t capacity, int64_t block_size)
    : KvCache(own_pool(n_layers, kv_dim, capacity, block_size), capacity) {}

KvCache::KvCache(std::shared_ptr<KvPool> pool, int64_t capacity)
    : pool_(std::move(pool)), capacity_(capacity) {
  if (!pool_) fail("KV cache: no pool");
  if (capacity <= 0) fail("KV cache: context size must be positive (got ", capacity, ")");
}

KvCache::~KvCache() {
  if (pool_) shrink_to(0);
}

KvCache& KvCache::operator=(KvCache&& other) noexcept {
  if (this != &other) {
    if (pool_) shrink_to(0);
    pool_ = std::move(other.pool_);
    blocks_ = std::move(other.blocks_);
    capacity_ = other.capacity_;
    size_ = other.size_;
    pending_ = other.pending_;
    other.blocks_.clear();
    other.size_ = other.pending_ = 0;
  }
  return *this;
}

int64_t KvCache::row(int64_t slot) const {
  const int shift = pool_->block_shift();
  const int64_t b = slot >> shift;
  if (slot < 0 || b >= static_cast<int64_t>(blocks_.size()))
    fail("KV cache: slot ", slot, " is not reserved (", size_ + pending_, " slots in use)");
  return (static_cast<int64_t>(blocks_[static_cast<size_t>(b)]) << shift) |
         (slot & ((int64_t{1} << shift) - 1));
}

void KvCache::shrink_to(int64_t slots) {
  const int64_t keep = blocks_for(slots, pool_->block_shift());
  while (static_cast<int64_t>(blocks_.size()) > keep) {
    pool_->release(blocks_.back());
    blocks_.pop_back();
  }
}

void KvCache::begin_batch(int64_t n_rows) {
  if (n_rows < 0 || size_ + n_rows > capacity_)
    fail("context full: ", size_, " cached tokens + ", n_rows, " new ones exceed --ctx ",
         capacity_);
  const int64_t need = blocks_for(size_ + n_rows, pool_->block_shift());
  const int64_t more = need - static_cast<int64_t>(blocks_.size());
  if (more > pool_->free_blocks())
    fail("KV memory full: a batch of ", n_rows, " tokens needs ", more, " more blocks of ",
         pool_->block_size(), " tokens, ", pool_->free_blocks(), " of ", pool_->n_blocks(),
         " are free");
  while (static_cast<int64_t>(blocks_.size()) < need) blocks_.push_back(pool_->allocate());
  shrink_to(size_ + n_rows);  // a smaller batch than the last pending one
  pending_ = n_rows;
}

void KvCache::keep(std::span<const int32_t> rows) {
  int64_t prev = -1;
  for (int32_t r : rows) {
    if (r <= prev || r >= pending_)
      fail("KV cache: rows to keep must be increasing pending rows (got ", r, ")");
    prev = r;
  }
  const size_t row_bytes = static_cast<size_t>(kv_dim()) * sizeof(float);
  for (int64_t l = 0; l < n_layers(); ++l) {
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
  shrink_to(size_);
}

void KvCache::keep_all() {
  size_ += pending_;
  pending_ = 0;
}

void KvCache::drop_pending() {
  pending_ = 0;
  shrink_to(size_);
}

void KvCache::truncate(int64_t n) {
  if (n < 0 || n > size_) fail("KV cache: cannot truncate ", size_, " slots to ", n);
  size_ = n;
  pending_ = 0;
  shrink_to(size_);
}

}  // namespace eagle2

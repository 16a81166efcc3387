// One sequence's key/value cache: a block table over a KvPool (model/kv_pool.h) that it may share
// with other sequences. Logical slots [0, size) hold the committed context; a forward batch of T
// rows writes slots [size, size + T) ("pending"), and the caller then keeps a subset of them (an
// accepted tree path, or everything for prefill) and drops the rest. The cache holds blocks only
// for the slots in use: none before its first batch, ceil((size + pending) / block size) while a
// batch is pending, and the blocks of a rejected tree go back to the pool as soon as it is
// resolved. Attention reads keys and values in place through the block table (kernels/attention.h).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "model/kv_pool.h"

namespace eagle2 {

class KvCache {
 public:
  // The block size of caches that make their own pool.
  static constexpr int64_t kDefaultBlockSize = 16;

  // A cache with a pool of its own, large enough for `capacity` tokens.
  KvCache(int64_t n_layers, int64_t kv_dim, int64_t capacity,
          int64_t block_size = kDefaultBlockSize);
  // A cache over a shared pool; at most `capacity` tokens (the model's context limit). It holds
  // no memory until its first batch.
  KvCache(std::shared_ptr<KvPool> pool, int64_t capacity);
  ~KvCache();
  KvCache(KvCache&& other) noexcept = default;
  KvCache& operator=(KvCache&& other) noexcept;
  KvCache(const KvCache&) = delete;
  KvCache& operator=(const KvCache&) = delete;

  int64_t capacity() const { return capacity_; }
  int64_t size() const { return size_; }        // committed slots
  int64_t pending() const { return pending_; }  // rows of the last batch not yet kept or dropped
  int64_t kv_dim() const { return pool_->kv_dim(); }
  int64_t n_layers() const { return pool_->n_layers(); }
  int64_t blocks_held() const { return static_cast<int64_t>(blocks_.size()); }
  const KvPool& pool() const { return *pool_; }

  // The block table: logical slot s is storage row blocks[s >> shift] << shift | s % block size.
  std::span<const int32_t> block_table() const { return blocks_; }
  int block_shift() const { return pool_->block_shift(); }

  // Slot `slot` (< size + pending) of layer `layer`.
  float* key(int64_t layer, int64_t slot) { return pool_->key_base(layer) + row(slot) * kv_dim(); }
  float* value(int64_t layer, int64_t slot) {
    return pool_->value_base(layer) + row(slot) * kv_dim();
  }
  const float* key(int64_t layer, int64_t slot) const {
    return pool_->key_base(layer) + row(slot) * kv_dim();
  }
  const float* value(int64_t layer, int64_t slot) const {
    return pool_->value_base(layer) + row(slot) * kv_dim();
  }
  // The storage rows of all layers (for attention): keys of layer l at pool().key_base(l).
  const float* key_base(int64_t layer) const { return pool_->key_base(layer); }
  const float* value_base(int64_t layer) const { return pool_->value_base(layer); }

  // Reserves slots for a batch of n rows (replacing any pending ones); Error when the context
  // would overflow or the pool has too few free blocks (then nothing changes).
  void begin_batch(int64_t n_rows);
  // Keeps the given pending rows (strictly increasing batch row indices), moved in order to the
  // slots right after the committed context; drops the other pending rows.
  void keep(std::span<const int32_t> rows);
  void keep_all();
  void drop_pending();
  // Forgets committed slots past n (n <= size()).
  void truncate(int64_t n);

 private:
  int64_t row(int64_t slot) const;
  // Returns the blocks past those that `slots` slots need to the pool.
  void shrink_to(int64_t slots);

  std::shared_ptr<KvPool> pool_;
  std::vector<int32_t> blocks_;
  int64_t capacity_ = 0;
  int64_t size_ = 0, pending_ = 0;
};

}  // namespace eagle2

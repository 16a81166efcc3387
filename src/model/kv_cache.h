// The target's key/value cache: per layer, `capacity` slots of kv_dim floats for keys (stored after
// RoPE) and values. Slots [0, size) hold the committed context; a forward batch of T rows writes
// slots [size, size + T) ("pending"), and the caller then keeps a subset of them (an accepted
// tree path, or everything for prefill) and drops the rest.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace eagle2 {

class KvCache {
 public:
  KvCache(int64_t n_layers, int64_t kv_dim, int64_t capacity);

  int64_t capacity() const { return capacity_; }
  int64_t size() const { return size_; }      // committed slots
  int64_t pending() const { return pending_; }  // rows of the last batch not yet kept or dropped
  int64_t kv_dim() const { return kv_dim_; }
  int64_t n_layers() const { return n_layers_; }

  float* key(int64_t layer, int64_t slot) { return &k_[index(layer, slot)]; }
  float* value(int64_t layer, int64_t slot) { return &v_[index(layer, slot)]; }
  const float* key(int64_t layer, int64_t slot) const { return &k_[index(layer, slot)]; }
  const float* value(int64_t layer, int64_t slot) const { return &v_[index(layer, slot)]; }

  // Reserves slots for a batch of n rows; Error when the context would overflow.
  void begin_batch(int64_t n_rows);
  // Keeps the given pending rows (strictly increasing batch row indices), moved in order to the
  // slots right after the committed context; drops the other pending rows.
  void keep(std::span<const int32_t> rows);
  void keep_all();
  void drop_pending() { pending_ = 0; }
  // Forgets committed slots past n (n <= size()).
  void truncate(int64_t n);

 private:
  size_t index(int64_t layer, int64_t slot) const {
    return static_cast<size_t>((layer * capacity_ + slot) * kv_dim_);
  }
  int64_t n_layers_, kv_dim_, capacity_;
  int64_t size_ = 0, pending_ = 0;
  std::vector<float> k_, v_;
};

}  // namespace eagle2

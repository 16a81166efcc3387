// The memory behind KV caches: fixed-size blocks of token slots over one allocation, shared by
// every sequence of a model (model/kv_cache.h holds each sequence's block table). Storage is per
// layer: keys of layer l, storage row r at key_base(l) + r * kv_dim, where row r is slot r %
// block_size of block r / block_size (likewise values). Blocks are handed out from a free list and
// come back when a sequence no longer needs them, so many sequences of different lengths share one
// budget without fragmentation: a sequence holds ceil(tokens / block_size) blocks, never its
// maximum.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace eagle2 {

class KvPool {
 public:
  // n_blocks blocks of block_size slots (a power of two) for n_layers layers of kv_dim floats.
  // Error when the sizes are not positive, their product overflows, or the pool would be larger
  // than the machine's physical memory.
  KvPool(int64_t n_layers, int64_t kv_dim, int64_t block_size, int64_t n_blocks);
  // Blocks of block_size (> 0) that hold `tokens` slots: ceil(tokens / block_size).
  static int64_t blocks_for_tokens(int64_t tokens, int64_t block_size) {
    return tokens / block_size + (tokens % block_size != 0 ? 1 : 0);
  }
  KvPool(const KvPool&) = delete;
  KvPool& operator=(const KvPool&) = delete;

  int64_t n_layers() const { return n_layers_; }
  int64_t kv_dim() const { return kv_dim_; }
  int64_t block_size() const { return int64_t{1} << shift_; }
  int block_shift() const { return shift_; }
  int64_t n_blocks() const { return n_blocks_; }
  int64_t free_blocks() const { return static_cast<int64_t>(free_.size()); }
  int64_t used_blocks() const { return n_blocks_ - free_blocks(); }
  int64_t peak_used_blocks() const { return peak_used_; }
  void reset_peak() { peak_used_ = used_blocks(); }

  // A free block's id; Error when none is left.
  int32_t allocate();
  // Returns a block to the free list; Error for an id not in use (a double release is a bug that
  // would hand one block to two sequences).
  void release(int32_t block);
  // Reorders the free list (Fisher-Yates, seeded): tests use it to show results do not depend on
  // which blocks a sequence gets.
  void shuffle_free_list(uint64_t seed);

  float* key_base(int64_t layer) { return &k_[static_cast<size_t>(layer) * layer_floats_]; }
  float* value_base(int64_t layer) { return &v_[static_cast<size_t>(layer) * layer_floats_]; }
  const float* key_base(int64_t layer) const {
    return &k_[static_cast<size_t>(layer) * layer_floats_];
  }
  const float* value_base(int64_t layer) const {
    return &v_[static_cast<size_t>(layer) * layer_floats_];
  }

 private:
  int64_t n_layers_, kv_dim_, n_blocks_;
  int shift_ = 0;
  size_t layer_floats_ = 0;  // n_blocks * block_size * kv_dim
  std::vector<float> k_, v_;
  std::vector<int32_t> free_;    // a stack: the next allocate() takes the back
  std::vector<uint8_t> in_use_;  // per block
  int64_t peak_used_ = 0;
};

}  // namespace eagle2

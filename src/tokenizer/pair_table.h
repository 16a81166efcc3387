// The merge table of byte-level BPE: (left id, right id) -> (rank, merged id), an open-addressing
// hash table probed linearly. Encoding looks a pair up for every adjacent pair of every new word,
// millions of times per megabyte of text; a flat table costs one cache miss per lookup where a
// node-based std::unordered_map costs two or three.
#pragma once

#include <cstdint>
#include <vector>

#include "core/splitmix64.h"

namespace eagle2 {

struct BpeMerge {
  int32_t rank;
  int32_t id;
};

class PairTable {
 public:
  void reserve(size_t n) {
    size_t cap = 16;
    while (cap < 2 * n) cap *= 2;  // at most half full
    keys_.assign(cap, kEmpty);
    values_.assign(cap, BpeMerge{0, 0});
    mask_ = cap - 1;
  }
  // Sets the value of (left, right), replacing an earlier one. reserve() must have room.
  void set(int32_t left, int32_t right, BpeMerge m) {
    const uint64_t k = key(left, right);
    size_t i = slot(k);
    while (keys_[i] != kEmpty && keys_[i] != k) i = (i + 1) & mask_;
    keys_[i] = k;
    values_[i] = m;
  }
  const BpeMerge* find(int32_t left, int32_t right) const {
    if (keys_.empty()) return nullptr;
    const uint64_t k = key(left, right);
    for (size_t i = slot(k);; i = (i + 1) & mask_) {
      if (keys_[i] == k) return &values_[i];
      if (keys_[i] == kEmpty) return nullptr;
    }
  }

 private:
  // Ids are non-negative int32, so no real pair has both halves 0xFFFFFFFF.
  static constexpr uint64_t kEmpty = ~uint64_t{0};
  static uint64_t key(int32_t left, int32_t right) {
    return uint64_t{static_cast<uint32_t>(left)} << 32 | static_cast<uint32_t>(right);
  }
  size_t slot(uint64_t k) const { return static_cast<size_t>(splitmix64_mix(k)) & mask_; }
  std::vector<uint64_t> keys_;
  std::vector<BpeMerge> values_;
  size_t mask_ = 0;
};

}  // namespace eagle2

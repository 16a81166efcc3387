// The random stream of a training run (input noise, data shuffling): SplitMix64, whose whole state
// is one 64-bit word, so a checkpoint stores it and a resumed run draws exactly the numbers an
// uninterrupted run would have drawn.
#pragma once

#include <cstdint>

namespace eagle2::train {

class TrainRng {
 public:
  explicit TrainRng(uint64_t seed = 0) : state_(seed) {}

  uint64_t next_u64() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  // [0, 1) from the top 24 bits: every value is an exact float.
  float uniform() { return static_cast<float>(next_u64() >> 40) * (1.0f / 16777216.0f); }
  float uniform(float lo, float hi) { return lo + (hi - lo) * uniform(); }

  uint64_t state() const { return state_; }
  void set_state(uint64_t s) { state_ = s; }

 private:
  uint64_t state_;
};

}  // namespace eagle2::train

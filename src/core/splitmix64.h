// SplitMix64 (Steele, Lea and Flood, 2014), the project's one copy of it. It lives in core, the
// lowest layer, because every layer draws from it: the sampler keys each output position's
// uniform with it (sampling/position_random.h) and seeds xoshiro256** with it
// (sampling/rng.cpp), the tokenizer trainer subsamples its corpus with it, random models hash
// (seed, name, index) with its mixing function, and training draws noise and shuffles with it.
// Outputs are part of the file formats and tests (checkpoints store the state, random models and
// golden runs depend on the values), so they must never change.
//
// Header-only so that per-element callers (random weights, training noise) inline it. It must not
// be included from an ISA-flagged *_avx2.cpp / *_avx512.cpp file (see kernels/matmul_internal.h).
#pragma once

#include <cstdint>

namespace eagle2 {

// The state increment: 2^64 divided by the golden ratio, odd.
inline constexpr uint64_t kSplitMix64Gamma = 0x9e3779b97f4a7c15ull;

// The output function: a bijective 64-bit mix (the MurmurHash3 finalizer, variant 13). Used
// alone, it hashes a counter into well-spread bits.
constexpr uint64_t splitmix64_mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// One step: advances `state` by the gamma and returns the mixed new state.
constexpr uint64_t splitmix64_next(uint64_t& state) {
  state += kSplitMix64Gamma;
  return splitmix64_mix(state);
}

// The n-th output (n >= 1) of the stream that starts at `state`, without stepping through the ones
// before it: a counter-based stream, so the values cannot depend on the order they are drawn in.
constexpr uint64_t splitmix64_at(uint64_t state, uint64_t n) {
  return splitmix64_mix(state + n * kSplitMix64Gamma);
}

// A SplitMix64 stream. The whole state is one 64-bit word, so a checkpoint stores it and a resumed
// run draws exactly the numbers an uninterrupted run would have drawn.
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed = 0) : state_(seed) {}

  uint64_t next_u64() { return splitmix64_next(state_); }
  // [0, 1) from the top 24 bits: every value is an exact float.
  float uniform() { return static_cast<float>(next_u64() >> 40) * (1.0f / 16777216.0f); }
  float uniform(float lo, float hi) { return lo + (hi - lo) * uniform(); }

  uint64_t state() const { return state_; }
  void set_state(uint64_t s) { state_ = s; }

 private:
  uint64_t state_;
};

}  // namespace eagle2

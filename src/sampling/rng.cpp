#include "sampling/rng.h"

#include "core/splitmix64.h"

namespace eagle2 {

namespace {

uint64_t rotl(uint64_t x, int k) {
  return (x << k) | (x >> (64 - k));
}

}  // namespace

Rng::Rng(uint64_t seed) {
  // splitmix64 spreads any seed (0 included) into a well-mixed, never all-zero xoshiro state.
  uint64_t x = seed;
  for (auto& s : s_) s = splitmix64_next(x);
}

uint64_t Rng::next_u64() {
  const uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

double Rng::uniform() {
  // The top 53 bits fill a double's mantissa exactly: every value is a multiple of 2^-53 in [0, 1).
  return static_cast<double>(next_u64() >> 11) * 0x1.0p-53;
}

}  // namespace eagle2

// A seeded, platform-independent random number generator (xoshiro256**, seeded by splitmix64).
// Same seed, same numbers on every machine and compiler: std:: distributions are not portable.
#pragma once

#include <cstdint>

namespace eagle2 {

class Rng {
 public:
  explicit Rng(uint64_t seed = 0);
  uint64_t next_u64();
  double uniform();  // [0, 1) with 53 random bits

 private:
  uint64_t s_[4];
};

}  // namespace eagle2

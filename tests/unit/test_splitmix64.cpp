// SplitMix64, the one copy every layer draws from (core/splitmix64.h): its outputs are pinned to
// the reference implementation's (Vigna's splitmix64.c; seed 1234567 is the published test
// vector), because checkpoints, random models and seeded tests depend on them.
#include <gtest/gtest.h>

#include <bit>
#include <cstdint>

#include "core/splitmix64.h"

namespace eagle2 {
namespace {

TEST(SplitMix64, ReferenceOutputs) {
  SplitMix64 a(1234567);
  EXPECT_EQ(a.next_u64(), 6457827717110365317ull);
  EXPECT_EQ(a.next_u64(), 3203168211198807973ull);
  EXPECT_EQ(a.next_u64(), 9817491932198370423ull);
  EXPECT_EQ(a.next_u64(), 4593380528125082431ull);
  EXPECT_EQ(a.next_u64(), 16408922859458223821ull);
  SplitMix64 zero(0);
  EXPECT_EQ(zero.next_u64(), 0xe220a8397b1dcdafull);
  EXPECT_EQ(zero.next_u64(), 0x6e789e6aa1b965f4ull);
  static_assert(splitmix64_mix(kSplitMix64Gamma) == 0xe220a8397b1dcdafull);
}

TEST(SplitMix64, StateStepAndCounterAccessAgree) {
  uint64_t state = 5;
  SplitMix64 s(5);
  for (uint64_t n = 1; n <= 100; ++n) {
    const uint64_t stepped = splitmix64_next(state);
    EXPECT_EQ(stepped, splitmix64_at(5, n));
    EXPECT_EQ(stepped, s.next_u64());
    EXPECT_EQ(state, s.state());
  }
  // Wrapping past 2^64 is part of the stream.
  EXPECT_EQ(splitmix64_at(~uint64_t{0}, 3), splitmix64_mix(~uint64_t{0} + 3 * kSplitMix64Gamma));
}

TEST(SplitMix64, UniformIsPinnedAndResumable) {
  SplitMix64 s(5);
  EXPECT_EQ(std::bit_cast<uint32_t>(s.uniform()),
            0x3ec60676u);  // 0x63033b0ca389c35a >> 40, times 2^-24
  const uint64_t saved = s.state();
  const float second = s.uniform();
  EXPECT_EQ(std::bit_cast<uint32_t>(second), 0x3f409731u);
  EXPECT_EQ(std::bit_cast<uint32_t>(s.uniform()), 0x3e6e4b4cu);
  SplitMix64 resumed;
  resumed.set_state(saved);
  EXPECT_EQ(std::bit_cast<uint32_t>(resumed.uniform()), std::bit_cast<uint32_t>(second));
  SplitMix64 r(9);
  for (int i = 0; i < 1000; ++i) {
    const float u = r.uniform(-0.5f, 0.25f);
    EXPECT_GE(u, -0.5f);
    EXPECT_LT(u, 0.25f);
  }
}

}  // namespace
}  // namespace eagle2

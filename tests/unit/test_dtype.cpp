// f16/bf16 conversions: exhaustive round trips, rounding to nearest even, subnormals, inf/NaN,
// checked against independent references (the compiler's _Float16 and a double-precision
// nearest-value search for bf16).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "core/dtype.h"

namespace eagle2 {
namespace {

uint32_t bits_of(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}
float from_bits(uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}

// Independent f32 -> f16 (GCC's soft-float conversion, correctly rounded).
uint16_t ref_f16(float f) {
  const _Float16 h = static_cast<_Float16>(f);
  uint16_t b;
  std::memcpy(&b, &h, 2);
  return b;
}

// Independent f32 -> bf16: the nearer of the two bf16 neighbours, ties to the even one.
uint16_t ref_bf16(float f) {
  const uint32_t b = bits_of(f);
  const uint16_t lo = static_cast<uint16_t>(b >> 16);
  if ((b & 0xffffu) == 0) return lo;
  const uint16_t hi = static_cast<uint16_t>(lo + 1);  // next magnitude up (same sign)
  const double dlo = std::fabs(static_cast<double>(f) - bf16_to_f32(lo));
  const double fhi =
      (hi & 0x7fffu) == 0x7f80u ? std::ldexp(1.0, 128) * (f < 0 ? -1 : 1) : bf16_to_f32(hi);
  const double dhi = std::fabs(fhi - static_cast<double>(f));
  if (dlo < dhi) return lo;
  if (dhi < dlo) return hi;
  return (lo & 1) ? hi : lo;
}

TEST(DType, NamesRoundTrip) {
  for (DType t : {DType::F32, DType::F16, DType::BF16, DType::Q8_0, DType::Q4_0, DType::Q4_K,
                  DType::Q6_K, DType::Q4_1, DType::Q5_0, DType::Q5_1, DType::Q5_K, DType::Q3_K,
                  DType::Q2_K, DType::IQ4_NL, DType::IQ4_XS, DType::I64, DType::BOOL}) {
    DType back;
    ASSERT_TRUE(parse_dtype(dtype_name(t), &back));
    EXPECT_EQ(back, t);
  }
  DType d;
  EXPECT_FALSE(parse_dtype("f32", &d));
  EXPECT_FALSE(parse_dtype("I8", &d));
  EXPECT_EQ(dtype_size(DType::F32), 4u);
  EXPECT_EQ(dtype_size(DType::BF16), 2u);
}

TEST(DType, F16ExhaustiveRoundTripAndReference) {
  for (uint32_t h = 0; h < 0x10000u; ++h) {
    const float f = f16_to_f32(static_cast<uint16_t>(h));
    _Float16 hh;
    const uint16_t h16 = static_cast<uint16_t>(h);
    std::memcpy(&hh, &h16, 2);
    const float want = static_cast<float>(hh);
    if (std::isnan(want)) {
      ASSERT_TRUE(std::isnan(f)) << std::hex << h;
      ASSERT_TRUE(std::isnan(f16_to_f32(f32_to_f16(f)))) << std::hex << h;
      continue;
    }
    ASSERT_EQ(bits_of(f), bits_of(want)) << std::hex << h;
    ASSERT_EQ(f32_to_f16(f), h) << std::hex << h;
  }
}

TEST(DType, F16RoundingMatchesReference) {
  std::mt19937 rng(3);
  // Random bit patterns over all exponents, plus dense sampling near the f16 range edges.
  for (int i = 0; i < 2000000; ++i) {
    const float f = from_bits(static_cast<uint32_t>(rng()));
    if (std::isnan(f)) continue;
    ASSERT_EQ(f32_to_f16(f), ref_f16(f)) << f << " bits " << std::hex << bits_of(f);
  }
  for (uint32_t b = 0x33000000u - 4096; b < 0x39000000u; b += 37) {  // subnormal to first normals
    ASSERT_EQ(f32_to_f16(from_bits(b)), ref_f16(from_bits(b))) << std::hex << b;
    ASSERT_EQ(f32_to_f16(-from_bits(b)), ref_f16(-from_bits(b))) << std::hex << b;
  }
  for (uint32_t b = 0x477f0000u; b < 0x47810000u; ++b)  // around the overflow threshold
    ASSERT_EQ(f32_to_f16(from_bits(b)), ref_f16(from_bits(b))) << std::hex << b;
}

TEST(DType, F16SpecialCases) {
  EXPECT_EQ(f32_to_f16(0.0f), 0x0000);
  EXPECT_EQ(f32_to_f16(-0.0f), 0x8000);
  EXPECT_EQ(f32_to_f16(1.0f), 0x3c00);
  EXPECT_EQ(f32_to_f16(65504.0f), 0x7bff);
  EXPECT_EQ(f32_to_f16(65519.0f), 0x7bff);
  EXPECT_EQ(f32_to_f16(65520.0f), 0x7c00);  // the tie rounds to even = overflow
  EXPECT_EQ(f32_to_f16(1e30f), 0x7c00);
  EXPECT_EQ(f32_to_f16(-std::numeric_limits<float>::infinity()), 0xfc00);
  EXPECT_EQ(f32_to_f16(std::ldexp(1.0f, -24)), 0x0001);  // smallest subnormal
  EXPECT_EQ(f32_to_f16(std::ldexp(1.0f, -25)), 0x0000);  // half of it: tie to even (0)
  EXPECT_EQ(f32_to_f16(std::ldexp(1.5f, -25)), 0x0001);
  EXPECT_EQ(f32_to_f16(std::ldexp(3.0f, -25)), 0x0002);             // 1.5 ulp: tie to even (2)
  EXPECT_EQ(f32_to_f16(1.0f + std::ldexp(1.0f, -11)), 0x3c00);      // tie, even stays
  EXPECT_EQ(f32_to_f16(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);  // tie, odd rounds up
  const uint16_t nan = f32_to_f16(std::numeric_limits<float>::quiet_NaN());
  EXPECT_EQ(nan & 0x7c00, 0x7c00);
  EXPECT_NE(nan & 0x03ff, 0);
  EXPECT_TRUE(std::isinf(f16_to_f32(0x7c00)));
  EXPECT_EQ(f16_to_f32(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(f16_to_f32(0x03ff), std::ldexp(1023.0f, -24));
}

TEST(DType, Bf16ExhaustiveRoundTrip) {
  for (uint32_t h = 0; h < 0x10000u; ++h) {
    const float f = bf16_to_f32(static_cast<uint16_t>(h));
    ASSERT_EQ(bits_of(f), h << 16);
    if (std::isnan(f)) {
      ASSERT_TRUE(std::isnan(bf16_to_f32(f32_to_bf16(f)))) << std::hex << h;  // stays NaN
    } else {
      ASSERT_EQ(f32_to_bf16(f), h) << std::hex << h;
    }
  }
}

TEST(DType, Bf16RoundingMatchesReference) {
  std::mt19937 rng(4);
  for (int i = 0; i < 2000000; ++i) {
    const float f = from_bits(static_cast<uint32_t>(rng()));
    if (std::isnan(f)) continue;
    ASSERT_EQ(f32_to_bf16(f), ref_bf16(f)) << f << " bits " << std::hex << bits_of(f);
  }
  EXPECT_EQ(f32_to_bf16(from_bits(0x3f808000u)), 0x3f80);  // tie, even stays
  EXPECT_EQ(f32_to_bf16(from_bits(0x3f818000u)), 0x3f82);  // tie, odd rounds up
  EXPECT_EQ(f32_to_bf16(from_bits(0x7f7fffffu)), 0x7f80);  // FLT_MAX rounds to inf
  EXPECT_EQ(f32_to_bf16(from_bits(0x00000001u)), 0x0000);  // float subnormals
  EXPECT_EQ(f32_to_bf16(from_bits(0x00018000u)), 0x0002);
  // NaNs with payload only in the low half must stay NaN (not become inf).
  EXPECT_TRUE(std::isnan(bf16_to_f32(f32_to_bf16(from_bits(0x7f800001u)))));
  EXPECT_TRUE(std::isnan(bf16_to_f32(f32_to_bf16(from_bits(0xff800001u)))));
}

TEST(DType, ConvertToF32) {
  const uint16_t h[3] = {0x3c00, 0xc000, 0x0001};
  float out[3];
  convert_to_f32(DType::F16, h, out, 3);
  EXPECT_EQ(out[0], 1.0f);
  EXPECT_EQ(out[1], -2.0f);
  EXPECT_EQ(out[2], std::ldexp(1.0f, -24));
  const uint16_t b[2] = {0x3f80, 0xc040};
  convert_to_f32(DType::BF16, b, out, 2);
  EXPECT_EQ(out[0], 1.0f);
  EXPECT_EQ(out[1], -3.0f);
  const float f[2] = {1.5f, -0.25f};
  convert_to_f32(DType::F32, f, out, 2);
  EXPECT_EQ(out[0], 1.5f);
  EXPECT_EQ(out[1], -0.25f);
}

}  // namespace
}  // namespace eagle2

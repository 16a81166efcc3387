// The block types of core/quant_codes.h (Q4_1, Q5_0, Q5_1, IQ4_NL, Q5_K, Q3_K, Q2_K, IQ4_XS)
// decoded from hand-built blocks, element by element, against the layouts ggml documents: which
// bit of which byte is which element's code, scale and min. The kernels are checked against the
// decoder in test_quant_matmul.cpp / test_quant_tiles.cpp, and the decoder against llama.cpp's
// own files in test_llama_quant_types.cpp.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "core/quant_blocks.h"
#include "core/quant_codes.h"

namespace eagle2 {
namespace {

template <class Block>
std::vector<float> dequantized(DType t, const Block& b) {
  std::vector<float> y(static_cast<size_t>(dtype_block_elements(t)));
  dequantize_blocks(t, &b, y.data(), dtype_block_elements(t));
  return y;
}

uint16_t h(float v) {
  return f32_to_f16(v);
}

TEST(QuantCodes, Q4_1AddsItsMin) {
  BlockQ4_1 b{};
  b.d = h(0.5f);
  b.m = h(-1.0f);
  b.qs[0] = 0x3A;  // element 0: 10, element 16: 3
  const auto y = dequantized(DType::Q4_1, b);
  EXPECT_EQ(y[0], 4.0f);
  EXPECT_EQ(y[16], 0.5f);
  EXPECT_EQ(y[1], -1.0f);
}

TEST(QuantCodes, Q5_0And5_1TakeBitJOfQhAsElementJsFifthBit) {
  BlockQ5_0 b{};
  b.d = h(1.0f);
  b.qs[0] = 0x21;  // element 0: 1, element 16: 2
  b.qh[0] = 0x01;  // bit 0: element 0
  b.qh[2] = 0x03;  // bits 16, 17: elements 16, 17
  const auto y = dequantized(DType::Q5_0, b);
  EXPECT_EQ(y[0], 1.0f);    // (1 | 16) - 16
  EXPECT_EQ(y[16], 2.0f);   // (2 | 16) - 16
  EXPECT_EQ(y[17], 0.0f);   // (0 | 16) - 16
  EXPECT_EQ(y[1], -16.0f);  // no fifth bit
  BlockQ5_1 c{};
  c.d = h(0.25f);
  c.m = h(1.0f);
  c.qs[0] = 0x01;
  c.qh[0] = 0x01;
  c.qh[3] = 0x80;  // bit 31: element 31
  const auto z = dequantized(DType::Q5_1, c);
  EXPECT_EQ(z[0], 5.25f);  // 17 * 0.25 + 1
  EXPECT_EQ(z[31], 5.0f);  // 16 * 0.25 + 1
  EXPECT_EQ(z[30], 1.0f);
}

TEST(QuantCodes, Iq4NlLooksItsNibblesUp) {
  BlockIQ4_NL b{};
  b.d = h(2.0f);
  b.qs[0] = 0xF0;
  b.qs[5] = 0x78;
  const auto y = dequantized(DType::IQ4_NL, b);
  EXPECT_EQ(y[0], -254.0f);  // table[0] = -127
  EXPECT_EQ(y[16], 226.0f);  // table[15] = 113
  EXPECT_EQ(y[5], 2.0f);     // table[8] = 1
  EXPECT_EQ(y[21], -20.0f);  // table[7] = -10
}

TEST(QuantCodes, Q5_KScalesMinsAndFifthBits) {
  BlockQ5_K b{};
  b.d = h(1.0f);
  b.dmin = h(0.5f);
  b.scales[0] = 2;     // sub-block 0 scale 2 (and, >> 6, the top bits of scale 4: 0)
  b.scales[4] = 3;     // sub-block 0 min 3
  b.scales[8] = 0x71;  // sub-block 4: scale low bits 1, min low bits 7
  b.qs[0] = 0x05;      // element 0 low nibble 5 (sub-block 0)
  b.qs[64] = 0x09;     // element 128 (chunk 2, low nibbles: sub-block 4)
  b.qh[0] = 0x11;      // bit 0: element 0's fifth bit; bit 4: element 128's
  const auto y = dequantized(DType::Q5_K, b);
  EXPECT_EQ(y[0], 40.5f);    // 1 * 2 * 21 - 0.5 * 3
  EXPECT_EQ(y[1], -1.5f);    // code 0
  EXPECT_EQ(y[128], 21.5f);  // 1 * 1 * 25 - 0.5 * 7
  EXPECT_EQ(y[32], 0.0f);    // sub-block 1: scale 0, min 0
}

TEST(QuantCodes, Q3_KSignedScalesAndMissingHighBits) {
  BlockQ3_K b{};
  b.d = h(1.0f);
  b.scales[0] = 0x05;  // scale 0 low bits 5 (scale 8 low bits 0)
  b.scales[8] = 0x02;  // scale 0 top bits 2: 37 - 32 = 5
  b.qs[0] = 0x03;      // element 0 code 3 (bits 0-1 of qs[0])
  b.hmask[0] = 0x01;   // element 0 keeps its code; element 1 (hmask[1] = 0) loses 4
  const auto y = dequantized(DType::Q3_K, b);
  EXPECT_EQ(y[0], 15.0f);    // 5 * 3
  EXPECT_EQ(y[1], -20.0f);   // 5 * (0 - 4)
  EXPECT_EQ(y[16], 128.0f);  // group 1: scale 0 - 32, code 0 - 4
  EXPECT_EQ(y[32], 128.0f);  // bits 2-3 of qs[0] are 0, hmask[0] bit 1 clear
  // Scales 4 and 8 take their top bits from bits 2-3 and 4-5 of scales[8] (both 0): 0 - 32.
  EXPECT_EQ(y[64], 128.0f);
  EXPECT_EQ(y[128], 128.0f);
}

TEST(QuantCodes, Q2_KScaleAndMinNibbles) {
  BlockQ2_K b{};
  b.d = h(1.0f);
  b.dmin = h(0.5f);
  b.scales[0] = 0x32;  // group 0: scale 2, min 3
  b.scales[2] = 0x01;  // group 2 (elements 32..47): scale 1
  b.qs[0] = 0x0F;      // element 0: bits 0-1 = 3, element 32: bits 2-3 = 3
  const auto y = dequantized(DType::Q2_K, b);
  EXPECT_EQ(y[0], 4.5f);  // 1 * 2 * 3 - 0.5 * 3
  EXPECT_EQ(y[1], -1.5f);
  EXPECT_EQ(y[32], 3.0f);
  EXPECT_EQ(y[64], 0.0f);  // bits 4-5 of qs[0], group 4: scale 0
}

TEST(QuantCodes, Iq4XsSixBitScales) {
  BlockIQ4_XS b{};
  b.d = h(1.0f);
  b.scales_l[0] = 0x21;  // sub-block 0 low bits 1, sub-block 1 low bits 2
  b.scales_h = 0x6;      // sub-block 0 top bits 2 (33 - 32 = 1), sub-block 1 top bits 1 (18 - 32)
  b.qs[0] = 0x8F;        // element 0: table[15], element 16: table[8]
  const auto y = dequantized(DType::IQ4_XS, b);
  EXPECT_EQ(y[0], 113.0f);
  EXPECT_EQ(y[16], 1.0f);
  EXPECT_EQ(y[32], 1778.0f);         // -14 * table[0]
  EXPECT_EQ(y[64], 127.0f * 32.0f);  // sub-block 2: scale 0 - 32
}

}  // namespace
}  // namespace eagle2

// The GGUF block types that the engine reads through one decoded form: every element an integer
// code, every group of sixteen elements an integer scale (and an integer min), one or two float
// scales per block. Layouts (ggml-common.h; "element j" counts within the block):
//   Q4_1    d, m (f16), qs[16]: nibbles as Q4_0's            x = d * q + m         (q 0..15)
//   Q5_0    d (f16), qh[4], qs[16]: Q4_0's nibbles, bit j of the little-endian qh word is element
//           j's fifth bit                                   x = d * (q - 16)
//   Q5_1    d, m (f16), qh[4], qs[16]: as Q5_0               x = d * q + m         (q 0..31)
//   IQ4_NL  d (f16), qs[16]: nibbles as Q4_0's, each an index into a fixed table of 16 int8
//           (kIq4nlValues)                                  x = d * table[q]
//   Q5_K    d, dmin (f16), scales[12] (Q4_K's packing), qh[32], qs[128] (Q4_K's nibbles): element
//           64c + l (c 0..3, l 0..31) takes bit 2c of qh[l] (low nibble) or 2c + 1 (elements
//           64c + 32 + l, high nibble) as its fifth bit      x = d * sc[j] * q - dmin * m[j]  (j =
//           e / 32)
//   Q3_K    hmask[32], qs[64], scales[12], d (f16): element 32k + l (k = 4h + s, h 0..1, s 0..3)
//           is bits 2s, 2s + 1 of qs[32h + l], minus 4 unless bit k of hmask[l] is set; scale i
//           (0..15) has its low four bits in the low (i < 8) or high nibble of scales[i % 8], its
//           top two bits at bit 2 * (i / 4) of scales[8 + i % 4]    x = d * (sc[g] - 32) * q  (g =
//           e / 16)
//   Q2_K    scales[16] (scale in the low nibble, min in the high), qs[64] (codes as Q3_K's),
//           d, dmin (f16)                                   x = d * sc[g] * q - dmin * m[g]
//   IQ4_XS  d (f16), scales_h (u16), scales_l[4], qs[128]: sub-block b (0..7) of 32 elements has
//           the 6-bit scale (nibble b % 2 of scales_l[b / 2]) | (bits 2b, 2b + 1 of scales_h) << 4
//           and IQ4_NL's nibble layout in qs[16b .. 16b + 15]   x = d * (ls[b] - 32) * table[q]
// Any bytes decode: every code, scale and min is bounded by its bit width, whatever the file holds.
#pragma once

#include <cstdint>

#include "core/dtype.h"

namespace eagle2 {

// IQ4_NL's and IQ4_XS's sixteen code values (ggml's kvalues_iq4nl).
extern const int8_t kIq4nlValues[16];

// One block of a type above, decoded. The 32-element types fill q[0..31] and d (and dmin = m for
// Q4_1/Q5_1, which add it); the 256-element ones q, sc and d (and mn, dmin for Q5_K/Q2_K, which
// subtract it). Sub-blocks of 32 (Q5_K, IQ4_XS) repeat their scale and min in both groups of 16.
struct DecodedBlock {
  int8_t q[256];
  int16_t sc[16];
  int16_t mn[16];
  float d, dmin;
};

// Whether t is one of the types above (decoded here, run by the codes kernels).
constexpr bool is_codes_dtype(DType t) {
  return t >= DType::Q4_1 && t <= DType::IQ4_XS;
}
// Whether the block carries a min: added (Q4_1, Q5_1) or subtracted (Q5_K, Q2_K).
constexpr bool codes_add_min(DType t) {
  return t == DType::Q4_1 || t == DType::Q5_1;
}
constexpr bool codes_sub_min(DType t) {
  return t == DType::Q5_K || t == DType::Q2_K;
}

// Decodes one block of type t at `block`.
void decode_block(DType t, const void* block, DecodedBlock* out);

// Only the group scales and mins (and d, dmin) of a 256-element block: what the SIMD kernels,
// which unpack the codes themselves, need.
void decode_block_scales(DType t, const void* block, DecodedBlock* out);

// nb blocks of type t at src -> nb * 32 or nb * 256 floats, rounded as ggml's dequantize_row_*:
// (d * sc) * q - dmin * m for the 256-element types, d * q (+ m) for the others.
void dequantize_codes(DType t, const void* src, float* dst, int64_t nb);

}  // namespace eagle2

// ggml's quantized block layouts (ggml-common.h), as GGUF files store them, and the exact
// conversions the engine needs outside the matmul: dequantizing (embedding rows, reference
// checks) and quantizing weights (eagle2 quantize, make-random).
//
// A block covers 32 (Q8_0, Q4_0) or 256 (Q4_K, Q6_K) consecutive elements of one row:
//   Q8_0  d (f16), qs[32] int8                         x = d * q
//   Q4_0  d (f16), qs[16]: element j in the low nibble of byte j, element j+16 in its high nibble
//                                                      x = d * (q - 8)
//   Q4_K  d, dmin (f16), scales[12] (eight 6-bit scales and eight 6-bit mins), qs[128] (nibbles:
//         in each 64-element chunk, the low nibbles of 32 bytes are elements 0..31 and the high
//         nibbles 32..63)                              x = d * sc[j] * q - dmin * m[j] (j = x / 32)
//   Q6_K  ql[128] (low 4 bits), qh[64] (high 2 bits), scales[16] int8, d (f16)
//                                                      x = d * sc[j] * (q - 32)      (j = x / 16)
// and the types core/quant_codes.h decodes (Q4_1, Q5_0, Q5_1, IQ4_NL; Q5_K, Q3_K, Q2_K, IQ4_XS),
// whose layouts are given there.
#pragma once

#include <cstdint>
#include <vector>

#include "core/dtype.h"
#include "core/tensor.h"

namespace eagle2 {

struct BlockQ8_0 {
  uint16_t d;
  int8_t qs[32];
};
struct BlockQ4_0 {
  uint16_t d;
  uint8_t qs[16];
};
struct BlockQ4_K {
  uint16_t d;
  uint16_t dmin;
  uint8_t scales[12];
  uint8_t qs[128];
};
struct BlockQ6_K {
  uint8_t ql[128];
  uint8_t qh[64];
  int8_t scales[16];
  uint16_t d;
};
struct BlockQ4_1 {
  uint16_t d, m;
  uint8_t qs[16];
};
struct BlockQ5_0 {
  uint16_t d;
  uint8_t qh[4];
  uint8_t qs[16];
};
struct BlockQ5_1 {
  uint16_t d, m;
  uint8_t qh[4];
  uint8_t qs[16];
};
struct BlockIQ4_NL {
  uint16_t d;
  uint8_t qs[16];
};
struct BlockQ5_K {
  uint16_t d, dmin;
  uint8_t scales[12];
  uint8_t qh[32];
  uint8_t qs[128];
};
struct BlockQ3_K {
  uint8_t hmask[32];
  uint8_t qs[64];
  uint8_t scales[12];
  uint16_t d;
};
struct BlockQ2_K {
  uint8_t scales[16];
  uint8_t qs[64];
  uint16_t d, dmin;
};
struct BlockIQ4_XS {
  uint16_t d;
  uint16_t scales_h;
  uint8_t scales_l[4];
  uint8_t qs[128];
};
static_assert(sizeof(BlockQ4_1) == dtype_block_bytes(DType::Q4_1));
static_assert(sizeof(BlockQ5_0) == dtype_block_bytes(DType::Q5_0));
static_assert(sizeof(BlockQ5_1) == dtype_block_bytes(DType::Q5_1));
static_assert(sizeof(BlockIQ4_NL) == dtype_block_bytes(DType::IQ4_NL));
static_assert(sizeof(BlockQ5_K) == dtype_block_bytes(DType::Q5_K));
static_assert(sizeof(BlockQ3_K) == dtype_block_bytes(DType::Q3_K));
static_assert(sizeof(BlockQ2_K) == dtype_block_bytes(DType::Q2_K));
static_assert(sizeof(BlockIQ4_XS) == dtype_block_bytes(DType::IQ4_XS));
static_assert(sizeof(BlockQ8_0) == 34 && sizeof(BlockQ4_0) == 18);
static_assert(sizeof(BlockQ4_K) == 144 && sizeof(BlockQ6_K) == 210);
static_assert(sizeof(BlockQ8_0) == dtype_block_bytes(DType::Q8_0));
static_assert(sizeof(BlockQ4_0) == dtype_block_bytes(DType::Q4_0));
static_assert(sizeof(BlockQ4_K) == dtype_block_bytes(DType::Q4_K));
static_assert(sizeof(BlockQ6_K) == dtype_block_bytes(DType::Q6_K));

// Scale and min of sub-block j (0..7) of a Q4_K block, both 6-bit.
void q4_k_scale_min(const uint8_t* scales, int j, int* scale, int* min);

// n elements (whole blocks) of block type `t` at src -> dst.
void dequantize_blocks(DType t, const void* src, float* dst, int64_t n);

// n floats (whole blocks) -> blocks of type `t`, with ggml's reference rounding
// (quantize_row_*_ref) so a file written here holds the blocks llama.cpp's own quantizer would
// write. Q8_0 and Q4_0.
void quantize_blocks(DType t, const float* src, void* dst, int64_t n);

// Row r of W in the row layout (dtype_bytes(W.dtype, W.cols) bytes at dst), whatever W.layout.
void row_blocks(const Matrix& W, int64_t r, void* dst);

// W's values as floats, row-major [W.rows, W.cols], whatever its dtype (blocks dequantized) and
// layout: a weight upcast to F32 (EagleHead::upcast_weights) multiplies f32 activations unrounded.
std::vector<float> matrix_to_f32(const Matrix& W);

// Whether W can take MatrixLayout::kRowGroups16 (Q8_0, Q4_0, Q4_K or Q6_K, rows a multiple of 16,
// kRows now).
bool can_group_rows16(const Matrix& W);
// Rearranges W's bytes in place into kRowGroups16 and sets W.layout. `writable` is W.data, which
// the caller owns (e.g. weights read into its own pages, not a read-only file mapping).
void group_rows16(Matrix& W, void* writable);

}  // namespace eagle2

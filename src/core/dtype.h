// Element types of stored tensors and the exact conversions between them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace eagle2 {

// F32, F16 and BF16 are element types. Q8_0 .. IQ4_XS are ggml's quantized block types
// (core/quant_blocks.h): a block of 32 or 256 consecutive elements of one row stored in a fixed
// number of bytes, never split across rows. I64 and BOOL are the integer element types of
// index tensors (an EAGLE-3 head's d2t and t2d): read and written as stored, never weights, so
// they convert to no float (is_float_dtype).
enum class DType : uint8_t {
  F32,
  F16,
  BF16,
  Q8_0,
  Q4_0,
  Q4_K,
  Q6_K,
  Q4_1,
  Q5_0,
  Q5_1,
  Q5_K,
  Q3_K,
  Q2_K,
  IQ4_NL,
  IQ4_XS,
  I64,
  BOOL
};

constexpr bool is_block_dtype(DType t) {
  return t >= DType::Q8_0 && t <= DType::IQ4_XS;
}
// Whether the values are numbers a weight can hold (floats, or blocks that dequantize to floats).
constexpr bool is_float_dtype(DType t) {
  return t != DType::I64 && t != DType::BOOL;
}

// Bytes per element: element types only (a block type has no per-element size; see below).
constexpr size_t dtype_size(DType t) {
  switch (t) {
    case DType::F32:
      return 4;
    case DType::I64:
      return 8;
    case DType::BOOL:
      return 1;
    default:
      return 2;
  }
}

// Elements per block and bytes per block (1 and dtype_size for the element types).
constexpr int64_t dtype_block_elements(DType t) {
  switch (t) {
    case DType::Q8_0:
    case DType::Q4_0:
    case DType::Q4_1:
    case DType::Q5_0:
    case DType::Q5_1:
    case DType::IQ4_NL:
      return 32;
    case DType::Q4_K:
    case DType::Q6_K:
    case DType::Q5_K:
    case DType::Q3_K:
    case DType::Q2_K:
    case DType::IQ4_XS:
      return 256;
    default:
      return 1;
  }
}
constexpr size_t dtype_block_bytes(DType t) {
  switch (t) {
    case DType::Q8_0:
      return 34;
    case DType::Q4_0:
      return 18;
    case DType::Q4_K:
      return 144;
    case DType::Q6_K:
      return 210;
    case DType::Q4_1:
      return 20;
    case DType::Q5_0:
      return 22;
    case DType::Q5_1:
      return 24;
    case DType::Q5_K:
      return 176;
    case DType::Q3_K:
      return 110;
    case DType::Q2_K:
      return 84;
    case DType::IQ4_NL:
      return 18;
    case DType::IQ4_XS:
      return 136;
    default:
      return dtype_size(t);
  }
}
// Alignment the data of a tensor needs (every block type starts with or holds f16 scales at even
// offsets of even-sized blocks).
constexpr size_t dtype_alignment(DType t) {
  return is_block_dtype(t) ? 2 : dtype_size(t);
}

// Bytes of n consecutive elements of one row; n must be a whole number of blocks.
constexpr size_t dtype_bytes(DType t, int64_t n) {
  return static_cast<size_t>(n / dtype_block_elements(t)) * dtype_block_bytes(t);
}

// "F32", "F16", "BF16", "I64", "BOOL" (the safetensors spelling), "Q8_0", "Q4_0", "Q4_K",
// "Q6_K", "Q4_1", "Q5_0", "Q5_1", "Q5_K", "Q3_K", "Q2_K", "IQ4_NL", "IQ4_XS" (ggml's).
const char* dtype_name(DType t);
// Parses those spellings; returns false for anything else.
bool parse_dtype(std::string_view s, DType* out);

inline float bf16_to_f32(uint16_t h) {
  uint32_t bits = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

// Round to nearest even; NaN stays NaN.
inline uint16_t f32_to_bf16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((bits >> 16) | 0x40);
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>(bits >> 16);
}

float f16_to_f32(uint16_t h);  // IEEE binary16, subnormals and inf/NaN included
uint16_t f32_to_f16(float f);  // round to nearest even, overflow to inf

// Converts n elements of type `from` to float (a block type: n whole blocks, dequantized as ggml
// does). Error for I64 and BOOL: callers check is_float_dtype first and name the tensor.
void convert_to_f32(DType from, const void* src, float* dst, size_t n);

}  // namespace eagle2

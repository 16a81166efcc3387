// Element types of stored tensors and the exact conversions between them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace eagle2 {

enum class DType : uint8_t { F32, F16, BF16 };

constexpr size_t dtype_size(DType t) { return t == DType::F32 ? 4 : 2; }
const char* dtype_name(DType t);  // "F32", "F16", "BF16" (the safetensors spelling)
// Parses the safetensors spelling; returns false for anything else.
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

// Converts n elements of type `from` to float.
void convert_to_f32(DType from, const void* src, float* dst, size_t n);

}  // namespace eagle2

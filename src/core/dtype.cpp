#include "core/dtype.h"

#include "core/error.h"
#include "core/quant_blocks.h"

namespace eagle2 {

const char* dtype_name(DType t) {
  switch (t) {
    case DType::F32:
      return "F32";
    case DType::F16:
      return "F16";
    case DType::BF16:
      return "BF16";
    case DType::Q8_0:
      return "Q8_0";
    case DType::Q4_0:
      return "Q4_0";
    case DType::Q4_K:
      return "Q4_K";
    case DType::Q6_K:
      return "Q6_K";
    case DType::Q4_1:
      return "Q4_1";
    case DType::Q5_0:
      return "Q5_0";
    case DType::Q5_1:
      return "Q5_1";
    case DType::Q5_K:
      return "Q5_K";
    case DType::Q3_K:
      return "Q3_K";
    case DType::Q2_K:
      return "Q2_K";
    case DType::IQ4_NL:
      return "IQ4_NL";
    case DType::IQ4_XS:
      return "IQ4_XS";
    case DType::I64:
      return "I64";
    case DType::BOOL:
      return "BOOL";
  }
  return "?";
}

bool parse_dtype(std::string_view s, DType* out) {
  if (s == "F32")
    *out = DType::F32;
  else if (s == "F16")
    *out = DType::F16;
  else if (s == "BF16")
    *out = DType::BF16;
  else if (s == "Q8_0")
    *out = DType::Q8_0;
  else if (s == "Q4_0")
    *out = DType::Q4_0;
  else if (s == "Q4_K")
    *out = DType::Q4_K;
  else if (s == "Q6_K")
    *out = DType::Q6_K;
  else if (s == "Q4_1")
    *out = DType::Q4_1;
  else if (s == "Q5_0")
    *out = DType::Q5_0;
  else if (s == "Q5_1")
    *out = DType::Q5_1;
  else if (s == "Q5_K")
    *out = DType::Q5_K;
  else if (s == "Q3_K")
    *out = DType::Q3_K;
  else if (s == "Q2_K")
    *out = DType::Q2_K;
  else if (s == "IQ4_NL")
    *out = DType::IQ4_NL;
  else if (s == "IQ4_XS")
    *out = DType::IQ4_XS;
  else if (s == "I64")
    *out = DType::I64;
  else if (s == "BOOL")
    *out = DType::BOOL;
  else
    return false;
  return true;
}

float f16_to_f32(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {  // subnormal: normalize
      int e = -1;
      do {
        ++e;
        mant <<= 1;
      } while ((mant & 0x400u) == 0);
      bits = sign | static_cast<uint32_t>(127 - 15 - e) << 23 | (mant & 0x3ffu) << 13;
    }
  } else {
    bits = sign | (exp + 127 - 15) << 23 | mant << 13;
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t f32_to_f16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  const uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  const uint32_t abs = bits & 0x7fffffffu;
  if (abs > 0x7f800000u) return sign | 0x7e00u;   // NaN
  if (abs >= 0x477ff000u) return sign | 0x7c00u;  // rounds to >= 65520: inf
  if (abs < 0x38800000u) {                        // below the smallest normal half
    if (abs < 0x33000000u) return sign;           // below half the smallest subnormal
    const uint32_t mant = (abs & 0x7fffffu) | 0x800000u;
    const int shift = 126 - static_cast<int>(abs >> 23);  // 14 + (113 - exp)
    const uint32_t q = mant >> (shift);
    const uint32_t rem = mant & ((1u << shift) - 1);
    const uint32_t half = 1u << (shift - 1);
    uint32_t r = q + ((rem > half || (rem == half && (q & 1))) ? 1 : 0);
    return static_cast<uint16_t>(sign | r);
  }
  uint32_t r = abs - 0x38000000u;  // rebias exponent 127 -> 15
  r += 0xfffu + ((r >> 13) & 1u);
  return static_cast<uint16_t>(sign | (r >> 13));
}

void convert_to_f32(DType from, const void* src, float* dst, size_t n) {
  switch (from) {
    case DType::F32:
      std::memcpy(dst, src, n * 4);
      return;
    case DType::F16: {
      const auto* s = static_cast<const uint16_t*>(src);
      for (size_t i = 0; i < n; ++i) dst[i] = f16_to_f32(s[i]);
      return;
    }
    case DType::BF16: {
      const auto* s = static_cast<const uint16_t*>(src);
      for (size_t i = 0; i < n; ++i) dst[i] = bf16_to_f32(s[i]);
      return;
    }
    case DType::Q8_0:
    case DType::Q4_0:
    case DType::Q4_K:
    case DType::Q6_K:
    case DType::Q4_1:
    case DType::Q5_0:
    case DType::Q5_1:
    case DType::Q5_K:
    case DType::Q3_K:
    case DType::Q2_K:
    case DType::IQ4_NL:
    case DType::IQ4_XS:
      dequantize_blocks(from, src, dst, static_cast<int64_t>(n));
      return;
    case DType::I64:
    case DType::BOOL:
      fail("convert: ", dtype_name(from), " holds integers, not floats");
  }
}

}  // namespace eagle2

#include "core/quant_codes.h"

#include <cstring>

#include "core/error.h"
#include "core/quant_blocks.h"

namespace eagle2 {

const int8_t kIq4nlValues[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                                 1,    13,   25,  38,  53,  69,  89,  113};

namespace {

// Q4_0's nibble order: element j in the low nibble of byte j, element j + 16 in its high nibble.
void nibbles(const uint8_t* qs, int8_t* q) {
  for (int j = 0; j < 16; ++j) {
    q[j] = static_cast<int8_t>(qs[j] & 0xF);
    q[j + 16] = static_cast<int8_t>(qs[j] >> 4);
  }
}

// Q5_0/Q5_1: the nibbles plus bit j of the qh word as element j's fifth bit.
void five_bits(const uint8_t* qh4, const uint8_t* qs, int8_t* q, int offset) {
  uint32_t qh = 0;
  for (int b = 0; b < 4; ++b) qh |= static_cast<uint32_t>(qh4[b]) << (8 * b);
  nibbles(qs, q);
  for (int j = 0; j < 32; ++j)
    q[j] = static_cast<int8_t>((q[j] | static_cast<int>(((qh >> j) & 1u) << 4)) - offset);
}

// Q3_K's sixteen 6-bit scales, minus 32.
void q3_k_scales(const uint8_t* s, int16_t* sc) {
  for (int i = 0; i < 16; ++i) {
    const int low = i < 8 ? (s[i] & 0xF) : (s[i - 8] >> 4);
    const int high = (s[8 + i % 4] >> (2 * (i / 4))) & 3;
    sc[i] = static_cast<int16_t>((low | (high << 4)) - 32);
  }
}

void scales_of(DType t, const void* block, DecodedBlock* out) {
  std::memset(out->sc, 0, sizeof(out->sc));
  std::memset(out->mn, 0, sizeof(out->mn));
  out->dmin = 0.0f;
  switch (t) {
    case DType::Q4_1:
    case DType::Q5_1: {
      // d and m lead both layouts.
      uint16_t dm[2];
      std::memcpy(dm, block, 4);
      out->d = f16_to_f32(dm[0]);
      out->dmin = f16_to_f32(dm[1]);
      return;
    }
    case DType::Q5_0:
    case DType::IQ4_NL: {
      uint16_t d;
      std::memcpy(&d, block, 2);
      out->d = f16_to_f32(d);
      return;
    }
    case DType::Q5_K: {
      const auto& b = *static_cast<const BlockQ5_K*>(block);
      out->d = f16_to_f32(b.d);
      out->dmin = f16_to_f32(b.dmin);
      for (int j = 0; j < 8; ++j) {
        int sc, m;
        q4_k_scale_min(b.scales, j, &sc, &m);
        out->sc[2 * j] = out->sc[2 * j + 1] = static_cast<int16_t>(sc);
        out->mn[2 * j] = out->mn[2 * j + 1] = static_cast<int16_t>(m);
      }
      return;
    }
    case DType::Q3_K: {
      const auto& b = *static_cast<const BlockQ3_K*>(block);
      out->d = f16_to_f32(b.d);
      q3_k_scales(b.scales, out->sc);
      return;
    }
    case DType::Q2_K: {
      const auto& b = *static_cast<const BlockQ2_K*>(block);
      out->d = f16_to_f32(b.d);
      out->dmin = f16_to_f32(b.dmin);
      for (int g = 0; g < 16; ++g) {
        out->sc[g] = static_cast<int16_t>(b.scales[g] & 0xF);
        out->mn[g] = static_cast<int16_t>(b.scales[g] >> 4);
      }
      return;
    }
    case DType::IQ4_XS: {
      const auto& b = *static_cast<const BlockIQ4_XS*>(block);
      out->d = f16_to_f32(b.d);
      for (int ib = 0; ib < 8; ++ib) {
        const int ls =
            ((b.scales_l[ib / 2] >> (4 * (ib % 2))) & 0xF) | (((b.scales_h >> (2 * ib)) & 3) << 4);
        out->sc[2 * ib] = out->sc[2 * ib + 1] = static_cast<int16_t>(ls - 32);
      }
      return;
    }
    default:
      fail("decode_block: ", dtype_name(t), " is not decoded here");
  }
}

}  // namespace

void decode_block_scales(DType t, const void* block, DecodedBlock* out) {
  scales_of(t, block, out);
}

void decode_block(DType t, const void* block, DecodedBlock* out) {
  scales_of(t, block, out);
  int8_t* q = out->q;
  switch (t) {
    case DType::Q4_1:
      return nibbles(static_cast<const BlockQ4_1*>(block)->qs, q);
    case DType::Q5_0: {
      const auto& b = *static_cast<const BlockQ5_0*>(block);
      return five_bits(b.qh, b.qs, q, 16);
    }
    case DType::Q5_1: {
      const auto& b = *static_cast<const BlockQ5_1*>(block);
      return five_bits(b.qh, b.qs, q, 0);
    }
    case DType::IQ4_NL: {
      nibbles(static_cast<const BlockIQ4_NL*>(block)->qs, q);
      for (int j = 0; j < 32; ++j) q[j] = kIq4nlValues[q[j]];
      return;
    }
    case DType::Q5_K: {
      const auto& b = *static_cast<const BlockQ5_K*>(block);
      for (int c = 0; c < 4; ++c)
        for (int l = 0; l < 32; ++l) {
          const uint8_t byte = b.qs[32 * c + l], h = b.qh[l];
          q[64 * c + l] = static_cast<int8_t>((byte & 0xF) | (((h >> (2 * c)) & 1) << 4));
          q[64 * c + 32 + l] = static_cast<int8_t>((byte >> 4) | (((h >> (2 * c + 1)) & 1) << 4));
        }
      return;
    }
    case DType::Q3_K:
    case DType::Q2_K: {
      const bool q3 = t == DType::Q3_K;
      const uint8_t* qs =
          q3 ? static_cast<const BlockQ3_K*>(block)->qs : static_cast<const BlockQ2_K*>(block)->qs;
      const uint8_t* hmask = q3 ? static_cast<const BlockQ3_K*>(block)->hmask : nullptr;
      for (int k = 0; k < 8; ++k) {
        const int h = k / 4, shift = 2 * (k % 4);
        for (int l = 0; l < 32; ++l) {
          int v = (qs[32 * h + l] >> shift) & 3;
          if (q3 && ((hmask[l] >> k) & 1) == 0) v -= 4;
          q[32 * k + l] = static_cast<int8_t>(v);
        }
      }
      return;
    }
    case DType::IQ4_XS: {
      const auto& b = *static_cast<const BlockIQ4_XS*>(block);
      for (int ib = 0; ib < 8; ++ib) {
        nibbles(b.qs + 16 * ib, q + 32 * ib);
        for (int j = 0; j < 32; ++j) q[32 * ib + j] = kIq4nlValues[q[32 * ib + j]];
      }
      return;
    }
    default:
      fail("decode_block: ", dtype_name(t), " is not decoded here");
  }
}

void dequantize_codes(DType t, const void* src, float* dst, int64_t nb) {
  const int64_t n = dtype_block_elements(t);
  const size_t bytes = dtype_block_bytes(t);
  DecodedBlock b;
  for (int64_t i = 0; i < nb; ++i, dst += n) {
    decode_block(t, static_cast<const char*>(src) + static_cast<size_t>(i) * bytes, &b);
    if (n == 32) {
      for (int j = 0; j < 32; ++j) {
        dst[j] = b.d * static_cast<float>(b.q[j]);
        if (codes_add_min(t)) dst[j] = dst[j] + b.dmin;
      }
      continue;
    }
    for (int g = 0; g < 16; ++g) {
      const float dl = b.d * static_cast<float>(b.sc[g]);
      const float ml = b.dmin * static_cast<float>(b.mn[g]);
      for (int j = 0; j < 16; ++j) {
        const int e = 16 * g + j;
        dst[e] = dl * static_cast<float>(b.q[e]);
        if (codes_sub_min(t)) dst[e] = dst[e] - ml;
      }
    }
  }
}

}  // namespace eagle2

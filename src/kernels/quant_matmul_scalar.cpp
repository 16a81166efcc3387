// The reference kernel for quantized weights: the reduction order of quant_matmul.h written out
// plainly. The SIMD kernels must give these bits (tests compare them with memcmp).
#include <algorithm>
#include <vector>

#include "core/quant_blocks.h"
#include "core/quant_codes.h"
#include "kernels/quant_internal.h"

namespace eagle2::detail {

namespace {

// Step 1 of the contract: the exact integer sum(s) of scale block i. Returns s; *mins for Q4_K.
int32_t block_sum(DType dt, const void* w, int64_t i, const int8_t* x, const int32_t* sums16,
                  int32_t* mins) {
  switch (dt) {
    case DType::Q8_0: {
      const BlockQ8_0& b = static_cast<const BlockQ8_0*>(w)[i];
      const int8_t* xb = x + i * 32;
      int32_t s = 0;
      for (int j = 0; j < 32; ++j) s += b.qs[j] * xb[j];
      return s;
    }
    case DType::Q4_0: {
      const BlockQ4_0& b = static_cast<const BlockQ4_0*>(w)[i];
      const int8_t* xb = x + i * 32;
      int32_t s = 0;
      for (int j = 0; j < 16; ++j)
        s += ((b.qs[j] & 0xF) - 8) * xb[j] + ((b.qs[j] >> 4) - 8) * xb[j + 16];
      return s;
    }
    case DType::Q4_K: {
      const BlockQ4_K& b = static_cast<const BlockQ4_K*>(w)[i];
      const int8_t* xb = x + i * 256;
      const int32_t* bs = sums16 + i * 16;
      int32_t s = 0, m = 0;
      for (int j = 0; j < 8; ++j) {
        int sc, mn;
        q4_k_scale_min(b.scales, j, &sc, &mn);
        // Sub-block j: 32 nibbles of chunk j / 2, low nibbles for even j, high for odd.
        const uint8_t* q = b.qs + (j / 2) * 32;
        const int shift = (j % 2) * 4;
        int32_t d = 0;
        for (int l = 0; l < 32; ++l) d += ((q[l] >> shift) & 0xF) * xb[j * 32 + l];
        s += sc * d;
        m += mn * (bs[2 * j] + bs[2 * j + 1]);
      }
      *mins = m;
      return s;
    }
    case DType::Q6_K: {
      const BlockQ6_K& b = static_cast<const BlockQ6_K*>(w)[i];
      const int8_t* xb = x + i * 256;
      int32_t s = 0;
      // Element e of the block: half h = e / 128, within it r = e % 128, l = r % 32, part = r / 32;
      // low 4 bits from ql[h*64 + l + (part & 1) * 32] (low nibble for parts 0-1, high for 2-3),
      // high 2 bits from qh[h*32 + l] at bit 2 * part. Group of 16: e / 16, scale scales[e / 16].
      for (int g = 0; g < 16; ++g) {
        int32_t d = 0;
        for (int t = 0; t < 16; ++t) {
          const int e = g * 16 + t, h = e / 128, r = e % 128, l = r % 32, part = r / 32;
          const uint8_t lo = b.ql[h * 64 + l + (part & 1) * 32];
          const int low4 = part < 2 ? (lo & 0xF) : (lo >> 4);
          const int high2 = (b.qh[h * 32 + l] >> (2 * part)) & 3;
          d += ((low4 | (high2 << 4)) - 32) * xb[e];
        }
        s += b.scales[g] * d;
      }
      return s;
    }
    default:
      return 0;
  }
}

float weight_scale(DType dt, const void* w, int64_t i, float* dmin) {
  switch (dt) {
    case DType::Q8_0:
      return f16_to_f32(static_cast<const BlockQ8_0*>(w)[i].d);
    case DType::Q4_0:
      return f16_to_f32(static_cast<const BlockQ4_0*>(w)[i].d);
    case DType::Q4_K:
      *dmin = f16_to_f32(static_cast<const BlockQ4_K*>(w)[i].dmin);
      return f16_to_f32(static_cast<const BlockQ4_K*>(w)[i].d);
    case DType::Q6_K:
      return f16_to_f32(static_cast<const BlockQ6_K*>(w)[i].d);
    default:
      return 0.0f;
  }
}

// The types of core/quant_codes.h, on their decoded blocks. Step 1: s = sum q * x over a
// 32-block, or sum_g sc[g] * sum q * x over the sixteen groups of a superblock, and for Q5_K/Q2_K
// mins = sum_g mn[g] * (sum of group g's activations). Step 2: term = (d * dx) * float(s), then
// + (m * dx) * float(sum of the block's activations) for Q4_1/Q5_1, or - (dmin * dx) *
// float(mins) for Q5_K/Q2_K.
float codes_term(DType dt, const DecodedBlock& b, const int8_t* xb, float dx, const int32_t* xs) {
  int32_t s = 0;
  if (dtype_block_elements(dt) == 32) {
    for (int j = 0; j < 32; ++j) s += b.q[j] * xb[j];
    const float term = (b.d * dx) * static_cast<float>(s);
    return codes_add_min(dt) ? term + (b.dmin * dx) * static_cast<float>(xs[0]) : term;
  }
  int32_t mins = 0;
  for (int g = 0; g < 16; ++g) {
    int32_t d = 0;
    for (int j = 0; j < 16; ++j) d += b.q[16 * g + j] * xb[16 * g + j];
    s += b.sc[g] * d;
    mins += b.mn[g] * xs[g];
  }
  const float term = (b.d * dx) * static_cast<float>(s);
  return codes_sub_min(dt) ? term - (b.dmin * dx) * static_cast<float>(mins) : term;
}

void codes_range_scalar(DType dt, const QuantRowsView& x, const void* w, float* y, int64_t ldy,
                        int64_t m0, int64_t m1, int64_t n0, int64_t n1) {
  const int64_t K = x.cols, E = dtype_block_elements(dt), blocks = K / E;
  const size_t row_bytes = dtype_bytes(dt, K), block_bytes = dtype_block_bytes(dt);
  const int64_t sums_per_block = E / x.sum_group;
  // Each block is decoded once for all rows (the order per output is the same either way).
  std::vector<float> acc(static_cast<size_t>((m1 - m0) * 8));
  DecodedBlock b;
  for (int64_t n = n0; n < n1; ++n) {
    const char* wrow = static_cast<const char*>(w) + static_cast<size_t>(n) * row_bytes;
    std::fill(acc.begin(), acc.end(), 0.0f);
    for (int64_t i = 0; i < blocks; ++i) {
      decode_block(dt, wrow + static_cast<size_t>(i) * block_bytes, &b);
      for (int64_t m = m0; m < m1; ++m)
        acc[static_cast<size_t>((m - m0) * 8 + i % 8)] +=
            codes_term(dt, b, x.qs + m * K + i * E, x.scale[m * (K / x.block) + i],
                       x.sums + m * (K / x.sum_group) + i * sums_per_block);
    }
    for (int64_t m = m0; m < m1; ++m) {
      const float* a = &acc[static_cast<size_t>((m - m0) * 8)];
      y[m * ldy + n] = ((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7]));
    }
  }
}

}  // namespace

void quant_matmul_range_scalar(DType dt, const QuantRowsView& x, const void* w, float* y,
                               int64_t ldy, int64_t m0, int64_t m1, int64_t n0, int64_t n1) {
  if (is_codes_dtype(dt)) return codes_range_scalar(dt, x, w, y, ldy, m0, m1, n0, n1);
  const int64_t K = x.cols, blocks = K / dtype_block_elements(dt);
  const size_t row_bytes = dtype_bytes(dt, K);
  for (int64_t n = n0; n < n1; ++n) {
    const void* wrow = static_cast<const char*>(w) + static_cast<size_t>(n) * row_bytes;
    for (int64_t m = m0; m < m1; ++m) {
      const int8_t* xq = x.qs + m * K;
      const float* xd = x.scale + m * (K / x.block);
      const int32_t* xs = x.sums + m * (K / x.sum_group);
      float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
      for (int64_t i = 0; i < blocks; ++i) {
        int32_t mins = 0;
        float dmin = 0.0f;
        const int32_t s = block_sum(dt, wrow, i, xq, xs, &mins);
        const float dw = weight_scale(dt, wrow, i, &dmin);
        float term = (dw * xd[i]) * static_cast<float>(s);
        if (dt == DType::Q4_K) term = term - (dmin * xd[i]) * static_cast<float>(mins);
        acc[i % 8] += term;
      }
      y[m * ldy + n] =
          ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
    }
  }
}

}  // namespace eagle2::detail

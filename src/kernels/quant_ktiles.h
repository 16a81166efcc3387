// The tile loop of the Q4_K/Q6_K kernels, shared by quant_kmatmul_avx2.cpp and
// quant_kmatmul_avx512.cpp, which differ only in how one superblock's integer sums are taken (the
// `Policy`). Include ONLY from those files: everything here sits in an unnamed namespace and uses
// AVX2, so each ISA file gets its own copy (see matmul_internal.h for why that matters).
//
// Order (quant_matmul.h). The policy turns one 256-element superblock and R activation rows into
// vectors of eight int32 whose lanes add up to the exact sums of step 1 (s, and mins for Q4_K);
// the weight superblock is unpacked once and reused by all R rows. Superblocks go four at a time:
// a hadd tree reduces the four superblocks' vectors (and, for Q4_K, their four mins vectors in the
// upper half) to the exact totals, one lane per superblock. Integer addition wraps modulo 2^32, so
// the totals do not depend on the order the lanes are added in as long as the true total fits in
// int32, which the bounds in the policies guarantee. Then step 2 in four f32 lanes with the
// reference's operations (mul, mul, [sub], no FMA), and step 3: superblock i0 + j goes to
// acc[(i0 + j) % 8], i.e. the lower or upper four of the eight lanes as i0 % 8 is 0 or 4.
//
// A group of fewer than four superblocks is padded with zero sums, zero dw and zero dx (a masked
// load: nothing read past the row, no 0 * inf): the padded terms are +0, and adding +0 leaves every
// accumulator as it was, because an accumulator that starts at +0 can never become -0 under
// round-to-nearest.
#pragma once

#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "core/quant_blocks.h"
#include "kernels/quant_internal.h"
#include "kernels/quant_tiles.h"  // sum_each

namespace eagle2::detail {
namespace {

// Q4_K's twelve scale bytes -> sixteen bytes: the eight 6-bit scales, then the eight 6-bit mins
// (the packing q4_k_scale_min decodes one at a time): scales/mins 0-3 are the low six bits of
// bytes 0-3 / 4-7; scales/mins 4-7 take their low four bits from the low / high nibbles of bytes
// 8-11 and their top two bits from the top bits of bytes 0-3 / 4-7. In vector registers, one
// 32-bit lane per four outputs (no trip through integer registers). The 16-byte load reads the
// scales and the first four code bytes of the same block, which the shuffles drop.
inline __m128i q4k_scales_mins(const BlockQ4_K& b) {
  const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b.scales));
  const int8_t z = -1;  // pshufb: a negative index gives 0
  // Lanes: bytes 0-3, 8-11, 4-7, 8-11 (>> 4 below) for the low bits ...
  const __m128i low = _mm_srlv_epi32(
      _mm_shuffle_epi8(v, _mm_setr_epi8(0, 1, 2, 3, 8, 9, 10, 11, 4, 5, 6, 7, 8, 9, 10, 11)),
      _mm_setr_epi32(0, 0, 0, 4));
  // ... and bytes 0-3 / 4-7 under the lanes of scales / mins 4-7 for the top two bits (>> 6 << 4).
  const __m128i top =
      _mm_shuffle_epi8(v, _mm_setr_epi8(z, z, z, z, 0, 1, 2, 3, z, z, z, z, 4, 5, 6, 7));
  const __m128i low_mask = _mm_setr_epi32(0x3f3f3f3f, 0x0f0f0f0f, 0x3f3f3f3f, 0x0f0f0f0f);
  return _mm_or_si128(_mm_and_si128(low, low_mask),
                      _mm_and_si128(_mm_srli_epi32(top, 2), _mm_set1_epi8(0x30)));
}

// Four vectors of eight int32 -> their four totals (exact, as above).
inline __m128i totals4(__m256i a, __m256i b, __m256i c, __m256i d) {
  // [a0-3 b0-3 c0-3 d0-3 | a4-7 b4-7 c4-7 d4-7] as partial sums, then the two halves added.
  const __m256i h = _mm256_hadd_epi32(_mm256_hadd_epi32(a, b), _mm256_hadd_epi32(c, d));
  return _mm_add_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1));
}

// The final sum of step 3 in registers: hadd_ps adds neighbouring lanes, so this is
// ((a0 + a1) + (a2 + a3)) + ((a4 + a5) + (a6 + a7)) with lo = a0..a3, hi = a4..a7.
inline float pairwise8(__m128 lo, __m128 hi) {
  const __m128 p = _mm_hadd_ps(lo, hi);  // a0+a1, a2+a3, a4+a5, a6+a7
  const __m128 q = _mm_hadd_ps(p, p);    // (a0+a1)+(a2+a3), (a4+a5)+(a6+a7), ...
  return _mm_cvtss_f32(_mm_add_ss(q, _mm_movehdup_ps(q)));
}

// Superblocks g .. g + nb - 1 (nb <= 4) of R rows into acc[r]'s four lanes (lane j: superblock
// g + j). The weight scales are gathered in integer registers and the activation scales read with
// a masked load, rather than through small stack arrays whose reload would stall store forwarding.
template <class Policy, DType DT, int R>
inline void kgroup(const QuantRowsView& x, int64_t m, const char* wrow, int64_t g, int nb,
                   __m128 acc[R]) {
  constexpr bool q4k = DT == DType::Q4_K;
  using Block = std::conditional_t<q4k, BlockQ4_K, BlockQ6_K>;
  const Block* wb = reinterpret_cast<const Block*>(wrow) + g;
  const int64_t K = x.cols, nscale = K / 256, nsums = K / 16;
  // v[r][j]: superblock g + j's s lanes; Q4_K: v[r][4 + j] its mins lanes.
  __m256i v[R][8];
  uint64_t dpack = 0, mpack = 0;  // four f16 d (dmin) values, superblock j at bits 16j
  for (int j = 0; j < 4; ++j) {
    if (j >= nb) {
      for (int r = 0; r < R; ++r) v[r][j] = v[r][4 + j] = _mm256_setzero_si256();
      continue;
    }
    const Block& b = wb[j];
    uint16_t h;
    std::memcpy(&h, &b.d, 2);
    dpack |= uint64_t{h} << (16 * j);
    const int8_t* xq[R];
    const int32_t* xs[R];
    for (int r = 0; r < R; ++r) {
      xq[r] = x.qs + (m + r) * K + (g + j) * 256;
      xs[r] = x.sums + (m + r) * nsums + (g + j) * 16;
    }
    __m256i s[R], mins[R];
    if constexpr (q4k) {
      std::memcpy(&h, &b.dmin, 2);
      mpack |= uint64_t{h} << (16 * j);
      Policy::template q4k<R>(b, xq, xs, s, mins);
      for (int r = 0; r < R; ++r) v[r][4 + j] = mins[r];
    } else {
      Policy::template q6k<R>(b, xq, xs, s);
    }
    for (int r = 0; r < R; ++r) v[r][j] = s[r];
  }
  const __m128i dwh = _mm_set_epi64x(static_cast<int64_t>(mpack), static_cast<int64_t>(dpack));
  // Lanes j < nb of the activation scales; the others read as 0 and touch no memory.
  const __m128i live = _mm_cmpgt_epi32(_mm_set1_epi32(nb), _mm_setr_epi32(0, 1, 2, 3));
  for (int r = 0; r < R; ++r) {
    const __m128 dx = _mm_maskload_ps(x.scale + (m + r) * nscale + g, live);
    __m128 term;
    if constexpr (q4k) {
      // Lanes 0-3: (d * dx) * s, lanes 4-7: (dmin * dx) * mins; term = the first minus the second.
      const __m256i sm = sum_each(v[r]);
      const __m256 scales = _mm256_mul_ps(_mm256_cvtph_ps(dwh), _mm256_set_m128(dx, dx));
      const __m256 t = _mm256_mul_ps(scales, _mm256_cvtepi32_ps(sm));
      term = _mm_sub_ps(_mm256_castps256_ps128(t), _mm256_extractf128_ps(t, 1));
    } else {
      const __m128i s = totals4(v[r][0], v[r][1], v[r][2], v[r][3]);
      term = _mm_mul_ps(_mm_mul_ps(_mm_cvtph_ps(dwh), dx), _mm_cvtepi32_ps(s));
    }
    acc[r] = _mm_add_ps(acc[r], term);
  }
}

// R rows of x (m .. m + R - 1) against weight row `wrow` of `blocks` superblocks of type DT:
// superblocks i0 .. i0 + 3 (i0 % 8 == 0) feed acc lanes 0-3, i0 + 4 .. i0 + 7 lanes 4-7.
template <class Policy, DType DT, int R>
inline void ktile(const QuantRowsView& x, int64_t m, const char* wrow, int64_t blocks, float* y,
                  int64_t ldy) {
  __m128 lo[R], hi[R];
  for (int r = 0; r < R; ++r) lo[r] = hi[r] = _mm_setzero_ps();
  for (int64_t i0 = 0; i0 < blocks; i0 += 8) {
    kgroup<Policy, DT, R>(x, m, wrow, i0, static_cast<int>(std::min<int64_t>(4, blocks - i0)), lo);
    if (i0 + 4 < blocks)
      kgroup<Policy, DT, R>(x, m, wrow, i0 + 4,
                            static_cast<int>(std::min<int64_t>(4, blocks - i0 - 4)), hi);
  }
  for (int r = 0; r < R; ++r) y[(m + r) * ldy] = pairwise8(lo[r], hi[r]);
}

template <class Policy, DType DT>
void krange(const QuantRowsView& x, const void* w, float* y, int64_t ldy, int64_t m0, int64_t m1,
            int64_t n0, int64_t n1) {
  const int64_t blocks = x.cols / 256;
  const size_t row_bytes = dtype_bytes(DT, x.cols);
  for (int64_t n = n0; n < n1; ++n) {
    const char* wrow = static_cast<const char*>(w) + static_cast<size_t>(n) * row_bytes;
    int64_t m = m0;
    for (; m + 4 <= m1; m += 4) ktile<Policy, DT, 4>(x, m, wrow, blocks, y + n, ldy);
    switch (m1 - m) {
      case 3:
        ktile<Policy, DT, 3>(x, m, wrow, blocks, y + n, ldy);
        break;
      case 2:
        ktile<Policy, DT, 2>(x, m, wrow, blocks, y + n, ldy);
        break;
      case 1:
        ktile<Policy, DT, 1>(x, m, wrow, blocks, y + n, ldy);
        break;
      default:
        break;
    }
  }
}

// Both K-quant types of one policy, for the ISA files' entry points.
template <class Policy>
void krange_any(DType dt, const QuantRowsView& x, const void* w, float* y, int64_t ldy, int64_t m0,
                int64_t m1, int64_t n0, int64_t n1) {
  if (dt == DType::Q4_K)
    krange<Policy, DType::Q4_K>(x, w, y, ldy, m0, m1, n0, n1);
  else
    krange<Policy, DType::Q6_K>(x, w, y, ldy, m0, m1, n0, n1);
}

}  // namespace
}  // namespace eagle2::detail

// The tile loop of the Q8_0/Q4_0 kernels, shared by quant_matmul_avx2.cpp and
// quant_matmul_avx512.cpp, which differ only in how one block's integer dot product is taken (the
// `Dot` policy); quant_ktiles.h (the K-quant loop, for quant_kmatmul_*.cpp) reuses its reductions.
// Include ONLY from ISA files: everything here sits in an unnamed namespace and
// uses AVX2, so each ISA file gets its own copy (see matmul_internal.h for why that matters).
//
// Order (quant_matmul.h): blocks go eight at a time; for each of the eight the policy gives eight
// int32 partial sums, a fixed hadd tree turns the eight vectors into one vector of the eight exact
// block sums (lane j = block i0 + j), the offset correction is applied in int32, and then one f32
// multiply by (dw * dx) and one add into the lane's accumulator: lane j of the accumulator is
// acc[(i0 + j) % 8] of the reference because i0 is a multiple of 8.
#pragma once

#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "core/quant_blocks.h"
#include "kernels/quant_internal.h"

namespace eagle2::detail {
namespace {

// Eight vectors of eight int32 partial sums -> one vector of their eight totals (exact in int32).
inline __m256i sum_each(const __m256i v[8]) {
  const __m256i g0 =
      _mm256_hadd_epi32(_mm256_hadd_epi32(v[0], v[1]), _mm256_hadd_epi32(v[2], v[3]));
  const __m256i g1 =
      _mm256_hadd_epi32(_mm256_hadd_epi32(v[4], v[5]), _mm256_hadd_epi32(v[6], v[7]));
  return _mm256_add_epi32(_mm256_permute2x128_si256(g0, g1, 0x20),
                          _mm256_permute2x128_si256(g0, g1, 0x31));
}

inline float pairwise(__m256 acc) {
  alignas(32) float a[8];
  _mm256_store_ps(a, acc);
  return ((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7]));
}

// The eight f16 scales of blocks i0 .. i0 + 7 of one weight row, gathered in registers (eight
// small stores and one wide load would stall on store-to-load forwarding); the missing blocks of
// a short last group stay 0.
template <class Block>
inline __m256 scales8(const Block* wb, int64_t i0, int nb) {
  __m128i dh = _mm_setzero_si128();
  if (nb == 8) {
    dh = _mm_insert_epi16(dh, wb[i0 + 0].d, 0);
    dh = _mm_insert_epi16(dh, wb[i0 + 1].d, 1);
    dh = _mm_insert_epi16(dh, wb[i0 + 2].d, 2);
    dh = _mm_insert_epi16(dh, wb[i0 + 3].d, 3);
    dh = _mm_insert_epi16(dh, wb[i0 + 4].d, 4);
    dh = _mm_insert_epi16(dh, wb[i0 + 5].d, 5);
    dh = _mm_insert_epi16(dh, wb[i0 + 6].d, 6);
    dh = _mm_insert_epi16(dh, wb[i0 + 7].d, 7);
  } else {
    alignas(16) uint16_t dws[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    for (int j = 0; j < nb; ++j) dws[j] = wb[i0 + j].d;
    dh = _mm_load_si128(reinterpret_cast<const __m128i*>(dws));
  }
  return _mm256_cvtph_ps(dh);
}

// R rows of x (m .. m + R - 1) against C weight rows (wrow, wrow + row_bytes, ...) of `blocks`
// 32-blocks. The block sums of a group of eight are reduced as they come, pair by pair, with the
// hadd pairing of sum_each() (the same exact int32 totals), so few vectors stay live and a tile
// of several columns keeps its independent chains in registers.
template <class Dot, DType DT, int R, int C>
inline void tile32(const QuantRowsView& x, int64_t m, const char* wrow, size_t row_bytes,
                   int64_t blocks, float* y, int64_t ldy) {
  using Block = std::conditional_t<DT == DType::Q8_0, BlockQ8_0, BlockQ4_0>;
  const int64_t K = x.cols, nscale = K / 32;
  __m256 acc[R][C];
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) acc[r][c] = _mm256_setzero_ps();
  for (int64_t i0 = 0; i0 < blocks; i0 += 8) {
    const int nb = static_cast<int>(std::min<int64_t>(8, blocks - i0));
    __m256 dw[C];
    for (int c = 0; c < C; ++c)
      dw[c] = scales8(reinterpret_cast<const Block*>(wrow + c * row_bytes), i0, nb);
    __m256i half[R][C], quarter[R][C][2];
    for (int r = 0; r < R; ++r)
      for (int c = 0; c < C; ++c) half[r][c] = _mm256_setzero_si256();  // set at jp 0, read at jp 1
    for (int jp = 0; jp < 4; ++jp) {
      __m256i v[2][R][C];
      for (int h = 0; h < 2; ++h) {
        const int j = 2 * jp + h;
        for (int c = 0; c < C; ++c) {
          if (j >= nb) {
            for (int r = 0; r < R; ++r) v[h][r][c] = _mm256_setzero_si256();
            continue;
          }
          const auto wp =
              Dot::template prep<DT>(reinterpret_cast<const Block*>(wrow + c * row_bytes) + i0 + j);
          for (int r = 0; r < R; ++r) {
            const __m256i xv = _mm256_loadu_si256(
                reinterpret_cast<const __m256i*>(x.qs + (m + r) * K + (i0 + j) * 32));
            v[h][r][c] = Dot::template dot<DT>(wp, xv);
          }
        }
      }
      for (int r = 0; r < R; ++r)
        for (int c = 0; c < C; ++c) {
          const __m256i pair = _mm256_hadd_epi32(v[0][r][c], v[1][r][c]);
          if (jp % 2 == 0)
            half[r][c] = pair;
          else
            quarter[r][c][jp / 2] = _mm256_hadd_epi32(half[r][c], pair);
        }
    }
    for (int r = 0; r < R; ++r) {
      const float* xd = x.scale + (m + r) * nscale + i0;
      const int32_t* xs = x.sums + (m + r) * nscale + i0;
      __m256 dx;
      __m256i xsum;
      if (nb == 8) {
        dx = _mm256_loadu_ps(xd);
        xsum = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xs));
      } else {
        alignas(32) float d8[8] = {0, 0, 0, 0, 0, 0, 0, 0};
        alignas(32) int32_t s8[8] = {0, 0, 0, 0, 0, 0, 0, 0};
        std::copy(xd, xd + nb, d8);
        std::copy(xs, xs + nb, s8);
        dx = _mm256_load_ps(d8);
        xsum = _mm256_load_si256(reinterpret_cast<const __m256i*>(s8));
      }
      for (int c = 0; c < C; ++c) {
        const __m256i g0 = quarter[r][c][0], g1 = quarter[r][c][1];
        __m256i s = _mm256_add_epi32(_mm256_permute2x128_si256(g0, g1, 0x20),
                                     _mm256_permute2x128_si256(g0, g1, 0x31));
        // The policy's dot may carry an offset times the block's activation sum: remove it.
        constexpr int shift = Dot::template offset_shift<DT>();
        if constexpr (shift >= 0) s = _mm256_sub_epi32(s, _mm256_slli_epi32(xsum, shift));
        const __m256 term = _mm256_mul_ps(_mm256_mul_ps(dw[c], dx), _mm256_cvtepi32_ps(s));
        acc[r][c] = _mm256_add_ps(acc[r][c], term);
      }
    }
  }
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) y[(m + r) * ldy + c] = pairwise(acc[r][c]);
}

template <class Dot, DType DT, int R>
inline void columns32(const QuantRowsView& x, int64_t m, const char* w, size_t row_bytes,
                      int64_t blocks, float* y, int64_t ldy, int64_t n0, int64_t n1) {
  // A few rows of x: two weight rows per tile for independent chains; four rows: one.
  constexpr int C = R >= 4 ? 1 : 2;
  int64_t n = n0;
  for (; n + C <= n1; n += C)
    tile32<Dot, DT, R, C>(x, m, w + static_cast<size_t>(n) * row_bytes, row_bytes, blocks, y + n,
                          ldy);
  for (; n < n1; ++n)
    tile32<Dot, DT, R, 1>(x, m, w + static_cast<size_t>(n) * row_bytes, row_bytes, blocks, y + n,
                          ldy);
}

template <class Dot, DType DT>
void range32(const QuantRowsView& x, const void* w, float* y, int64_t ldy, int64_t m0, int64_t m1,
             int64_t n0, int64_t n1) {
  const int64_t blocks = x.cols / 32;
  const size_t row_bytes = dtype_bytes(DT, x.cols);
  const char* wc = static_cast<const char*>(w);
  int64_t m = m0;
  for (; m + 4 <= m1; m += 4) columns32<Dot, DT, 4>(x, m, wc, row_bytes, blocks, y, ldy, n0, n1);
  switch (m1 - m) {
    case 3:
      columns32<Dot, DT, 3>(x, m, wc, row_bytes, blocks, y, ldy, n0, n1);
      break;
    case 2:
      columns32<Dot, DT, 2>(x, m, wc, row_bytes, blocks, y, ldy, n0, n1);
      break;
    case 1:
      columns32<Dot, DT, 1>(x, m, wc, row_bytes, blocks, y, ldy, n0, n1);
      break;
    default:
      break;
  }
}

}  // namespace
}  // namespace eagle2::detail

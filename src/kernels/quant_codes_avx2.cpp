// AVX2 kernels for the types of core/quant_codes.h (Q4_1, Q5_0, Q5_1, IQ4_NL; Q5_K, Q3_K, Q2_K,
// IQ4_XS), in quant_matmul.h's order. Each weight block is unpacked once per tile of up to four
// activation rows into 32-byte vectors of signed codes in element order (the same codes
// decode_block gives), then every row takes maddubs(|code|, sign(x, code)) = code * x per byte,
// summed in int16 pairs and then int32 lanes by madd: by ones for a 32-element block, by each
// 16-group's integer scale for a superblock.
//
// No step saturates or overflows: |code| <= 127 (IQ4's table; the others <= 31) and |x| <= 127
// (quantize_rows clamps), so a maddubs pair is at most 2 * 127 * 127 = 32258 < 32767; a madd
// lane at most 2 * 32258 * 63, and a superblock's whole sum at most 256 * 127 * 127 * 63 (IQ4_XS
// scales are -32..31, Q5_K's 0..63) = 260M < 2^31. Integer sums are exact in any order, so they
// are the reference's; the float steps are the reference's operations in its order.
#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "core/quant_blocks.h"
#include "core/quant_codes.h"
#include "kernels/quant_internal.h"
#include "kernels/quant_tiles.h"  // sum_each, pairwise

namespace eagle2::detail {
namespace {

// Sixteen bytes of nibbles -> 32 codes: element j from the low nibble of byte j, j + 16 from its
// high nibble.
inline __m256i nibbles32(const uint8_t* qs) {
  const __m128i q = _mm_loadu_si128(reinterpret_cast<const __m128i*>(qs));
  const __m128i m4 = _mm_set1_epi8(0x0F);
  return _mm256_set_m128i(_mm_and_si128(_mm_srli_epi16(q, 4), m4), _mm_and_si128(q, m4));
}

// The 32 bits of qh (little-endian) -> byte j = 0x10 where bit j is set.
inline __m256i fifth_bits(const uint8_t* qh) {
  uint32_t bits;
  std::memcpy(&bits, qh, 4);
  const __m256i v = _mm256_set1_epi32(static_cast<int>(bits));
  const __m256i spread =
      _mm256_shuffle_epi8(v, _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2,
                                              2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3));
  const __m256i bit = _mm256_set1_epi64x(static_cast<int64_t>(0x8040201008040201ull));
  return _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(spread, bit), bit),
                          _mm256_set1_epi8(0x10));
}

inline __m256i iq4_table() {
  return _mm256_broadcastsi128_si256(
      _mm_loadu_si128(reinterpret_cast<const __m128i*>(kIq4nlValues)));
}

// Bits [shift, shift + width) of every byte (shift + width <= 8, so no bit crosses a byte).
inline __m256i bits_of(__m256i v, int shift, int mask) {
  return _mm256_and_si256(_mm256_srl_epi16(v, _mm_cvtsi32_si128(shift)), _mm256_set1_epi8(mask));
}

template <DType DT>
using Block32 = std::conditional_t<
    DT == DType::Q4_1, BlockQ4_1,
    std::conditional_t<DT == DType::Q5_0, BlockQ5_0,
                       std::conditional_t<DT == DType::Q5_1, BlockQ5_1, BlockIQ4_NL>>>;

template <DType DT>
inline __m256i codes32(const Block32<DT>& b) {
  if constexpr (DT == DType::Q4_1) return nibbles32(b.qs);
  if constexpr (DT == DType::Q5_0)
    return _mm256_sub_epi8(_mm256_or_si256(nibbles32(b.qs), fifth_bits(b.qh)),
                           _mm256_set1_epi8(16));
  if constexpr (DT == DType::Q5_1) return _mm256_or_si256(nibbles32(b.qs), fifth_bits(b.qh));
  if constexpr (DT == DType::IQ4_NL) return _mm256_shuffle_epi8(iq4_table(), nibbles32(b.qs));
}

// One superblock's eight 32-code vectors, in element order.
template <DType DT>
inline void codes256(const char* blk, __m256i c[8]) {
  if constexpr (DT == DType::Q5_K) {
    const auto& b = *reinterpret_cast<const BlockQ5_K*>(blk);
    const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.qh));
    for (int k = 0; k < 4; ++k) {
      const __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.qs + 32 * k));
      c[2 * k] = _mm256_or_si256(bits_of(q, 0, 0x0F), _mm256_slli_epi16(bits_of(h, 2 * k, 1), 4));
      c[2 * k + 1] =
          _mm256_or_si256(bits_of(q, 4, 0x0F), _mm256_slli_epi16(bits_of(h, 2 * k + 1, 1), 4));
    }
  } else if constexpr (DT == DType::Q3_K || DT == DType::Q2_K) {
    constexpr bool q3 = DT == DType::Q3_K;
    const uint8_t* qs = q3 ? reinterpret_cast<const BlockQ3_K*>(blk)->qs
                           : reinterpret_cast<const BlockQ2_K*>(blk)->qs;
    __m256i hm = _mm256_setzero_si256();
    if constexpr (q3)
      hm = _mm256_loadu_si256(
          reinterpret_cast<const __m256i*>(reinterpret_cast<const BlockQ3_K*>(blk)->hmask));
    for (int h = 0; h < 2; ++h) {
      const __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qs + 32 * h));
      for (int s = 0; s < 4; ++s) {
        const int k = 4 * h + s;
        c[k] = bits_of(q, 2 * s, 3);
        // Q3_K: minus 4 unless the high bit is set, i.e. (q | bit << 2) - 4.
        if constexpr (q3)
          c[k] = _mm256_sub_epi8(_mm256_or_si256(c[k], _mm256_slli_epi16(bits_of(hm, k, 1), 2)),
                                 _mm256_set1_epi8(4));
      }
    }
  } else {  // IQ4_XS
    const auto& b = *reinterpret_cast<const BlockIQ4_XS*>(blk);
    const __m256i table = iq4_table();
    for (int k = 0; k < 8; ++k) c[k] = _mm256_shuffle_epi8(table, nibbles32(b.qs + 16 * k));
  }
}

// code * x per byte, summed in pairs (int16).
inline __m256i pair_products(__m256i c, const int8_t* x) {
  const __m256i xv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x));
  return _mm256_maddubs_epi16(_mm256_sign_epi8(c, c), _mm256_sign_epi8(xv, c));
}

inline int32_t hsum_epi32(__m256i v) {
  __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4E));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xB1));
  return _mm_cvtsi128_si32(s);
}

// 32-element blocks, eight at a time (quant_tiles.h's scheme): lane j of acc[r] is the
// reference's acc[(i0 + j) % 8] because i0 is a multiple of 8; a short last group is padded with
// zero scales, whose terms are +0.
template <DType DT, int R>
void codes_tile32(const QuantRowsView& x, int64_t m, const char* wrow, int64_t blocks, float* y,
                  int64_t ldy) {
  using Block = Block32<DT>;
  const Block* wb = reinterpret_cast<const Block*>(wrow);
  const int64_t K = x.cols, nscale = K / 32;
  const __m256i ones = _mm256_set1_epi16(1);
  __m256 acc[R];
  for (int r = 0; r < R; ++r) acc[r] = _mm256_setzero_ps();
  for (int64_t i0 = 0; i0 < blocks; i0 += 8) {
    const int nb = static_cast<int>(std::min<int64_t>(8, blocks - i0));
    alignas(16) uint16_t dh[8] = {0, 0, 0, 0, 0, 0, 0, 0}, mh[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    __m256i c[8];
    for (int j = 0; j < 8; ++j) {
      if (j >= nb) {
        c[j] = _mm256_setzero_si256();
        continue;
      }
      const Block& b = wb[i0 + j];
      std::memcpy(&dh[j], &b.d, 2);
      if constexpr (codes_add_min(DT)) std::memcpy(&mh[j], &b.m, 2);
      c[j] = codes32<DT>(b);
    }
    const __m256 dw = _mm256_cvtph_ps(_mm_load_si128(reinterpret_cast<const __m128i*>(dh)));
    const __m256 mw = _mm256_cvtph_ps(_mm_load_si128(reinterpret_cast<const __m128i*>(mh)));
    const __m256i live =
        _mm256_cmpgt_epi32(_mm256_set1_epi32(nb), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    for (int r = 0; r < R; ++r) {
      const int8_t* xq = x.qs + (m + r) * K + i0 * 32;
      __m256i v[8];
      for (int j = 0; j < 8; ++j)
        v[j] = j < nb ? _mm256_madd_epi16(pair_products(c[j], xq + 32 * j), ones)
                      : _mm256_setzero_si256();
      const __m256i s = sum_each(v);
      const __m256 dx = _mm256_maskload_ps(x.scale + (m + r) * nscale + i0, live);
      __m256 term = _mm256_mul_ps(_mm256_mul_ps(dw, dx), _mm256_cvtepi32_ps(s));
      if constexpr (codes_add_min(DT)) {
        const __m256i xs = _mm256_maskload_epi32(x.sums + (m + r) * nscale + i0, live);
        term = _mm256_add_ps(term, _mm256_mul_ps(_mm256_mul_ps(mw, dx), _mm256_cvtepi32_ps(xs)));
      }
      acc[r] = _mm256_add_ps(acc[r], term);
    }
  }
  for (int r = 0; r < R; ++r) y[(m + r) * ldy] = pairwise(acc[r]);
}

// Superblocks: the codes and the sixteen group scales once per tile, one exact int32 sum and
// the reference's float step per row.
template <DType DT, int R>
void codes_tile256(const QuantRowsView& x, int64_t m, const char* wrow, int64_t blocks, float* y,
                   int64_t ldy) {
  const int64_t K = x.cols, nscale = K / 256, nsums = K / 16;
  const size_t block_bytes = dtype_block_bytes(DT);
  float acc[R][8] = {};
  DecodedBlock sc;
  for (int64_t i = 0; i < blocks; ++i) {
    const char* blk = wrow + static_cast<size_t>(i) * block_bytes;
    decode_block_scales(DT, blk, &sc);
    __m256i c[8], scv[8];
    codes256<DT>(blk, c);
    for (int k = 0; k < 8; ++k)
      scv[k] = _mm256_set_m128i(_mm_set1_epi16(sc.sc[2 * k + 1]), _mm_set1_epi16(sc.sc[2 * k]));
    for (int r = 0; r < R; ++r) {
      const int8_t* xq = x.qs + (m + r) * K + i * 256;
      __m256i v = _mm256_setzero_si256();
      for (int k = 0; k < 8; ++k)
        v = _mm256_add_epi32(v, _mm256_madd_epi16(pair_products(c[k], xq + 32 * k), scv[k]));
      const int32_t s = hsum_epi32(v);
      const float dx = x.scale[(m + r) * nscale + i];
      float term = (sc.d * dx) * static_cast<float>(s);
      if constexpr (codes_sub_min(DT)) {
        const int32_t* xs = x.sums + (m + r) * nsums + i * 16;
        int32_t mins = 0;
        for (int g = 0; g < 16; ++g) mins += sc.mn[g] * xs[g];
        term = term - (sc.dmin * dx) * static_cast<float>(mins);
      }
      acc[r][i % 8] += term;
    }
  }
  for (int r = 0; r < R; ++r) {
    const float* a = acc[r];
    y[(m + r) * ldy] = ((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7]));
  }
}

template <DType DT, int R>
inline void codes_tile(const QuantRowsView& x, int64_t m, const char* wrow, int64_t blocks,
                       float* y, int64_t ldy) {
  if constexpr (dtype_block_elements(DT) == 32)
    codes_tile32<DT, R>(x, m, wrow, blocks, y, ldy);
  else
    codes_tile256<DT, R>(x, m, wrow, blocks, y, ldy);
}

template <DType DT>
void codes_range(const QuantRowsView& x, const void* w, float* y, int64_t ldy, int64_t m0,
                 int64_t m1, int64_t n0, int64_t n1) {
  const int64_t blocks = x.cols / dtype_block_elements(DT);
  const size_t row_bytes = dtype_bytes(DT, x.cols);
  for (int64_t n = n0; n < n1; ++n) {
    const char* wrow = static_cast<const char*>(w) + static_cast<size_t>(n) * row_bytes;
    int64_t m = m0;
    for (; m + 4 <= m1; m += 4) codes_tile<DT, 4>(x, m, wrow, blocks, y + n, ldy);
    switch (m1 - m) {
      case 3:
        codes_tile<DT, 3>(x, m, wrow, blocks, y + n, ldy);
        break;
      case 2:
        codes_tile<DT, 2>(x, m, wrow, blocks, y + n, ldy);
        break;
      case 1:
        codes_tile<DT, 1>(x, m, wrow, blocks, y + n, ldy);
        break;
      default:
        break;
    }
  }
}

}  // namespace

void quant_codes_range_avx2(DType dt, const QuantRowsView& x, const void* w, float* y, int64_t ldy,
                            int64_t m0, int64_t m1, int64_t n0, int64_t n1) {
  switch (dt) {
    case DType::Q4_1:
      return codes_range<DType::Q4_1>(x, w, y, ldy, m0, m1, n0, n1);
    case DType::Q5_0:
      return codes_range<DType::Q5_0>(x, w, y, ldy, m0, m1, n0, n1);
    case DType::Q5_1:
      return codes_range<DType::Q5_1>(x, w, y, ldy, m0, m1, n0, n1);
    case DType::IQ4_NL:
      return codes_range<DType::IQ4_NL>(x, w, y, ldy, m0, m1, n0, n1);
    case DType::Q5_K:
      return codes_range<DType::Q5_K>(x, w, y, ldy, m0, m1, n0, n1);
    case DType::Q3_K:
      return codes_range<DType::Q3_K>(x, w, y, ldy, m0, m1, n0, n1);
    case DType::Q2_K:
      return codes_range<DType::Q2_K>(x, w, y, ldy, m0, m1, n0, n1);
    case DType::IQ4_XS:
      return codes_range<DType::IQ4_XS>(x, w, y, ldy, m0, m1, n0, n1);
    default:
      return quant_matmul_range_scalar(dt, x, w, y, ldy, m0, m1, n0, n1);
  }
}

}  // namespace eagle2::detail

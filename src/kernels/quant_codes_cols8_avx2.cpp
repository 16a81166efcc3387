// AVX2 kernel for Q4_1, Q5_0 and Q5_1 weights and several activation rows, the AVX2 twin of
// quant_codes_cols16_avx512.cpp: eight weight rows (output columns) in the eight int32 lanes of a
// register, each block transposed and unpacked once per chunk of up to kCodes8RowChunk activation
// rows, the float steps eight columns at a time and no horizontal sums (quant_codes_avx2.cpp's
// kernel unpacks a block once per four rows and sums every (row, column) across the lanes).
//
// The order of quant_matmul.h is kept exactly: per block an exact int32 s per (row, column), one
// f32 term with the reference's operations ((d * dx) * float(s), then + (m * dx) * float(X) for
// Q4_1/Q5_1 with X the block's activation sum; no FMA) added into accumulator i % 8, then
// ((a0 + a1) + (a2 + a3)) + ((a4 + a5) + (a6 + a7)). maddubs multiplies unsigned code bytes u by
// the signed activations into int16 pair sums, so the codes go in as u with s = sum u * x - o * X:
//   Q4_1 u = nibble (0..15), o = 0: a pair is at most 2 * 15 * 127, so all eight code dwords of a
//        block add up in int16 (30480 < 32767) before one madd by ones;
//   Q5_1 u = nibble | fifth bit << 4 (0..31), o = 0; Q5_0 the same u with o = 16: four dwords
//        add up in int16 (2 * 31 * 127 * 4 = 31496), so two madds per block.
// IQ4_NL has no such kernel on AVX2: its unsigned codes (table + 128, up to 241) would overflow a
// single maddubs pair (2 * 241 * 127 > 32767).
// Integer sums are exact and associative, so s is the reference's.
#include <immintrin.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "core/quant_blocks.h"
#include "core/quant_codes.h"
#include "kernels/quant_internal.h"

namespace eagle2::detail {
namespace {

constexpr int64_t kCodes8RowChunk = 16;

// w[t] (t = 0..3) = dword t of the 16 bytes at p + n * rb, for n = 0..7 in lane n.
inline void codes8_transpose8x4(const char* p, size_t rb, __m256i w[4]) {
  __m256i a[4];
  for (int k = 0; k < 4; ++k)
    a[k] = _mm256_inserti128_si256(
        _mm256_castsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + k * rb))),
        _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + (k + 4) * rb)), 1);
  // a[k] = [dwords 0-3 of row k | of row k + 4]: a 4 x 4 transpose inside each 128-bit lane.
  const __m256i t0 = _mm256_unpacklo_epi32(a[0], a[1]), t1 = _mm256_unpackhi_epi32(a[0], a[1]);
  const __m256i t2 = _mm256_unpacklo_epi32(a[2], a[3]), t3 = _mm256_unpackhi_epi32(a[2], a[3]);
  w[0] = _mm256_unpacklo_epi64(t0, t2);
  w[1] = _mm256_unpackhi_epi64(t0, t2);
  w[2] = _mm256_unpacklo_epi64(t1, t3);
  w[3] = _mm256_unpackhi_epi64(t1, t3);
}

template <DType DT>
using Codes8Block = std::conditional_t<DT == DType::Q4_1, BlockQ4_1,
                                       std::conditional_t<DT == DType::Q5_0, BlockQ5_0, BlockQ5_1>>;

// One block of eight columns, unpacked: codes[k] = elements 4k .. 4k + 3 of each column as the
// unsigned bytes u, one column per lane; dw (and m for Q4_1/Q5_1) the f16 scales widened.
struct Codes8Unpacked {
  __m256i codes[8];
  __m256 dw, m;
};

// Every block starts with its f16 d (Q4_1/Q5_1: and m) and ends with its sixteen nibble bytes;
// Q5_0's qh sits at byte 2, Q5_1's at byte 4. Both 16-byte loads stay inside the block.
template <DType DT>
void codes8_unpack(const char* blk, size_t rb, Codes8Unpacked* u) {
  using Block = Codes8Block<DT>;
  __m256i head[4], qs[4];
  codes8_transpose8x4(blk, rb, head);
  codes8_transpose8x4(blk + offsetof(Block, qs), rb, qs);
  // [d0-3 m0-3 | d4-7 m4-7] as int16 (packus keeps values <= 0xFFFF), then d and m apart.
  const __m256i dm = _mm256_permute4x64_epi64(
      _mm256_packus_epi32(_mm256_and_si256(head[0], _mm256_set1_epi32(0xFFFF)),
                          _mm256_srli_epi32(head[0], 16)),
      0xD8);
  u->dw = _mm256_cvtph_ps(_mm256_castsi256_si128(dm));
  u->m = DT == DType::Q5_0 ? _mm256_setzero_ps() : _mm256_cvtph_ps(_mm256_extracti128_si256(dm, 1));
  const __m256i m15 = _mm256_set1_epi8(0x0F);
  for (int k = 0; k < 4; ++k) {
    u->codes[k] = _mm256_and_si256(qs[k], m15);
    u->codes[4 + k] = _mm256_and_si256(_mm256_srli_epi16(qs[k], 4), m15);
  }
  if constexpr (DT != DType::Q4_1) {
    const __m256i qh = DT == DType::Q5_1 ? head[1]
                                         : _mm256_or_si256(_mm256_srli_epi32(head[0], 16),
                                                           _mm256_slli_epi32(head[1], 16));
    // Bits 4k .. 4k + 3 of qh to bit 4 of bytes 0..3: one multiply places four non-overlapping
    // shifted copies (by 4, 11, 18, 25: bit b lands at 8b + 4), so no sum carries.
    const __m256i spread = _mm256_set1_epi32(0x02040810), m4 = _mm256_set1_epi32(0xF),
                  bit4 = _mm256_set1_epi8(0x10);
    for (int k = 0; k < 8; ++k) {
      const __m256i nib = _mm256_and_si256(_mm256_srli_epi32(qh, 4 * k), m4);
      u->codes[k] =
          _mm256_or_si256(u->codes[k], _mm256_and_si256(_mm256_mullo_epi32(nib, spread), bit4));
    }
  }
}

inline __m256i codes8_bcast(const int8_t* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return _mm256_set1_epi32(v);
}

// Block i of rows m .. m + R - 1 against the unpacked columns, added into acc[8 * r] (the rows'
// accumulators for i % 8).
template <DType DT, int R>
__attribute__((always_inline)) inline void codes8_rows(const Codes8Unpacked& u,
                                                       const QuantRowsView& x, int64_t m, int64_t i,
                                                       __m256* acc) {
  constexpr int per_madd = DT == DType::Q4_1 ? 8 : 4;
  const int64_t nblocks = x.cols / 32;
  const __m256i ones = _mm256_set1_epi16(1);
  __m256i s[R];
  for (int r = 0; r < R; ++r) s[r] = _mm256_setzero_si256();
  for (int k0 = 0; k0 < 8; k0 += per_madd) {
    __m256i h[R];
    for (int r = 0; r < R; ++r) h[r] = _mm256_setzero_si256();
    for (int k = k0; k < k0 + per_madd; ++k)
      for (int r = 0; r < R; ++r)
        h[r] = _mm256_add_epi16(
            h[r], _mm256_maddubs_epi16(u.codes[k],
                                       codes8_bcast(x.qs + (m + r) * x.cols + i * 32 + 4 * k)));
    for (int r = 0; r < R; ++r) s[r] = _mm256_add_epi32(s[r], _mm256_madd_epi16(h[r], ones));
  }
  for (int r = 0; r < R; ++r) {
    const int64_t at = (m + r) * nblocks + i;
    const __m256 vdx = _mm256_set1_ps(x.scale[at]);
    const int32_t X = x.sums[at];
    if constexpr (DT == DType::Q5_0) s[r] = _mm256_sub_epi32(s[r], _mm256_set1_epi32(16 * X));
    __m256 t = _mm256_mul_ps(_mm256_mul_ps(u.dw, vdx), _mm256_cvtepi32_ps(s[r]));
    if constexpr (DT != DType::Q5_0)
      t = _mm256_add_ps(
          t, _mm256_mul_ps(_mm256_mul_ps(u.m, vdx), _mm256_set1_ps(static_cast<float>(X))));
    acc[8 * r] = _mm256_add_ps(acc[8 * r], t);
  }
}

template <DType DT>
int64_t codes_cols8(const QuantRowsView& x, const char* w, float* y, int64_t ldy, int64_t m0,
                    int64_t m1, int64_t n0, int64_t n1) {
  const int64_t blocks = x.cols / 32;
  const size_t rb = dtype_bytes(DT, x.cols);
  constexpr size_t block_bytes = sizeof(Codes8Block<DT>);
  alignas(32) Codes8Unpacked u;
  alignas(32) __m256 acc[kCodes8RowChunk][8];
  const int64_t n_end = n0 + (n1 - n0) / 8 * 8;
  for (int64_t n = n0; n < n_end; n += 8) {
    const char* wn = w + static_cast<size_t>(n) * rb;
    for (int64_t mc = m0; mc < m1; mc += kCodes8RowChunk) {
      const int64_t rows = std::min(kCodes8RowChunk, m1 - mc);
      for (int64_t r = 0; r < rows; ++r)
        for (int a = 0; a < 8; ++a) acc[r][a] = _mm256_setzero_ps();
      for (int64_t i = 0; i < blocks; ++i) {
        codes8_unpack<DT>(wn + i * block_bytes, rb, &u);
        int64_t r = 0;
        for (; r + 2 <= rows; r += 2) codes8_rows<DT, 2>(u, x, mc + r, i, &acc[r][i % 8]);
        if (r < rows) codes8_rows<DT, 1>(u, x, mc + r, i, &acc[r][i % 8]);
      }
      for (int64_t r = 0; r < rows; ++r) {
        const __m256* a = acc[r];
        const __m256 total =
            _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(a[0], a[1]), _mm256_add_ps(a[2], a[3])),
                          _mm256_add_ps(_mm256_add_ps(a[4], a[5]), _mm256_add_ps(a[6], a[7])));
        _mm256_storeu_ps(y + (mc + r) * ldy + n, total);
      }
    }
  }
  return n_end;
}

}  // namespace

int64_t quant_codes_cols8_range_avx2(DType dt, const QuantRowsView& x, const void* w, float* y,
                                     int64_t ldy, int64_t m0, int64_t m1, int64_t n0, int64_t n1) {
  const char* wc = static_cast<const char*>(w);
  switch (dt) {
    case DType::Q4_1:
      return codes_cols8<DType::Q4_1>(x, wc, y, ldy, m0, m1, n0, n1);
    case DType::Q5_0:
      return codes_cols8<DType::Q5_0>(x, wc, y, ldy, m0, m1, n0, n1);
    case DType::Q5_1:
      return codes_cols8<DType::Q5_1>(x, wc, y, ldy, m0, m1, n0, n1);
    default:
      return n0;
  }
}

}  // namespace eagle2::detail

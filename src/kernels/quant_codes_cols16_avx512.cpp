// AVX-512 VNNI kernel for the 32-element types of core/quant_codes.h (Q4_1, Q5_0, Q5_1, IQ4_NL)
// and several activation rows (verification batches, prompts): sixteen weight rows (output
// columns) sit in the sixteen int32 lanes of a register, as in quant_kcols16_avx512.cpp, so each
// block is transposed and unpacked once per chunk of up to kCodesRowChunk activation rows and
// vpdpbusd's lane sums are already each column's block sums. quant_codes_avx2.cpp's kernel, which
// both paths ran before, unpacks a block once per four rows and sums every (row, column) across
// the lanes.
//
// The order of quant_matmul.h is kept exactly: per block an exact int32 s per (row, column), one
// f32 term with the reference's operations ((d * dx) * float(s), then + (m * dx) * float(X) for
// Q4_1/Q5_1 with X the block's activation sum; no FMA) added into accumulator i % 8, then
// ((a0 + a1) + (a2 + a3)) + ((a4 + a5) + (a6 + a7)). vpdpbusd multiplies unsigned weight bytes by
// signed activations, so the codes go in as unsigned u with s = sum u * x - o * X:
//   Q4_1  u = nibble (0..15), o = 0          Q5_1  u = nibble | fifth bit << 4 (0..31), o = 0
//   Q5_0  u as Q5_1, o = 16 (the code is u - 16)
//   IQ4_NL u = table[nibble] + 128 (1..241), o = 128
// |sum u * x| <= 32 * 241 * 127 and |o * X| <= 128 * 32 * 127: exact in int32, and integer
// addition is associative, so s is the reference's.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "core/quant_blocks.h"
#include "core/quant_codes.h"
#include "kernels/avx512_transpose.h"  // also <immintrin.h>, with GCC 12's false warnings silenced
#include "kernels/quant_internal.h"

namespace eagle2::detail {
namespace {

// Activation rows that share one unpacked block (their accumulators, 8 vectors a row, stay in L1).
constexpr int64_t kCodesRowChunk = 16;

inline __m128i codes_load128(const char* p) {
  return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
}

// w[t] (t = 0..3) = dword t of the 16 bytes at p + n * rb, for n = 0..15 in lane n.
inline void codes_transpose16x4(const char* p, size_t rb, __m512i w[4]) {
  for (int k = 0; k < 4; ++k) {
    const __m256i lo = _mm256_inserti128_si256(_mm256_castsi128_si256(codes_load128(p + k * rb)),
                                               codes_load128(p + (k + 4) * rb), 1);
    const __m256i hi =
        _mm256_inserti128_si256(_mm256_castsi128_si256(codes_load128(p + (k + 8) * rb)),
                                codes_load128(p + (k + 12) * rb), 1);
    w[k] = _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1);
  }
  transpose4(w[0], w[1], w[2], w[3]);
}

template <DType DT>
using CodesBlock32 = std::conditional_t<
    DT == DType::Q4_1, BlockQ4_1,
    std::conditional_t<DT == DType::Q5_0, BlockQ5_0,
                       std::conditional_t<DT == DType::Q5_1, BlockQ5_1, BlockIQ4_NL>>>;

// The offset o of the file's top comment.
template <DType DT>
constexpr int32_t kCodesOffset = DT == DType::Q5_0     ? 16
                                 : DT == DType::IQ4_NL ? 128
                                                       : 0;

// One block of sixteen columns, unpacked: codes[k] = elements 4k .. 4k + 3 of each column as the
// unsigned bytes u, one column per lane; dw (and m for Q4_1/Q5_1) the f16 scales widened.
struct CodesUnpacked16 {
  __m512i codes[8];
  __m512 dw, m;
};

// Every block starts with its f16 d (and Q4_1/Q5_1 their f16 m), and ends with its sixteen
// nibble bytes; Q5_0's qh sits at byte 2, Q5_1's at byte 4. Both 16-byte loads per column stay
// inside the block (18 to 24 bytes).
template <DType DT>
void unpack_codes16(const char* blk, size_t rb, CodesUnpacked16* u) {
  using Block = CodesBlock32<DT>;
  static_assert(sizeof(Block) >= 16);
  __m512i head[4], qs[4];
  codes_transpose16x4(blk, rb, head);
  codes_transpose16x4(blk + offsetof(Block, qs), rb, qs);
  u->dw = _mm512_cvtph_ps(_mm512_cvtepi32_epi16(head[0]));
  if constexpr (DT == DType::Q4_1 || DT == DType::Q5_1)
    u->m = _mm512_cvtph_ps(_mm512_cvtepi32_epi16(_mm512_srli_epi32(head[0], 16)));
  else
    u->m = _mm512_setzero_ps();
  const __m512i m15 = _mm512_set1_epi8(0x0F);
  // Element 4k + b (k < 4) is the low nibble of qs byte 4k + b, element 16 + 4k + b the high one.
  for (int k = 0; k < 4; ++k) {
    u->codes[k] = _mm512_and_si512(qs[k], m15);
    u->codes[4 + k] = _mm512_and_si512(_mm512_srli_epi16(qs[k], 4), m15);
  }
  if constexpr (DT == DType::IQ4_NL) {
    // table[nibble] + 128 as an unsigned byte, by a byte shuffle within each 128-bit lane.
    alignas(16) uint8_t t[16];
    for (int j = 0; j < 16; ++j) t[j] = static_cast<uint8_t>(kIq4nlValues[j] + 128);
    const __m512i table =
        _mm512_broadcast_i32x4(_mm_load_si128(reinterpret_cast<const __m128i*>(t)));
    for (int k = 0; k < 8; ++k) u->codes[k] = _mm512_shuffle_epi8(table, u->codes[k]);
  } else if constexpr (DT == DType::Q5_0 || DT == DType::Q5_1) {
    // qh, the 32 fifth bits (bit e: element e): Q5_1's is dword 1; Q5_0's straddles dwords 0-1.
    const __m512i qh = DT == DType::Q5_1 ? head[1]
                                         : _mm512_or_si512(_mm512_srli_epi32(head[0], 16),
                                                           _mm512_slli_epi32(head[1], 16));
    // Bits 4k .. 4k + 3 of qh to bit 4 of bytes 0..3: one multiply places four non-overlapping
    // shifted copies (by 4, 11, 18, 25: bit b lands at 8b + 4), so no sum carries.
    const __m512i spread = _mm512_set1_epi32(0x02040810), m4 = _mm512_set1_epi32(0xF),
                  bit4 = _mm512_set1_epi8(0x10);
    for (int k = 0; k < 8; ++k) {
      const __m512i nib = _mm512_and_si512(_mm512_srli_epi32(qh, static_cast<unsigned>(4 * k)), m4);
      u->codes[k] =
          _mm512_or_si512(u->codes[k], _mm512_and_si512(_mm512_mullo_epi32(nib, spread), bit4));
    }
  }
}

inline __m512i codes_bcast(const int8_t* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return _mm512_set1_epi32(v);
}

// Block i of R activation rows against the unpacked columns: the step-2 terms per column.
template <DType DT, int R>
__attribute__((always_inline)) inline void codes_terms(const CodesUnpacked16& u,
                                                       const QuantRowsView& x, int64_t m, int64_t i,
                                                       __m512 out[R]) {
  const int64_t nblocks = x.cols / 32;
  __m512i s[R];
  for (int r = 0; r < R; ++r) s[r] = _mm512_setzero_si512();
  for (int k = 0; k < 8; ++k)
    for (int r = 0; r < R; ++r)
      s[r] = _mm512_dpbusd_epi32(s[r], u.codes[k],
                                 codes_bcast(x.qs + (m + r) * x.cols + i * 32 + 4 * k));
  for (int r = 0; r < R; ++r) {
    const int64_t at = (m + r) * nblocks + i;
    const __m512 vdx = _mm512_set1_ps(x.scale[at]);
    const int32_t X = x.sums[at];
    if constexpr (kCodesOffset<DT> != 0)
      s[r] = _mm512_sub_epi32(s[r], _mm512_set1_epi32(kCodesOffset<DT> * X));
    __m512 t = _mm512_mul_ps(_mm512_mul_ps(u.dw, vdx), _mm512_cvtepi32_ps(s[r]));
    if constexpr (codes_add_min(DT))
      t = _mm512_add_ps(
          t, _mm512_mul_ps(_mm512_mul_ps(u.m, vdx), _mm512_set1_ps(static_cast<float>(X))));
    out[r] = t;
  }
}

template <DType DT, int R>
inline void codes_rows_terms(const CodesUnpacked16& u, const QuantRowsView& x, int64_t m, int64_t i,
                             __m512* acc) {
  __m512 t[R];
  codes_terms<DT, R>(u, x, m, i, t);
  for (int r = 0; r < R; ++r) acc[8 * r] = _mm512_add_ps(acc[8 * r], t[r]);
}

template <DType DT>
int64_t codes_cols16(const QuantRowsView& x, const char* w, float* y, int64_t ldy, int64_t m0,
                     int64_t m1, int64_t n0, int64_t n1) {
  const int64_t blocks = x.cols / 32;
  const size_t rb = dtype_bytes(DT, x.cols);
  constexpr size_t block_bytes = sizeof(CodesBlock32<DT>);
  alignas(64) CodesUnpacked16 u;
  alignas(64) __m512 acc[kCodesRowChunk][8];
  const int64_t n_end = n0 + (n1 - n0) / 16 * 16;
  for (int64_t n = n0; n < n_end; n += 16) {
    const char* wn = w + static_cast<size_t>(n) * rb;
    for (int64_t mc = m0; mc < m1; mc += kCodesRowChunk) {
      const int64_t rows = std::min(kCodesRowChunk, m1 - mc);
      for (int64_t r = 0; r < rows; ++r)
        for (int a = 0; a < 8; ++a) acc[r][a] = _mm512_setzero_ps();
      for (int64_t i = 0; i < blocks; ++i) {
        unpack_codes16<DT>(wn + i * block_bytes, rb, &u);
        int64_t r = 0;
        for (; r + 4 <= rows; r += 4) codes_rows_terms<DT, 4>(u, x, mc + r, i, &acc[r][i % 8]);
        switch (rows - r) {
          case 3:
            codes_rows_terms<DT, 3>(u, x, mc + r, i, &acc[r][i % 8]);
            break;
          case 2:
            codes_rows_terms<DT, 2>(u, x, mc + r, i, &acc[r][i % 8]);
            break;
          case 1:
            codes_rows_terms<DT, 1>(u, x, mc + r, i, &acc[r][i % 8]);
            break;
          default:
            break;
        }
      }
      for (int64_t r = 0; r < rows; ++r) {
        const __m512* a = acc[r];
        const __m512 total =
            _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(a[0], a[1]), _mm512_add_ps(a[2], a[3])),
                          _mm512_add_ps(_mm512_add_ps(a[4], a[5]), _mm512_add_ps(a[6], a[7])));
        _mm512_storeu_ps(y + (mc + r) * ldy + n, total);
      }
    }
  }
  return n_end;
}

}  // namespace

int64_t quant_codes_cols16_range_avx512(DType dt, const QuantRowsView& x, const void* w, float* y,
                                        int64_t ldy, int64_t m0, int64_t m1, int64_t n0,
                                        int64_t n1) {
  const char* wc = static_cast<const char*>(w);
  switch (dt) {
    case DType::Q4_1:
      return codes_cols16<DType::Q4_1>(x, wc, y, ldy, m0, m1, n0, n1);
    case DType::Q5_0:
      return codes_cols16<DType::Q5_0>(x, wc, y, ldy, m0, m1, n0, n1);
    case DType::Q5_1:
      return codes_cols16<DType::Q5_1>(x, wc, y, ldy, m0, m1, n0, n1);
    case DType::IQ4_NL:
      return codes_cols16<DType::IQ4_NL>(x, wc, y, ldy, m0, m1, n0, n1);
    default:
      return n0;
  }
}

}  // namespace eagle2::detail

// AVX-512 VNNI kernels for quantized weights (quant_matmul.h gives the order; quant_tiles.h the
// loop). One 32-block's integer dot product is a single vpdpbusd (unsigned by signed bytes, four
// products summed into each int32 lane): Q4_0 nibbles are already unsigned; Q8_0 weights are made
// unsigned by flipping the sign bit (w + 128), and the offset times the activation sum is removed
// after the block sums are formed.
#include "kernels/avx512_sums.h"
#include "kernels/quant_tiles.h"

namespace eagle2::detail {
namespace {

struct VnniDot {
  struct Prepared {
    __m256i a;
  };
  template <DType DT, class Block>
  static Prepared prep(const Block* b) {
    if constexpr (DT == DType::Q4_0) {
      const __m128i q = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b->qs));
      const __m128i m4 = _mm_set1_epi8(0x0F);
      const __m128i lo = _mm_and_si128(q, m4), hi = _mm_and_si128(_mm_srli_epi16(q, 4), m4);
      return {_mm256_set_m128i(hi, lo)};
    } else {
      const __m256i w = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b->qs));
      return {_mm256_xor_si256(w, _mm256_set1_epi8(static_cast<char>(0x80)))};
    }
  }
  template <DType DT>
  static __m256i dot(const Prepared& w, __m256i x) {
    return _mm256_dpbusd_epi32(_mm256_setzero_si256(), w.a, x);
  }
  template <DType DT>
  static constexpr int offset_shift() {
    return DT == DType::Q4_0 ? 3 : 7;
  }
};

// Below this many activation rows the per-row kernel is faster: one row gains nothing from
// sharing the transposed block (M=1 2.2x slower, 2048x2048). From two rows on the rows-in-lanes
// kernel, which transposes each block once for up to twelve rows, wins (1 thread, thread CPU per
// row, 2026-12-07, 2-core Intel Xeon model 207: 512x2048 Q8_0 M=2 27.6 -> 18.3 us, M=4 30.0 ->
// 12.4; Q4_0 M=2 34.5 -> 15.0, M=4 33.2 -> 10.5; 2048x5632 Q8_0 M=2 348 -> 228, Q4_0 M=4 367 ->
// 120).
constexpr int64_t kRows16MinRows = 2;
// Q5_K takes quant_kcols16_avx512.cpp's kernel from one row: 1 thread, thread CPU per row,
// 2026-12-07, 2-core Intel Xeon model 207 (loaded), against quant_codes_avx2.cpp's: 512x2048
// M=1 145 -> 35 us, M=8 75 -> 9; 2048x5632 M=1 1617 -> 409, M=8 907 -> 101.
constexpr int64_t kKCols16MinRowsQ5K = 1;
// Q4_1/Q5_0/Q5_1/IQ4_NL take quant_codes_cols16_avx512.cpp's kernel from one row too (same
// conditions, against quant_codes_avx2.cpp's: 512x2048 M=1 Q4_1 77 -> 35 us, Q5_1 91 -> 57,
// IQ4_NL 67 -> 36; M=8 Q4_1 45 -> 11, Q5_0 43 -> 13, Q5_1 47 -> 14, IQ4_NL 39 -> 10; 2048x5632
// Q5_0 M=1 853 -> 694, M=8 488 -> 145).
constexpr int64_t kCodesCols16MinRows = 1;

}  // namespace

void quant_matmul_range_avx512(DType dt, const QuantRowsView& x, const void* w, float* y,
                               int64_t ldy, int64_t m0, int64_t m1, int64_t n0, int64_t n1) {
  switch (dt) {
    case DType::Q8_0:
    case DType::Q4_0: {
      // Enough rows: whole groups of sixteen columns take the rows-in-lanes kernel, the rest
      // this file's.
      const int64_t rest = m1 - m0 < kRows16MinRows
                               ? n0
                               : quant_rows16_range_avx512(dt, x, w, y, ldy, m0, m1, n0, n1);
      if (dt == DType::Q8_0) return range32<VnniDot, DType::Q8_0>(x, w, y, ldy, m0, m1, rest, n1);
      return range32<VnniDot, DType::Q4_0>(x, w, y, ldy, m0, m1, rest, n1);
    }
    case DType::Q4_K:
    case DType::Q6_K:
      return quant_kmatmul_range_avx512(dt, x, w, y, ldy, m0, m1, n0, n1);
    case DType::Q5_K: {
      // Enough rows: whole groups of sixteen columns take the columns-in-lanes kernel, the rest
      // the codes kernel (the same bits).
      const int64_t rest = m1 - m0 < kKCols16MinRowsQ5K
                               ? n0
                               : quant_kcols16_range_avx512(dt, x, w, y, ldy, m0, m1, n0, n1);
      return quant_codes_range_avx2(dt, x, w, y, ldy, m0, m1, rest, n1);
    }
    case DType::Q4_1:
    case DType::Q5_0:
    case DType::Q5_1:
    case DType::IQ4_NL: {
      const int64_t rest = m1 - m0 < kCodesCols16MinRows
                               ? n0
                               : quant_codes_cols16_range_avx512(dt, x, w, y, ldy, m0, m1, n0, n1);
      return quant_codes_range_avx2(dt, x, w, y, ldy, m0, m1, rest, n1);
    }
    default:
      // Q3_K, Q2_K, IQ4_XS (core/quant_codes.h): one AVX2 kernel for both paths.
      return quant_codes_range_avx2(dt, x, w, y, ldy, m0, m1, n0, n1);
  }
}

}  // namespace eagle2::detail

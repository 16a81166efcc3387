// AVX2 kernels for quantized weights (quant_matmul.h gives the order; quant_tiles.h the loop).
// One 32-block's integer dot product: maddubs multiplies unsigned by signed bytes into int16 pairs
// (no saturation: |w| <= 128 and |x| <= 127 keep each pair within 32512), madd sums them to int32.
#include "kernels/quant_tiles.h"

namespace eagle2::detail {
namespace {

struct Avx2Dot {
  struct Prepared {
    __m256i a, b;
  };
  // Q4_0: the nibbles as unsigned bytes in element order (the -8 comes back via the offset).
  // Q8_0: |w| and w, for the sign trick (maddubs(|w|, sign(x, w)) = w * x per byte).
  template <DType DT, class Block>
  static Prepared prep(const Block* b) {
    if constexpr (DT == DType::Q4_0) {
      const __m128i q = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b->qs));
      const __m128i m4 = _mm_set1_epi8(0x0F);
      const __m128i lo = _mm_and_si128(q, m4), hi = _mm_and_si128(_mm_srli_epi16(q, 4), m4);
      return {_mm256_set_m128i(hi, lo), _mm256_setzero_si256()};
    } else {
      const __m256i w = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b->qs));
      return {_mm256_sign_epi8(w, w), w};
    }
  }
  template <DType DT>
  static __m256i dot(const Prepared& w, __m256i x) {
    const __m256i ones = _mm256_set1_epi16(1);
    if constexpr (DT == DType::Q4_0)
      return _mm256_madd_epi16(_mm256_maddubs_epi16(w.a, x), ones);
    else
      return _mm256_madd_epi16(_mm256_maddubs_epi16(w.a, _mm256_sign_epi8(x, w.b)), ones);
  }
  // dot() = exact + (1 << shift) * sum(x); -1: no offset.
  template <DType DT>
  static constexpr int offset_shift() {
    return DT == DType::Q4_0 ? 3 : -1;
  }
};

// From this many activation rows on, Q5_K's whole groups of eight columns take
// quant_kcols8_avx2.cpp's kernel, which unpacks each superblock once for up to sixteen rows
// (quant_codes_avx2.cpp's, once per four, with a horizontal sum per row and column): from one
// row (1 thread, thread CPU per row, 2026-12-07, 2-core Intel Xeon model 207, loaded, 512x2048:
// M=1 145 -> 53 us, M=8 76 -> 16).
constexpr int64_t kKCols8MinRowsQ5K = 1;
// Q4_1/Q5_0/Q5_1 take quant_codes_cols8_avx2.cpp's kernel from one row too (same conditions,
// 512x2048, against quant_codes_avx2.cpp's: M=1 Q4_1 77 -> 45 us, Q5_0 79 -> 77, Q5_1 90 -> 76;
// M=8 45 -> 18, 42 -> 22, 47 -> 23).
constexpr int64_t kCodesCols8MinRows = 1;

}  // namespace

void quant_matmul_range_avx2(DType dt, const QuantRowsView& x, const void* w, float* y, int64_t ldy,
                             int64_t m0, int64_t m1, int64_t n0, int64_t n1) {
  switch (dt) {
    case DType::Q8_0:
      return range32<Avx2Dot, DType::Q8_0>(x, w, y, ldy, m0, m1, n0, n1);
    case DType::Q4_0:
      return range32<Avx2Dot, DType::Q4_0>(x, w, y, ldy, m0, m1, n0, n1);
    case DType::Q4_K:
    case DType::Q6_K:
      return quant_kmatmul_range_avx2(dt, x, w, y, ldy, m0, m1, n0, n1);
    case DType::Q5_K: {
      // Enough rows: whole groups of eight columns take the columns-in-lanes kernel, the rest
      // the codes kernel (the same bits).
      const int64_t rest = m1 - m0 < kKCols8MinRowsQ5K
                               ? n0
                               : quant_kcols8_range_avx2(dt, x, w, y, ldy, m0, m1, n0, n1);
      return quant_codes_range_avx2(dt, x, w, y, ldy, m0, m1, rest, n1);
    }
    case DType::Q4_1:
    case DType::Q5_0:
    case DType::Q5_1: {
      const int64_t rest = m1 - m0 < kCodesCols8MinRows
                               ? n0
                               : quant_codes_cols8_range_avx2(dt, x, w, y, ldy, m0, m1, n0, n1);
      return quant_codes_range_avx2(dt, x, w, y, ldy, m0, m1, rest, n1);
    }
    default:
      // IQ4_NL, Q3_K, Q2_K, IQ4_XS (core/quant_codes.h): no multi-row AVX2 kernel yet; one
      // per-column kernel for both paths.
      return quant_codes_range_avx2(dt, x, w, y, ldy, m0, m1, n0, n1);
  }
}

}  // namespace eagle2::detail

// AVX2 kernels for Q4_K and Q6_K weights (quant_matmul.h gives the order; quant_ktiles.h the
// loop). maddubs multiplies the weights' unsigned codes by the signed activation bytes into int16
// pairs; madd then multiplies each pair sum by its sub-block's int16 scale into int32.
//
// No step saturates or overflows: activation bytes are -127..127 (quantize_rows clamps them), so
// a maddubs pair is at most 2 * 15 * 127 = 3810 (Q4_K) or 2 * 63 * 127 = 16002 (Q6_K) < 32767, and
// a madd lane at most 2 * 63 * 3810 or 2 * 128 * 16002, far inside int32. Whole superblocks: the
// sum of |every product| is at most 256 * 63 * 15 * 127 (Q4_K s, 31M), 256 * 63 * 127 (Q4_K mins)
// and 256 * 128 * (63 + 32) * 127 (Q6_K, 396M), all below 2^31, whatever bytes the file holds
// (Q6_K scales may be any int8, -128 included; the Q4_K codes are 4 and 6 bits by construction).
#include "kernels/quant_ktiles.h"

namespace eagle2::detail {
namespace {

// The activation sums of sixteen elements, s[0..15], as sixteen int16. packs_epi32 interleaves
// its two sources per 128-bit lane, so int16 k holds the sum of group G[k], G =
// {0 1 2 3 8 9 10 11 | 4 5 6 7 12 13 14 15}; the weight-side vectors below are laid out to match
// (cheaper than undoing the interleave per row). |sum| <= 16 * 127 fits int16.
inline __m256i packed_sums(const int32_t* s) {
  return _mm256_packs_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(s)),
                            _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + 8)));
}

// Sixteen bytes: eight copies of byte a, then eight of byte a + 1 (a pshufb index).
inline __m128i pair_index(int a) {
  const int64_t ones = 0x0101010101010101;
  return _mm_set_epi64x(ones * (a + 1), ones * a);
}

struct Avx2K {
  // Q4_K. In each 64-element chunk c the low nibbles of qs[32c .. 32c + 31] are sub-block 2c and
  // the high nibbles sub-block 2c + 1, both in element order, so a chunk is one load and two masks.
  template <int R>
  static void q4k(const BlockQ4_K& b, const int8_t* const xq[R], const int32_t* const xs[R],
                  __m256i s[R], __m256i mins[R]) {
    const __m128i sm = q4k_scales_mins(b);
    // The eight scales as int16 in both 128-bit lanes, for the per-sub-block broadcasts below.
    const __m256i sc = _mm256_broadcastsi128_si256(_mm_cvtepu8_epi16(sm));
    // Each min twice (both 16-sums of its sub-block), in the packed_sums order: mins are bytes
    // 8-15.
    const __m256i mn16 = _mm256_cvtepu8_epi16(_mm_shuffle_epi8(
        sm, _mm_setr_epi8(8, 8, 9, 9, 12, 12, 13, 13, 10, 10, 11, 11, 14, 14, 15, 15)));
    const __m256i m4 = _mm256_set1_epi8(0x0F);
    __m256i acc[R];
    for (int r = 0; r < R; ++r) acc[r] = _mm256_setzero_si256();
    for (int c = 0; c < 4; ++c) {
      const __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.qs + 32 * c));
      const __m256i lo = _mm256_and_si256(q, m4),
                    hi = _mm256_and_si256(_mm256_srli_epi16(q, 4), m4);
      // int16 byte pair (2j, 2j + 1) is scale j.
      const __m256i sl = _mm256_shuffle_epi8(
          sc, _mm256_set1_epi16(static_cast<int16_t>(0x0202 * (2 * c) + 0x0100)));
      const __m256i sh = _mm256_shuffle_epi8(
          sc, _mm256_set1_epi16(static_cast<int16_t>(0x0202 * (2 * c + 1) + 0x0100)));
      for (int r = 0; r < R; ++r) {
        const __m256i xl = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xq[r] + 64 * c));
        const __m256i xh =
            _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xq[r] + 64 * c + 32));
        const __m256i pl = _mm256_madd_epi16(_mm256_maddubs_epi16(lo, xl), sl);
        const __m256i ph = _mm256_madd_epi16(_mm256_maddubs_epi16(hi, xh), sh);
        acc[r] = _mm256_add_epi32(acc[r], _mm256_add_epi32(pl, ph));
      }
    }
    for (int r = 0; r < R; ++r) {
      s[r] = acc[r];
      mins[r] = _mm256_madd_epi16(packed_sums(xs[r]), mn16);
    }
  }

  // Q6_K. Half h (elements 128h ..) keeps its low four bits in ql[64h .. 64h + 63] and its top two
  // in qh[32h .. 32h + 31]: for l < 32, element 128h + 32p + l is the low (p = 0, 1) or high
  // (p = 2, 3) nibble of ql[64h + 32(p % 2) + l] with bits 2p, 2p + 1 of qh[32h + l] above it. So
  // each 32-element part p is two masks and a shift of three loads. The codes are 0..63; the -32
  // comes back as -32 * scale * (sum of the 16 activations) per group, taken from the sums.
  template <int R>
  static void q6k(const BlockQ6_K& b, const int8_t* const xq[R], const int32_t* const xs[R],
                  __m256i s[R]) {
    const __m128i sc8 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b.scales));
    // -32 * scale per group in the packed_sums order (-32 * -128 = 4096 fits int16).
    const __m256i off16 = _mm256_mullo_epi16(
        _mm256_cvtepi8_epi16(_mm_shuffle_epi8(
            sc8, _mm_setr_epi8(0, 1, 2, 3, 8, 9, 10, 11, 4, 5, 6, 7, 12, 13, 14, 15))),
        _mm256_set1_epi16(-32));
    const __m256i m4 = _mm256_set1_epi8(0x0F), m30 = _mm256_set1_epi8(0x30);
    __m256i acc[R];
    for (int r = 0; r < R; ++r) acc[r] = _mm256_setzero_si256();
    for (int h = 0; h < 2; ++h) {
      const __m256i ql0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.ql + 64 * h));
      const __m256i ql1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.ql + 64 * h + 32));
      const __m256i qh = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.qh + 32 * h));
      // The 16-bit shifts carry bits across bytes; the masks keep only each byte's own bits.
      const __m256i q[4] = {_mm256_or_si256(_mm256_and_si256(ql0, m4),
                                            _mm256_and_si256(_mm256_slli_epi16(qh, 4), m30)),
                            _mm256_or_si256(_mm256_and_si256(ql1, m4),
                                            _mm256_and_si256(_mm256_slli_epi16(qh, 2), m30)),
                            _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql0, 4), m4),
                                            _mm256_and_si256(qh, m30)),
                            _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql1, 4), m4),
                                            _mm256_and_si256(_mm256_srli_epi16(qh, 2), m30))};
      for (int p = 0; p < 4; ++p) {
        const int part = 4 * h + p;  // elements 32 * part .., groups 2 * part and 2 * part + 1
        const __m256i scv = _mm256_cvtepi8_epi16(_mm_shuffle_epi8(sc8, pair_index(2 * part)));
        for (int r = 0; r < R; ++r) {
          const __m256i xv =
              _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xq[r] + 32 * part));
          acc[r] = _mm256_add_epi32(acc[r], _mm256_madd_epi16(_mm256_maddubs_epi16(q[p], xv), scv));
        }
      }
    }
    for (int r = 0; r < R; ++r)
      s[r] = _mm256_add_epi32(acc[r], _mm256_madd_epi16(packed_sums(xs[r]), off16));
  }
};

// From this many activation rows on, whole groups of eight columns take the columns-in-lanes
// kernel (quant_kcols8_avx2.cpp). Q6_K gains less there (its 16-element groups sum only two code
// dwords in int16 before a madd, against Q4_K's eight): at 2 and 3 rows the per-column kernel was
// 7-10 % faster, from 4 rows on the columns-in-lanes one (kbench, docs/QUANTIZATION.md).
constexpr int64_t kKCols8MinRowsQ4K = 2, kKCols8MinRowsQ6K = 4;

}  // namespace

void quant_kmatmul_range_avx2(DType dt, const QuantRowsView& x, const void* w, float* y,
                              int64_t ldy, int64_t m0, int64_t m1, int64_t n0, int64_t n1) {
  const int64_t min_rows = dt == DType::Q4_K ? kKCols8MinRowsQ4K : kKCols8MinRowsQ6K;
  const int64_t rest =
      m1 - m0 >= min_rows ? quant_kcols8_range_avx2(dt, x, w, y, ldy, m0, m1, n0, n1) : n0;
  krange_any<Avx2K>(dt, x, w, y, ldy, m0, m1, rest, n1);
}

}  // namespace eagle2::detail

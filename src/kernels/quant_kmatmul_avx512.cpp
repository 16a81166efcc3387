// AVX-512 VNNI kernels for Q4_K and Q6_K weights (quant_matmul.h gives the order; quant_ktiles.h
// the loop). 64 elements at a time: maddubs multiplies the weights' unsigned codes by the signed
// activation bytes into int16 pairs, and vpdpwssd multiplies each pair sum by its group's int16
// scale and adds it into the int32 accumulator in the same instruction. The 16 accumulator lanes
// are folded to 8 for the shared tile loop. The bounds of quant_kmatmul_avx2.cpp hold unchanged:
// the products are the same ones, only grouped differently, and vpdpwssd wraps (never saturates).
#include "kernels/avx512_sums.h"  // <immintrin.h> with GCC 12's false warnings silenced
#include "kernels/quant_ktiles.h"

namespace eagle2::detail {
namespace {

// Index vectors for vpermw: int16 lane l of row k takes source lane k * (32 / run) + l / run, i.e.
// runs of `run` equal lanes: run 16 broadcasts scales 2k, 2k + 1 over the two 32-element
// sub-blocks of a Q4_K chunk; run 8 broadcasts Q6_K group scales 4k .. 4k + 3 over 64 elements.
struct RunIndex {
  alignas(64) int16_t lane[4][32];
};
constexpr RunIndex make_runs(int run) {
  RunIndex t{};
  for (int k = 0; k < 4; ++k)
    for (int l = 0; l < 32; ++l) t.lane[k][l] = static_cast<int16_t>(k * (32 / run) + l / run);
  return t;
}
constexpr RunIndex kRuns16 = make_runs(16), kRuns8 = make_runs(8);

inline __m512i runs(const RunIndex& t, int k) {
  return _mm512_load_si512(t.lane[k]);
}

// The sixteen per-16 activation sums as int16 in group order (|sum| <= 16 * 127: vpmovdw's
// truncation is exact).
inline __m256i sums16(const int32_t* s) {
  return _mm512_cvtepi32_epi16(_mm512_loadu_si512(s));
}

inline __m256i fold(__m512i v) {
  return _mm256_add_epi32(_mm512_castsi512_si256(v), _mm512_extracti64x4_epi64(v, 1));
}

// [a | b]: two 256-bit halves as one 512-bit vector.
inline __m512i join(__m256i a, __m256i b) {
  return _mm512_inserti64x4(_mm512_zextsi256_si512(a), b, 1);
}

struct VnniK {
  // Q4_K. Chunk c (elements 64c ..) is qs[32c .. 32c + 31]: low nibbles are sub-block 2c, high
  // nibbles 2c + 1, so [low | high] lines up with 64 consecutive activations.
  template <int R>
  static void q4k(const BlockQ4_K& b, const int8_t* const xq[R], const int32_t* const xs[R],
                  __m256i s[R], __m256i mins[R]) {
    const __m128i sm = q4k_scales_mins(b);
    const __m512i sc = _mm512_zextsi256_si512(_mm256_cvtepu8_epi16(sm));  // int16: 8 scales, 8 mins
    // Each min twice, against the two 16-sums of its sub-block (mins are bytes 8-15).
    const __m256i mn16 = _mm256_cvtepu8_epi16(_mm_shuffle_epi8(
        sm, _mm_setr_epi8(8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13, 14, 14, 15, 15)));
    const __m512i m4 = _mm512_set1_epi8(0x0F);
    __m512i acc[R];
    for (int r = 0; r < R; ++r) acc[r] = _mm512_setzero_si512();
    for (int c = 0; c < 4; ++c) {
      const __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.qs + 32 * c));
      const __m512i qv = _mm512_and_si512(join(q, _mm256_srli_epi16(q, 4)), m4);
      const __m512i scv = _mm512_permutexvar_epi16(runs(kRuns16, c), sc);
      for (int r = 0; r < R; ++r) {
        const __m512i xv = _mm512_loadu_si512(xq[r] + 64 * c);
        acc[r] = _mm512_dpwssd_epi32(acc[r], _mm512_maddubs_epi16(qv, xv), scv);
      }
    }
    for (int r = 0; r < R; ++r) {
      s[r] = fold(acc[r]);
      mins[r] = _mm256_madd_epi16(sums16(xs[r]), mn16);
    }
  }

  // Q6_K. Half h (elements 128h ..): ql[64h .. 64h + 63] holds the low four bits of parts 0 and 1
  // in its low nibbles and of parts 2 and 3 in its high nibbles (part p = elements 128h + 32p ..);
  // qh[32h + l] holds the top two bits of element 128h + 32p + l at bits 2p, 2p + 1. With
  // [qh | qh >> 2] those top bits sit at bits 0-1 (parts 0, 1) and 4-5 (parts 2, 3) of each half,
  // so parts 0-1 and 2-3 are each one 64-byte vector against 64 consecutive activations. The codes
  // are 0..63; the -32 comes back as -32 * scale * (sum of the 16 activations) per group.
  template <int R>
  static void q6k(const BlockQ6_K& b, const int8_t* const xq[R], const int32_t* const xs[R],
                  __m256i s[R]) {
    const __m256i sc16 =
        _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b.scales)));
    const __m512i sc = _mm512_zextsi256_si512(sc16);
    const __m256i off16 =
        _mm256_mullo_epi16(sc16, _mm256_set1_epi16(-32));  // -32 * -128 fits int16
    const __m512i m4 = _mm512_set1_epi8(0x0F), m30 = _mm512_set1_epi8(0x30);
    __m512i acc[R];
    for (int r = 0; r < R; ++r) acc[r] = _mm512_setzero_si512();
    for (int h = 0; h < 2; ++h) {
      const __m512i ql = _mm512_loadu_si512(b.ql + 64 * h);
      const __m256i qh = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.qh + 32 * h));
      const __m512i qhv = join(qh, _mm256_srli_epi16(qh, 2));
      // The 16-bit shifts carry bits across bytes; the masks keep only each byte's own bits.
      const __m512i q01 = _mm512_or_si512(_mm512_and_si512(ql, m4),
                                          _mm512_and_si512(_mm512_slli_epi16(qhv, 4), m30));
      const __m512i q23 = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(ql, 4), m4),
                                          _mm512_and_si512(qhv, m30));
      const __m512i s01 = _mm512_permutexvar_epi16(runs(kRuns8, 2 * h), sc);
      const __m512i s23 = _mm512_permutexvar_epi16(runs(kRuns8, 2 * h + 1), sc);
      for (int r = 0; r < R; ++r) {
        const __m512i x01 = _mm512_loadu_si512(xq[r] + 128 * h);
        const __m512i x23 = _mm512_loadu_si512(xq[r] + 128 * h + 64);
        acc[r] = _mm512_dpwssd_epi32(acc[r], _mm512_maddubs_epi16(q01, x01), s01);
        acc[r] = _mm512_dpwssd_epi32(acc[r], _mm512_maddubs_epi16(q23, x23), s23);
      }
    }
    for (int r = 0; r < R; ++r) s[r] = _mm256_dpwssd_epi32(fold(acc[r]), sums16(xs[r]), off16);
  }
};

// From this many activation rows on, whole groups of sixteen columns take the columns-in-lanes
// kernel (quant_kcols16_avx512.cpp). Its per-superblock transpose is cheap for Q4_K, where it beats
// this file's kernel even on one row (1 thread, thread CPU time: 512 x 2048 24 against 39 us,
// 2048 x 5632 297 against 431 us). Q6_K's unpacking costs more; with the vpternlogd codes it wins
// from two rows while the weights sit in cache (512 x 2048, M = 1: 36.5 against 35.7 us, M = 2:
// 44 against 49, M = 3: 52 against 59), but on weights streamed from memory its sixteen row
// streams lose at one and two rows (M = 1 / 2 / 3, N x K = 2048 x 5632: 540 / 612 / 698 against
// 425 / 581 / 709 us; 5632 x 2048: 562 / 645 / 743 against 449 / 583 / 704; 32000 x 2048:
// 3318 / 3898 / 4519 against 2894 / 3491 / 5438). A forward streams its weights, so Q6_K starts
// at three rows. (2-core Intel Xeon model 207, best of 3 alternated kbench runs, 2026-12-07.)
// These thresholds are for the row layout (EAGLE2_WEIGHTS=mmap); grouped matrices take the
// columns-in-lanes kernel at every M (a column range not in whole groups reaches this function
// one de-interleaved row at a time).
constexpr int64_t kKCols16MinRowsQ4K = 1, kKCols16MinRowsQ6K = 3;

}  // namespace

void quant_kmatmul_range_avx512(DType dt, const QuantRowsView& x, const void* w, float* y,
                                int64_t ldy, int64_t m0, int64_t m1, int64_t n0, int64_t n1) {
  const int64_t min_rows = dt == DType::Q4_K ? kKCols16MinRowsQ4K : kKCols16MinRowsQ6K;
  const int64_t rest =
      m1 - m0 < min_rows ? n0 : quant_kcols16_range_avx512(dt, x, w, y, ldy, m0, m1, n0, n1);
  krange_any<VnniK>(dt, x, w, y, ldy, m0, m1, rest, n1);
}

}  // namespace eagle2::detail

// Horizontal sums shared by the AVX-512 kernels (matmul, attention). Include this ONLY from files
// compiled for AVX-512 (*_avx512.cpp): its functions use AVX-512 instructions. They sit in an
// unnamed namespace, so each such file gets its own copy and no non-AVX-512 code can ever be
// linked to them (the hazard matmul_internal.h describes for inline functions in shared headers).
#pragma once

// GCC 12 reports its own _mm512_undefined_*() placeholders inside the intrinsics as uninitialized
// (GCC PR105593); the diagnostic is silenced for the header's lines only.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop

namespace eagle2::detail {
namespace {

// Fixed pairwise tree: lanes l and l + 8, then l and l + 4, l and l + 2, l and l + 1 (l counted
// within what is left), so the result never depends on the compiler's choice of a reduction
// sequence. This is the reduction order of every AVX-512 dot product (matmul, attention scores).
inline float hsum(__m512 v) {
  const __m256 lo8 = _mm512_castps512_ps256(v);
  const __m256 hi8 = _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1));
  const __m256 s8 = _mm256_add_ps(lo8, hi8);
  const __m128 s4 = _mm_add_ps(_mm256_castps256_ps128(s8), _mm256_extractf128_ps(s8, 1));
  const __m128 s2 = _mm_add_ps(s4, _mm_movehl_ps(s4, s4));
  const __m128 s1 = _mm_add_ss(s2, _mm_movehdup_ps(s2));
  return _mm_cvtss_f32(s1);
}

// Lane j of the result is hsum(a[j]), bit for bit: the same additions as hsum(), with the 16
// vectors carried through the levels side by side (tested against the one-key dot in
// test_attention).
inline __m512 hsum16(const __m512* a) {
  __m512 c[8];  // c[p]: level-1 sums (8 floats) of a[2p] then a[2p + 1]
  for (int p = 0; p < 8; ++p)
    c[p] = _mm512_add_ps(_mm512_shuffle_f32x4(a[2 * p], a[2 * p + 1], _MM_SHUFFLE(1, 0, 1, 0)),
                         _mm512_shuffle_f32x4(a[2 * p], a[2 * p + 1], _MM_SHUFFLE(3, 2, 3, 2)));
  __m512 d[4];  // d[r]: level-2 sums (4 floats) of a[4r .. 4r + 3], one per 128-bit lane
  for (int r = 0; r < 4; ++r)
    d[r] = _mm512_add_ps(_mm512_shuffle_f32x4(c[2 * r], c[2 * r + 1], _MM_SHUFFLE(2, 0, 2, 0)),
                         _mm512_shuffle_f32x4(c[2 * r], c[2 * r + 1], _MM_SHUFFLE(3, 1, 3, 1)));
  __m512 e[2];  // e[t], 128-bit lane L: level-3 pairs of a[8t + L], then of a[8t + 4 + L]
  for (int t = 0; t < 2; ++t)
    e[t] = _mm512_add_ps(_mm512_shuffle_ps(d[2 * t], d[2 * t + 1], _MM_SHUFFLE(1, 0, 1, 0)),
                         _mm512_shuffle_ps(d[2 * t], d[2 * t + 1], _MM_SHUFFLE(3, 2, 3, 2)));
  // f, 128-bit lane L: the totals of a[L], a[4 + L], a[8 + L], a[12 + L].
  const __m512 f = _mm512_add_ps(_mm512_shuffle_ps(e[0], e[1], _MM_SHUFFLE(2, 0, 2, 0)),
                                 _mm512_shuffle_ps(e[0], e[1], _MM_SHUFFLE(3, 1, 3, 1)));
  const __m512i order = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
  return _mm512_permutexvar_ps(order, f);
}

// The 16 double lanes lo (0-7) and hi (8-15) summed: lane with lane + 8, then the halving tree.
inline double hsum_pd(__m512d lo, __m512d hi) {
  const __m512d s8 = _mm512_add_pd(lo, hi);
  const __m256d s4 = _mm256_add_pd(_mm512_castpd512_pd256(s8), _mm512_extractf64x4_pd(s8, 1));
  const __m128d s2 = _mm_add_pd(_mm256_castpd256_pd128(s4), _mm256_extractf128_pd(s4, 1));
  return _mm_cvtsd_f64(_mm_add_sd(s2, _mm_unpackhi_pd(s2, s2)));
}

}  // namespace
}  // namespace eagle2::detail

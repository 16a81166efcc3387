// The dword transpose shared by the AVX-512 kernels that put sixteen weight rows in the lanes of
// a register (quant_rows16_avx512.cpp, quant_kcols16_avx512.cpp). Include this ONLY from files
// compiled for AVX-512: like avx512_sums.h it sits in an unnamed namespace, so each such file gets
// its own copy and no non-AVX-512 code can be linked to it (see matmul_internal.h).
#pragma once

#include "kernels/avx512_sums.h"  // <immintrin.h>, with GCC 12's false warnings silenced

namespace eagle2::detail {
namespace {

// 4x4 transposes of dwords inside each 128-bit lane of a0..a3.
inline void transpose4(__m512i& a0, __m512i& a1, __m512i& a2, __m512i& a3) {
  const __m512i t0 = _mm512_unpacklo_epi32(a0, a1), t1 = _mm512_unpackhi_epi32(a0, a1);
  const __m512i t2 = _mm512_unpacklo_epi32(a2, a3), t3 = _mm512_unpackhi_epi32(a2, a3);
  a0 = _mm512_unpacklo_epi64(t0, t2);
  a1 = _mm512_unpackhi_epi64(t0, t2);
  a2 = _mm512_unpacklo_epi64(t1, t3);
  a3 = _mm512_unpackhi_epi64(t1, t3);
}

}  // namespace
}  // namespace eagle2::detail

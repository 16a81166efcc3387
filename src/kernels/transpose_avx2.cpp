// AVX2 transpose of 32-bit elements (kernels/transpose.h): 8 x 8 blocks in registers (transpose.cpp
// moves the edges element by element). No inline functions from shared headers here (see
// matmul_internal.h).
#include <immintrin.h>

#include <cstdint>

#include "kernels/transpose.h"

namespace eagle2::detail {

namespace {

// One 8 x 8 block: 8 row loads, three rounds of shuffles, 8 row stores.
inline void block8(const uint32_t* src, int64_t lds, uint32_t* dst, int64_t ldd) {
  __m256 r[8];
  for (int i = 0; i < 8; ++i) r[i] = _mm256_loadu_ps(reinterpret_cast<const float*>(src + i * lds));
  __m256 t[8];
  for (int i = 0; i < 8; i += 2) {
    t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);      // a0 b0 a1 b1 | a4 b4 a5 b5
    t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);  // a2 b2 a3 b3 | a6 b6 a7 b7
  }
  __m256 u[8];
  for (int i = 0; i < 8; i += 4) {
    u[i] = _mm256_shuffle_ps(t[i], t[i + 2], _MM_SHUFFLE(1, 0, 1, 0));      // a0 b0 c0 d0 | a4..d4
    u[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], _MM_SHUFFLE(3, 2, 3, 2));  // a1 b1 c1 d1 | a5..d5
    u[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], _MM_SHUFFLE(1, 0, 1, 0));  // column 2 | 6
    u[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], _MM_SHUFFLE(3, 2, 3, 2));  // column 3 | 7
  }
  for (int i = 0; i < 4; ++i) {
    // u[i]: rows 0-3 of columns i (low half) and i + 4 (high half); u[i + 4]: rows 4-7.
    _mm256_storeu_ps(reinterpret_cast<float*>(dst + i * ldd),
                     _mm256_permute2f128_ps(u[i], u[i + 4], 0x20));
    _mm256_storeu_ps(reinterpret_cast<float*>(dst + (i + 4) * ldd),
                     _mm256_permute2f128_ps(u[i], u[i + 4], 0x31));
  }
}

}  // namespace

void transpose32_blocks_avx2(const uint32_t* src, int64_t lds, int64_t rows, int64_t cols,
                             uint32_t* dst, int64_t ldd) {
  for (int64_t r = 0; r < rows; r += 8)
    for (int64_t c = 0; c < cols; c += 8) block8(src + r * lds + c, lds, dst + c * ldd + r, ldd);
}

}  // namespace eagle2::detail

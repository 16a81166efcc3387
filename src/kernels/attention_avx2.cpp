// AVX2 weighted sum of values for attention_head (see attention_internal.h for the order).
// Up to 8 vectors (64 floats) of the output are kept in registers while all slots stream by, so
// each value row is read once per 64 dims. No inline functions from shared headers here.
#include <immintrin.h>

#include <cstdint>

#include "kernels/attention_internal.h"

namespace eagle2::detail {

namespace {

inline __m256i lane_mask(int64_t lanes) {  // the first `lanes` (1..8) lanes set
  const __m256i idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(lanes)), idx);
}

// The storage row of logical slot `slot` (attention_internal.h); a private copy per ISA file.
inline int64_t row_of(const int32_t* table, int shift, int64_t slot) {
  if (table == nullptr) return slot;
  return (static_cast<int64_t>(table[slot >> shift]) << shift) | (slot & ((int64_t{1} << shift) - 1));
}

}  // namespace

void attention_values_avx2(const float* v, int64_t stride, const int32_t* table, int shift,
                           int64_t n_context, const int32_t* extra, int64_t n_extra, const float* p,
                           float inv_sum, int64_t head_dim, float* out) {
  constexpr int kVecs = 8;
  const int64_t n = n_context + n_extra;
  for (int64_t d0 = 0; d0 < head_dim; d0 += 8 * kVecs) {
    const int64_t width = head_dim - d0 < 8 * kVecs ? head_dim - d0 : 8 * kVecs;
    const int nv = static_cast<int>((width + 7) / 8);
    const __m256i last_mask = lane_mask(width - 8 * (nv - 1));
    const __m256i full = _mm256_set1_epi32(-1);
    __m256 acc[kVecs];
    for (int i = 0; i < kVecs; ++i) acc[i] = _mm256_setzero_ps();
    for (int64_t j = 0; j < n; ++j) {
      const int64_t slot = j < n_context ? j : extra[j - n_context];
      const float* vj = v + row_of(table, shift, slot) * stride + d0;
      const __m256 pj = _mm256_set1_ps(p[j]);
      for (int i = 0; i < kVecs; ++i) {
        if (i >= nv) break;
        const __m256i m = i == nv - 1 ? last_mask : full;
        acc[i] = _mm256_fmadd_ps(pj, _mm256_maskload_ps(vj + 8 * i, m), acc[i]);
      }
    }
    const __m256 inv = _mm256_set1_ps(inv_sum);
    for (int i = 0; i < nv; ++i) {
      const __m256i m = i == nv - 1 ? last_mask : full;
      _mm256_maskstore_ps(out + d0 + 8 * i, m, _mm256_mul_ps(acc[i], inv));
    }
  }
}

}  // namespace eagle2::detail

// AVX-512 weighted sum of values for attention_head (see attention_internal.h for the order).
// Up to 8 vectors (128 floats) of the output are kept in registers while all slots stream by, so
// each value row is read once per 128 dims. No inline functions from shared headers here.
// GCC 12 reports its own _mm512_undefined_*() placeholders inside the intrinsics as uninitialized
// (GCC PR105593); the diagnostic is silenced for the header's lines only.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop

#include <cstdint>

#include "kernels/attention_internal.h"

namespace eagle2::detail {

void attention_values_avx512(const float* v, int64_t stride, int64_t n_context,
                             const int32_t* extra, int64_t n_extra, const float* p, float inv_sum,
                             int64_t head_dim, float* out) {
  constexpr int kVecs = 8;
  const int64_t n = n_context + n_extra;
  for (int64_t d0 = 0; d0 < head_dim; d0 += 16 * kVecs) {
    const int64_t width = head_dim - d0 < 16 * kVecs ? head_dim - d0 : 16 * kVecs;
    const int nv = static_cast<int>((width + 15) / 16);
    const int64_t last = width - 16 * (nv - 1);  // 1..16 lanes in the last vector
    const __mmask16 last_mask = static_cast<__mmask16>(last == 16 ? 0xffffu : (1u << last) - 1u);
    __m512 acc[kVecs];
    for (int i = 0; i < kVecs; ++i) acc[i] = _mm512_setzero_ps();
    for (int64_t j = 0; j < n; ++j) {
      const int64_t slot = j < n_context ? j : extra[j - n_context];
      const float* vj = v + slot * stride + d0;
      const __m512 pj = _mm512_set1_ps(p[j]);
      for (int i = 0; i < kVecs; ++i) {
        if (i >= nv) break;
        const __mmask16 m = i == nv - 1 ? last_mask : static_cast<__mmask16>(0xffffu);
        acc[i] = _mm512_fmadd_ps(pj, _mm512_maskz_loadu_ps(m, vj + 16 * i), acc[i]);
      }
    }
    const __m512 inv = _mm512_set1_ps(inv_sum);
    for (int i = 0; i < nv; ++i) {
      const __mmask16 m = i == nv - 1 ? last_mask : static_cast<__mmask16>(0xffffu);
      _mm512_mask_storeu_ps(out + d0 + 16 * i, m, _mm512_mul_ps(acc[i], inv));
    }
  }
}

}  // namespace eagle2::detail

// AVX-512 activation quantization (quant_rows.cpp is the reference): the same operations on 16
// lanes, so the same bytes. Every step is exact or one IEEE operation per element as in the
// reference: the block maxima (max is exact in any order), the scale's division, x * id, and the
// conversion, which rounds to nearest even as the reference's 1.5 * 2^23 trick does. Why it
// matters: the reference runs on one thread before every quantized matmul, and at 8 rows it took
// a tenth of a verification forward of the bundled model.
//
// NaN: vmaxps returns its second operand when either is NaN, so max(|x|, acc) skips a NaN element
// as the reference's std::max(acc, |x|) does; a NaN product becomes code 0 as in the reference.
#include <cstdint>

#include "core/dtype.h"
#include "kernels/avx512_sums.h"  // also <immintrin.h>, with GCC 12's false warnings silenced
#include "kernels/quant_internal.h"

namespace eagle2::detail {
namespace {

inline __m512 abs_ps(__m512 v) {
  return _mm512_castsi512_ps(
      _mm512_and_si512(_mm512_castps_si512(v), _mm512_set1_epi32(0x7fffffff)));
}

// Nearest-even int32 of v clamped to [-127, 127]; NaN -> 0.
inline __m512i to_q(__m512 v) {
  const __mmask16 ordered = _mm512_cmp_ps_mask(v, v, _CMP_ORD_Q);
  const __m512 c = _mm512_min_ps(_mm512_max_ps(v, _mm512_set1_ps(-127.0f)), _mm512_set1_ps(127.0f));
  return _mm512_maskz_cvt_roundps_epi32(ordered, c, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}

inline void store_q(int8_t* q, __m512i v) {
  _mm_storeu_si128(reinterpret_cast<__m128i*>(q), _mm512_cvtepi32_epi8(v));
}

}  // namespace

void quantize_row_q8_0_avx512(const float* x, int64_t K, int8_t* q, float* scale, int32_t* sums) {
  for (int64_t b = 0; b < K / 32; ++b, x += 32, q += 32) {
    const __m512 x0 = _mm512_loadu_ps(x), x1 = _mm512_loadu_ps(x + 16);
    const __m512 m = _mm512_max_ps(abs_ps(x1), _mm512_max_ps(abs_ps(x0), _mm512_setzero_ps()));
    const float amax = _mm512_reduce_max_ps(m);
    const float d = amax / 127.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    scale[b] = f16_to_f32(f32_to_f16(d));
    const __m512 vid = _mm512_set1_ps(id);
    const __m512i q0 = to_q(_mm512_mul_ps(x0, vid)), q1 = to_q(_mm512_mul_ps(x1, vid));
    store_q(q, q0);
    store_q(q + 16, q1);
    sums[b] = _mm512_reduce_add_epi32(_mm512_add_epi32(q0, q1));
  }
}

void quantize_row_q8_k_avx512(const float* x, int64_t K, int8_t* q, float* scale, int32_t* sums) {
  for (int64_t b = 0; b < K / 256; ++b, x += 256, q += 256, sums += 16) {
    __m512 m = _mm512_setzero_ps();
    for (int j = 0; j < 256; j += 16) m = _mm512_max_ps(abs_ps(_mm512_loadu_ps(x + j)), m);
    const float amax = _mm512_reduce_max_ps(m);
    if (amax == 0.0f) {
      scale[b] = 0.0f;
      for (int j = 0; j < 256; j += 64) _mm512_storeu_si512(q + j, _mm512_setzero_si512());
      for (int g = 0; g < 16; ++g) sums[g] = 0;
      continue;
    }
    // The reference keeps the first element of largest magnitude (its sign matters).
    const __m512 va = _mm512_set1_ps(amax);
    float max = 0.0f;
    for (int j = 0; j < 256; j += 16) {
      const __mmask16 hit = _mm512_cmp_ps_mask(abs_ps(_mm512_loadu_ps(x + j)), va, _CMP_EQ_OQ);
      if (hit != 0) {
        max = x[j + __builtin_ctz(hit)];
        break;
      }
    }
    const float iscale = -127.0f / max;
    const __m512 vis = _mm512_set1_ps(iscale);
    for (int g = 0; g < 16; ++g) {
      const __m512i v = to_q(_mm512_mul_ps(vis, _mm512_loadu_ps(x + 16 * g)));
      store_q(q + 16 * g, v);
      sums[g] = _mm512_reduce_add_epi32(v);
    }
    scale[b] = 1.0f / iscale;
  }
}

}  // namespace eagle2::detail

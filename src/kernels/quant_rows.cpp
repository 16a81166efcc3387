// Activation quantization for the quantized-weight matmul (quant_matmul.h).
#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/error.h"
#include "kernels/quant_internal.h"
#include "kernels/quant_matmul.h"

namespace eagle2 {

namespace {

// Round to nearest, ties to even (ggml's nearest_int does the same), saturated to -127..127; NaN
// (from a non-finite activation) becomes 0. Clamping first keeps the value within the range
// where adding 1.5 * 2^23 leaves round-half-even(v) in the low mantissa bits, which is exact and
// much cheaper than a libm call (this runs on one thread while the others wait).
inline int8_t to_q(float v) {
  if (!(v == v)) return 0;
  v = std::min(std::max(v, -127.0f), 127.0f);
  const float r = v + 12582912.0f;
  int32_t bits;
  std::memcpy(&bits, &r, 4);
  return static_cast<int8_t>((bits & 0x007fffff) - 0x00400000);
}

void quantize_row_q8_0(const float* x, int64_t K, int8_t* q, float* scale) {
  for (int64_t b = 0; b < K / 32; ++b, x += 32, q += 32) {
    float amax = 0.0f;
    for (int j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(x[j]));
    const float d = amax / 127.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    // The dot products read the scale as ggml stores it in block_q8_0: rounded to f16.
    scale[b] = f16_to_f32(f32_to_f16(d));
    for (int j = 0; j < 32; ++j) q[j] = to_q(x[j] * id);
  }
}

void quantize_row_q8_k(const float* x, int64_t K, int8_t* q, float* scale) {
  for (int64_t b = 0; b < K / 256; ++b, x += 256, q += 256) {
    float amax = 0.0f, max = 0.0f;
    for (int j = 0; j < 256; ++j)
      if (std::fabs(x[j]) > amax) {
        amax = std::fabs(x[j]);
        max = x[j];
      }
    if (amax == 0.0f) {
      scale[b] = 0.0f;
      std::fill(q, q + 256, int8_t{0});
      continue;
    }
    const float iscale = -127.0f / max;
    for (int j = 0; j < 256; ++j) q[j] = to_q(iscale * x[j]);
    scale[b] = 1.0f / iscale;
  }
}

}  // namespace

void quantize_rows(DType weights, const float* x, int64_t M, int64_t K, QuantizedRows* q,
                   KernelPath path) {
  if (!is_block_dtype(weights))
    fail("quantize_rows: ", dtype_name(weights), " is not a block type");
  const int64_t wblock = dtype_block_elements(weights);
  if (K % wblock != 0)
    fail("quantize_rows: K=", K, " is not a whole number of ", dtype_name(weights), " blocks");
  const bool k_quant = wblock == 256;  // Q8_K activations for every superblock type
  q->rows = M;
  q->cols = K;
  q->block = k_quant ? 256 : 32;
  const size_t n = static_cast<size_t>(M * K);
  if (q->qs.size() < n) q->qs.resize(n);
  if (q->scale.size() < n / static_cast<size_t>(q->block))
    q->scale.resize(n / static_cast<size_t>(q->block));
  q->sum_group = k_quant ? 16 : 32;
  const int64_t groups = K / q->sum_group;
  if (q->sums.size() < static_cast<size_t>(M * groups))
    q->sums.resize(static_cast<size_t>(M * groups));
  for (int64_t m = 0; m < M; ++m) {
    int8_t* qs = q->qs.data() + m * K;
    float* sc = q->scale.data() + m * (K / q->block);
    if (path == KernelPath::Avx512) {
      int32_t* sums = q->sums.data() + m * groups;
      if (k_quant)
        detail::quantize_row_q8_k_avx512(x + m * K, K, qs, sc, sums);
      else
        detail::quantize_row_q8_0_avx512(x + m * K, K, qs, sc, sums);
      continue;
    }
    if (k_quant)
      quantize_row_q8_k(x + m * K, K, qs, sc);
    else
      quantize_row_q8_0(x + m * K, K, qs, sc);
    int32_t* sums = q->sums.data() + m * groups;
    for (int64_t g = 0; g < groups; ++g) {
      int32_t s = 0;
      for (int64_t j = 0; j < q->sum_group; ++j) s += qs[g * q->sum_group + j];
      sums[g] = s;
    }
  }
}

}  // namespace eagle2

#include "train/attention_blocks.h"

#include <algorithm>

#include "core/tensor.h"
#include "kernels/matmul.h"

namespace eagle2::train {

void gather_head(float* dst, const float* src, int64_t T, int64_t width, int64_t col, int64_t hd) {
  for (int64_t t = 0; t < T; ++t)
    for (int64_t i = 0; i < hd; ++i) dst[t * hd + i] = src[t * width + col + i];
}

void scatter_add_head(float* dst, const float* src, int64_t T, int64_t width, int64_t col,
                      int64_t hd) {
  for (int64_t t = 0; t < T; ++t)
    for (int64_t i = 0; i < hd; ++i) dst[t * width + col + i] += src[t * hd + i];
}

void causal_scores(float* out, const float* A, const float* B, int64_t T, int64_t hd, float scale,
                   float* tmp, ThreadPool& pool) {
  for (int64_t t0 = 0; t0 < T; t0 += kAttentionBlock) {
    const int64_t t1 = std::min(T, t0 + kAttentionBlock), r = t1 - t0;
    matmul(A + t0 * hd, r, Matrix{DType::F32, t1, hd, B}, tmp, pool);
    for (int64_t t = t0; t < t1; ++t) {
      float* row = out + t * T;
      const float* src = tmp + (t - t0) * t1;
      for (int64_t j = 0; j <= t; ++j) row[j] = src[j] * scale;
      for (int64_t j = t + 1; j < T; ++j) row[j] = 0.0f;
    }
  }
}

}  // namespace eagle2::train

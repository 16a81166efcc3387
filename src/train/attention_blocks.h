// Building blocks shared by the training attentions (train/attention.h, the plain causal layer;
// train/ttt_attention.h, EAGLE-3's training-time test): per-head gathers into contiguous buffers
// and the causal score product, so that both run their products on the SIMD matmul kernel.
// Called inside a pool task, where the pool runs the kernel serially: results never depend on the
// thread count.
#pragma once

#include <cstdint>

#include "core/thread_pool.h"

namespace eagle2::train {

// Query rows per score block: causal attention only needs keys [0, t1) for rows [t0, t1), so the
// score products are cut into row blocks to skip most of the masked upper triangle.
inline constexpr int64_t kAttentionBlock = 64;

// dst[T, hd] <- the head's columns [col, col + hd) of a [T, width] row-major activation.
void gather_head(float* dst, const float* src, int64_t T, int64_t width, int64_t col, int64_t hd);

// dst[T, width] at the head's columns [col, col + hd) += src[T, hd].
void scatter_add_head(float* dst, const float* src, int64_t T, int64_t width, int64_t col,
                      int64_t hd);

// out[T, T]: row t holds A[t] . B[j] * scale for j <= t (A and B are [T, hd]), exact zeros beyond.
// tmp holds kAttentionBlock * T floats.
void causal_scores(float* out, const float* A, const float* B, int64_t T, int64_t hd, float scale,
                   float* tmp, ThreadPool& pool);

}  // namespace eagle2::train

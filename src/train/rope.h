// Rotary position embedding in the Hugging Face rotate-half layout, forward and backward.
// Pairs (i, i + head_dim/2) of each head are rotated by angle position * inv_freq[i].
#pragma once

#include <cstdint>

#include "core/thread_pool.h"
#include "kernels/ops.h"

namespace eagle2::train {

// The cos/sin tables come from eagle2::rope_tables (kernels/ops.h), shared with inference.

// x[T, n_heads * head_dim] rotated in place (same bits as the inference forward).
void rope_forward(float* x, const float* cos, const float* sin, int64_t T, int64_t n_heads,
                  int64_t head_dim, ThreadPool& pool);

// In place: dx[T, n_heads * head_dim] holds dL/d(rotated x) and becomes dL/dx. The rotation is
// orthogonal, so its backward is the rotation by the opposite angle.
void rope_backward(float* dx, const float* cos, const float* sin, int64_t T, int64_t n_heads,
                   int64_t head_dim, ThreadPool& pool);

}  // namespace eagle2::train

// SmoothL1 (Huber with beta = 1), the regression loss of EAGLE's feature prediction:
//   l(d) = 0.5 d^2 if |d| < 1, else |d| - 0.5,  d = pred - target,
// averaged over all elements of the counted rows (mask null: all rows; else mask[m] != 0), which
// is EAGLE's "mean over dims and masked tokens". No counted row: zero loss and gradient.
#pragma once

#include <cstdint>

#include "core/thread_pool.h"

namespace eagle2::train {

// pred, target [M, C].
double smooth_l1_forward(const float* pred, const float* target, const uint8_t* mask, int64_t M,
                         int64_t C, ThreadPool& pool);

// dpred[M, C] += dloss / (count * C) * clamp(d, -1, 1) on counted rows.
void smooth_l1_backward(float* dpred, const float* pred, const float* target, const uint8_t* mask,
                        int64_t M, int64_t C, float dloss, ThreadPool& pool);

}  // namespace eagle2::train

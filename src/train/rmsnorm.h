// RMSNorm, forward and backward: out = w * (x * r) with r = 1 / sqrt(mean(x^2) + eps) per row.
#pragma once

#include <cstdint>

#include "core/thread_pool.h"

namespace eagle2::train {

// out[M, C], rstd[M] (saved for backward) from inp[M, C] and weight[C]. The output bits equal the
// inference kernel eagle2::rmsnorm (kernels/ops.h), so features computed for training and at
// inference agree exactly.
void rmsnorm_forward(float* out, float* rstd, const float* inp, const float* weight, float eps,
                     int64_t M, int64_t C, ThreadPool& pool);

// dinp[M, C] += dL/dinp and dweight[C] += dL/dweight (either may be null), given dout[M, C] and
// the forward's inp, weight and rstd:
//   dinp = r * (w*dy) - x * r^3 / C * sum_c(w*dy*x),   dweight = sum_m dy * x * r.
void rmsnorm_backward(float* dinp, float* dweight, const float* dout, const float* inp,
                      const float* weight, const float* rstd, int64_t M, int64_t C,
                      ThreadPool& pool);

}  // namespace eagle2::train

#include "train/swiglu.h"

#include <algorithm>
#include <cmath>

namespace eagle2::train {

namespace {

constexpr int64_t kChunk = 4096;

}  // namespace

void swiglu_forward(float* out, const float* gate, const float* up, int64_t n, ThreadPool& pool) {
  pool.parallel_for((n + kChunk - 1) / kChunk, [&](int64_t t) {
    const int64_t i1 = std::min(n, (t + 1) * kChunk);
    for (int64_t i = t * kChunk; i < i1; ++i) {
      const float g = gate[i];
      out[i] = g / (1.0f + std::exp(-g)) * up[i];
    }
  });
}

void swiglu_backward(float* dgate, float* dup, const float* dout, const float* gate,
                     const float* up, int64_t n, ThreadPool& pool) {
  pool.parallel_for((n + kChunk - 1) / kChunk, [&](int64_t t) {
    const int64_t i1 = std::min(n, (t + 1) * kChunk);
    for (int64_t i = t * kChunk; i < i1; ++i) {
      const float g = gate[i];
      // For g -> -inf, exp(-g) = inf gives s = 0 and a zero gradient, the correct limit.
      const float s = 1.0f / (1.0f + std::exp(-g));
      const float silu = g * s;
      if (dgate) dgate[i] += dout[i] * up[i] * (s * (1.0f + g * (1.0f - s)));
      if (dup) dup[i] += dout[i] * silu;
    }
  });
}

}  // namespace eagle2::train

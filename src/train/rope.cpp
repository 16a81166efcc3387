#include "train/rope.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "kernels/ops.h"

namespace eagle2::train {

namespace {

constexpr int64_t kRopeRowsPerTask = 16;

void check_head_dim(const char* what, int64_t head_dim) {
  if (head_dim <= 0 || head_dim % 2 != 0)
    fail(what, ": head_dim ", head_dim, " must be even and positive");
}

}  // namespace

void rope_forward(float* x, const float* cos, const float* sin, int64_t T, int64_t n_heads,
                  int64_t head_dim, ThreadPool& pool) {
  check_head_dim("rope_forward", head_dim);
  const int64_t half = head_dim / 2, width = n_heads * head_dim;
  pool.parallel_for((T + kRopeRowsPerTask - 1) / kRopeRowsPerTask, [&](int64_t task) {
    const int64_t t1 = std::min(T, (task + 1) * kRopeRowsPerTask);
    for (int64_t t = task * kRopeRowsPerTask; t < t1; ++t)
      for (int64_t h = 0; h < n_heads; ++h)
        rope_rotate_half(x + t * width + h * head_dim, cos + t * half, sin + t * half, head_dim);
  });
}

void rope_backward(float* dx, const float* cos, const float* sin, int64_t T, int64_t n_heads,
                   int64_t head_dim, ThreadPool& pool) {
  check_head_dim("rope_backward", head_dim);
  const int64_t half = head_dim / 2, width = n_heads * head_dim;
  pool.parallel_for((T + kRopeRowsPerTask - 1) / kRopeRowsPerTask, [&](int64_t task) {
    const int64_t t1 = std::min(T, (task + 1) * kRopeRowsPerTask);
    for (int64_t t = task * kRopeRowsPerTask; t < t1; ++t) {
      const float* c = cos + t * half;
      const float* s = sin + t * half;
      for (int64_t h = 0; h < n_heads; ++h) {
        float* g = dx + t * width + h * head_dim;
        for (int64_t i = 0; i < half; ++i) {
          const float a = g[i], b = g[i + half];
          g[i] = a * c[i] + b * s[i];
          g[i + half] = b * c[i] - a * s[i];
        }
      }
    }
  });
}

}  // namespace eagle2::train

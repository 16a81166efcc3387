#include "train/res_block.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "draft/medusa_heads.h"
#include "train/linear.h"

namespace eagle2::train {

namespace {

void check(const Matrix& W) {
  if (W.cols < W.rows)
    fail("res_block: input width ", W.cols, " is narrower than the output ", W.rows,
         " (the residual is the input's first columns)");
}

}  // namespace

void res_block_forward(float* out, float* z, const float* inp, int64_t M, const Matrix& W,
                       const float* b, ThreadPool& pool) {
  check(W);
  linear_forward(z, inp, M, W, b, pool);
  const int64_t d = W.rows;
  constexpr int64_t kRows = 64;
  pool.parallel_for((M + kRows - 1) / kRows, [&](int64_t t) {
    const int64_t m0 = t * kRows, n = std::min(M, m0 + kRows) - m0;
    res_block_output(z + m0 * d, inp + m0 * W.cols, W.cols, n, d, out + m0 * d);
  });
}

void res_block_backward(float* dinp, float* dW, float* db, float* dz_scratch, const float* dout,
                        const float* inp, const float* z, int64_t M, const Matrix& W,
                        ThreadPool& pool) {
  check(W);
  const int64_t d = W.rows, K = W.cols;
  constexpr int64_t kChunk = 4096;
  const int64_t n = M * d;
  pool.parallel_for((n + kChunk - 1) / kChunk, [&](int64_t t) {
    const int64_t i1 = std::min(n, (t + 1) * kChunk);
    for (int64_t i = t * kChunk; i < i1; ++i) {
      // SiLU'(x) = s (1 + x (1 - s)), s = sigmoid(x); for x -> -inf, s = 0 and the slope is 0.
      const float x = z[i];
      const float s = 1.0f / (1.0f + std::exp(-x));
      dz_scratch[i] = dout[i] * (s * (1.0f + x * (1.0f - s)));
    }
  });
  linear_backward(dinp, dW, db, dz_scratch, inp, M, W, pool);
  if (dinp) {
    // The residual path: dL/dinp[:, :d] += dout, row by row (each row one task's).
    pool.parallel_for(M, [&](int64_t m) {
      for (int64_t c = 0; c < d; ++c) dinp[m * K + c] += dout[m * d + c];
    });
  }
}

}  // namespace eagle2::train

#include "train/rmsnorm.h"

#include <algorithm>
#include <cmath>

namespace eagle2::train {

namespace {

constexpr int64_t kRows = 16;  // rows per task

}  // namespace

void rmsnorm_forward(float* out, float* rstd, const float* inp, const float* weight, float eps,
                     int64_t M, int64_t C, ThreadPool& pool) {
  pool.parallel_for((M + kRows - 1) / kRows, [&](int64_t t) {
    const int64_t m1 = std::min(M, (t + 1) * kRows);
    for (int64_t m = t * kRows; m < m1; ++m) {
      const float* x = inp + m * C;
      // The inference kernel's exact sequence (4 interleaved double partial sums, combined
      // pairwise, scale rounded to float), so that training sees the features inference makes.
      double s[4] = {0, 0, 0, 0};
      int64_t i = 0;
      for (; i + 4 <= C; i += 4)
        for (int j = 0; j < 4; ++j) s[j] += static_cast<double>(x[i + j]) * x[i + j];
      for (int j = 0; i + j < C; ++j) s[j] += static_cast<double>(x[i + j]) * x[i + j];
      const double mean = C > 0 ? ((s[0] + s[1]) + (s[2] + s[3])) / static_cast<double>(C) : 0.0;
      const float r = static_cast<float>(1.0 / std::sqrt(mean + static_cast<double>(eps)));
      rstd[m] = r;
      for (int64_t c = 0; c < C; ++c) out[m * C + c] = weight[c] * (x[c] * r);
    }
  });
}

void rmsnorm_backward(float* dinp, float* dweight, const float* dout, const float* inp,
                      const float* weight, const float* rstd, int64_t M, int64_t C,
                      ThreadPool& pool) {
  if (dinp) {
    pool.parallel_for((M + kRows - 1) / kRows, [&](int64_t t) {
      const int64_t m1 = std::min(M, (t + 1) * kRows);
      for (int64_t m = t * kRows; m < m1; ++m) {
        const float* x = inp + m * C;
        const float* dy = dout + m * C;
        // The projection term sums C products that nearly cancel; double keeps it accurate.
        double dot = 0.0;
        for (int64_t c = 0; c < C; ++c) dot += static_cast<double>(weight[c]) * dy[c] * x[c];
        const double r = rstd[m];
        const float coef = static_cast<float>(dot * r * r * r / static_cast<double>(C));
        const float rf = rstd[m];
        for (int64_t c = 0; c < C; ++c) dinp[m * C + c] += rf * (weight[c] * dy[c]) - coef * x[c];
      }
    });
  }
  if (dweight) {
    // Column blocks per task, rows in order: each dweight[c] has one fixed summation order.
    constexpr int64_t kCols = 256;
    pool.parallel_for((C + kCols - 1) / kCols, [&](int64_t t) {
      const int64_t c0 = t * kCols, c1 = std::min(C, c0 + kCols);
      for (int64_t m = 0; m < M; ++m) {
        const float r = rstd[m];
        for (int64_t c = c0; c < c1; ++c) dweight[c] += dout[m * C + c] * (inp[m * C + c] * r);
      }
    });
  }
}

}  // namespace eagle2::train

#include "train/smooth_l1.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "train/cross_entropy.h"

namespace eagle2::train {

namespace {

constexpr int64_t kLossRowsPerTask = 16;

bool counts(const uint8_t* mask, int64_t m) {
  return !mask || mask[m] != 0;
}

}  // namespace

double smooth_l1_forward(const float* pred, const float* target, const uint8_t* mask, int64_t M,
                         int64_t C, ThreadPool& pool) {
  const int64_t n = count_rows(mask, M);
  if (n == 0 || C == 0) return 0.0;
  // Row sums in parallel, then added in row order: one summation order for any thread count.
  std::vector<double> rows(static_cast<size_t>(M), 0.0);
  pool.parallel_for((M + kLossRowsPerTask - 1) / kLossRowsPerTask, [&](int64_t t) {
    const int64_t m1 = std::min(M, (t + 1) * kLossRowsPerTask);
    for (int64_t m = t * kLossRowsPerTask; m < m1; ++m) {
      if (!counts(mask, m)) continue;
      double s = 0.0;
      for (int64_t c = 0; c < C; ++c) {
        const double d = static_cast<double>(pred[m * C + c]) - target[m * C + c];
        const double a = std::fabs(d);
        s += a < 1.0 ? 0.5 * d * d : a - 0.5;
      }
      rows[static_cast<size_t>(m)] = s;
    }
  });
  double sum = 0.0;
  for (double r : rows) sum += r;
  return sum / (static_cast<double>(n) * static_cast<double>(C));
}

void smooth_l1_backward(float* dpred, const float* pred, const float* target, const uint8_t* mask,
                        int64_t M, int64_t C, float dloss, ThreadPool& pool) {
  const int64_t n = count_rows(mask, M);
  if (n == 0 || C == 0) return;
  const float g = static_cast<float>(static_cast<double>(dloss) / (static_cast<double>(n) * C));
  pool.parallel_for((M + kLossRowsPerTask - 1) / kLossRowsPerTask, [&](int64_t t) {
    const int64_t m1 = std::min(M, (t + 1) * kLossRowsPerTask);
    for (int64_t m = t * kLossRowsPerTask; m < m1; ++m) {
      if (!counts(mask, m)) continue;
      for (int64_t c = 0; c < C; ++c) {
        const float d = pred[m * C + c] - target[m * C + c];
        dpred[m * C + c] += g * std::clamp(d, -1.0f, 1.0f);
      }
    }
  });
}

}  // namespace eagle2::train

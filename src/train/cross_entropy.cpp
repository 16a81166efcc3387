#include "train/cross_entropy.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/error.h"

namespace eagle2::train {

namespace {

constexpr int64_t kSoftmaxRowsPerTask = 4;  // rows of a vocabulary-sized softmax per task

bool counts(const uint8_t* mask, int64_t m) {
  return !mask || mask[m] != 0;
}

// Per-row losses computed in parallel, then summed in row order: the mean has one fixed
// summation order whatever the thread count.
template <class RowLoss>
double mean_loss(const uint8_t* mask, int64_t M, ThreadPool& pool, const RowLoss& row_loss) {
  std::vector<double> loss(static_cast<size_t>(M), 0.0);
  pool.parallel_for((M + kSoftmaxRowsPerTask - 1) / kSoftmaxRowsPerTask, [&](int64_t t) {
    const int64_t m1 = std::min(M, (t + 1) * kSoftmaxRowsPerTask);
    for (int64_t m = t * kSoftmaxRowsPerTask; m < m1; ++m)
      loss[static_cast<size_t>(m)] = row_loss(m, counts(mask, m));
  });
  const int64_t n = count_rows(mask, M);
  if (n == 0) return 0.0;
  double sum = 0.0;
  for (int64_t m = 0; m < M; ++m)
    if (counts(mask, m)) sum += loss[static_cast<size_t>(m)];
  return sum / static_cast<double>(n);
}

}  // namespace

int64_t count_rows(const uint8_t* mask, int64_t M) {
  if (!mask) return M;
  int64_t n = 0;
  for (int64_t m = 0; m < M; ++m) n += mask[m] != 0;
  return n;
}

double cross_entropy_forward(float* probs, const float* logits, const int32_t* targets,
                             const uint8_t* mask, int64_t M, int64_t V, ThreadPool& pool) {
  for (int64_t m = 0; m < M; ++m)
    if (counts(mask, m) && (targets[m] < 0 || targets[m] >= V))
      fail("cross_entropy: target ", targets[m], " at row ", m, " is outside [0, ", V, ")");
  return mean_loss(mask, M, pool, [&](int64_t m, bool counted) {
    float* p = probs + m * V;
    const float target_logit = counted ? logits[m * V + targets[m]] : 0.0f;
    if (p != logits + m * V) std::copy(logits + m * V, logits + (m + 1) * V, p);
    const double lse = softmax_inplace(p, V);
    return counted ? lse - static_cast<double>(target_logit) : 0.0;
  });
}

void cross_entropy_backward(float* dlogits, const float* probs, const int32_t* targets,
                            const uint8_t* mask, int64_t M, int64_t V, float dloss,
                            ThreadPool& pool) {
  const int64_t n = count_rows(mask, M);
  if (n == 0) return;
  const float g = dloss / static_cast<float>(n);
  pool.parallel_for((M + kSoftmaxRowsPerTask - 1) / kSoftmaxRowsPerTask, [&](int64_t t) {
    const int64_t m1 = std::min(M, (t + 1) * kSoftmaxRowsPerTask);
    for (int64_t m = t * kSoftmaxRowsPerTask; m < m1; ++m) {
      if (!counts(mask, m)) continue;
      float* d = dlogits + m * V;
      const float* p = probs + m * V;
      for (int64_t i = 0; i < V; ++i) d[i] += g * p[i];
      d[targets[m]] -= g;
    }
  });
}

double soft_cross_entropy_forward(float* probs, const float* student_logits, const float* teacher,
                                  const uint8_t* mask, int64_t M, int64_t V, ThreadPool& pool) {
  return mean_loss(mask, M, pool, [&](int64_t m, bool counted) {
    const float* s = student_logits + m * V;
    const float* tp = teacher + m * V;
    // -sum p (s - lse) = lse * sum p - sum p s, taken before the softmax overwrites an aliased s.
    double ps = 0.0, psum = 0.0;
    if (counted) {
      for (int64_t i = 0; i < V; ++i) {
        ps += static_cast<double>(tp[i]) * s[i];
        psum += tp[i];
      }
    }
    float* p = probs + m * V;
    if (p != s) std::copy(s, s + V, p);
    const double lse = softmax_inplace(p, V);
    return counted ? lse * psum - ps : 0.0;
  });
}

void soft_cross_entropy_backward(float* dlogits, const float* probs, const float* teacher,
                                 const uint8_t* mask, int64_t M, int64_t V, float dloss,
                                 ThreadPool& pool) {
  const int64_t n = count_rows(mask, M);
  if (n == 0) return;
  const float g = dloss / static_cast<float>(n);
  pool.parallel_for((M + kSoftmaxRowsPerTask - 1) / kSoftmaxRowsPerTask, [&](int64_t t) {
    const int64_t m1 = std::min(M, (t + 1) * kSoftmaxRowsPerTask);
    for (int64_t m = t * kSoftmaxRowsPerTask; m < m1; ++m) {
      if (!counts(mask, m)) continue;
      const float* tp = teacher + m * V;
      const float* p = probs + m * V;
      double psum = 0.0;
      for (int64_t i = 0; i < V; ++i) psum += tp[i];
      const float ps = static_cast<float>(psum);
      float* d = dlogits + m * V;
      for (int64_t i = 0; i < V; ++i) d[i] += g * (p[i] * ps - tp[i]);
    }
  });
}

}  // namespace eagle2::train

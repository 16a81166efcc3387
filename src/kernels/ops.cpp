// Row-wise transformer ops, portable scalar code: they are O(n) per row next to O(n^2) matmuls.
// Every loop runs in a fixed index order and touches one row only, so results never depend on
// the batch.
#include "kernels/ops.h"

#include <cmath>

#include "kernels/attention_internal.h"
#include "kernels/cpu.h"

namespace eagle2 {

void rmsnorm(const float* x, const float* w, float eps, float* out, int64_t n) {
  // The sum of squares is accumulated in double (each float square is exact in double) over 4
  // interleaved partial sums combined in a fixed order: more accurate than Hugging Face's float32
  // mean and still deterministic. The scale 1/sqrt(mean + eps) is then rounded to float and
  // applied as HF does: w * (x * scale).
  double s[4] = {0, 0, 0, 0};
  int64_t i = 0;
  for (; i + 4 <= n; i += 4)
    for (int j = 0; j < 4; ++j) s[j] += static_cast<double>(x[i + j]) * x[i + j];
  for (int j = 0; i + j < n; ++j) s[j] += static_cast<double>(x[i + j]) * x[i + j];
  const double mean = n > 0 ? ((s[0] + s[1]) + (s[2] + s[3])) / static_cast<double>(n) : 0.0;
  const float scale = static_cast<float>(1.0 / std::sqrt(mean + static_cast<double>(eps)));
  for (int64_t k = 0; k < n; ++k) out[k] = w[k] * (x[k] * scale);
}

void swiglu_inplace(float* gate, const float* up, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float g = gate[i];
    // For g -> -inf, exp(-g) overflows to inf and the quotient is -0, the correct limit.
    gate[i] = g / (1.0f + std::exp(-g)) * up[i];
  }
}

void rope_rotate_half(float* x, const float* cos, const float* sin, int64_t head_dim) {
  const int64_t h = head_dim / 2;
  for (int64_t i = 0; i < h; ++i) {
    const float a = x[i], b = x[i + h];
    x[i] = a * cos[i] - b * sin[i];
    x[i + h] = b * cos[i] + a * sin[i];
  }
}

double softmax_inplace(float* x, int64_t n) {
  if (n <= 0) return -INFINITY;
  float mx = x[0];
  for (int64_t i = 1; i < n; ++i) mx = x[i] > mx ? x[i] : mx;
  // Summed in double in index order: a 32k-entry vocabulary summed in float would lose ~1e-3
  // relative in the worst case.
  double sum = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    x[i] = std::exp(x[i] - mx);
    sum += x[i];
  }
  const float inv = static_cast<float>(1.0 / sum);
  for (int64_t i = 0; i < n; ++i) x[i] *= inv;
  return static_cast<double>(mx) + std::log(sum);
}

void rope_tables(float* cos, float* sin, const int32_t* positions, int64_t T, const float* inv_freq,
                 int64_t half) {
  for (int64_t t = 0; t < T; ++t) {
    const float pos = static_cast<float>(positions[t]);
    for (int64_t j = 0; j < half; ++j) {
      const float angle = pos * inv_freq[j];
      cos[t * half + j] = static_cast<float>(std::cos(static_cast<double>(angle)));
      sin[t * half + j] = static_cast<float>(std::sin(static_cast<double>(angle)));
    }
  }
}

float log_sum_exp(const float* x, int64_t n) {
  if (n <= 0) return -INFINITY;
  float mx = x[0];
  for (int64_t i = 1; i < n; ++i) mx = x[i] > mx ? x[i] : mx;
  if (mx == -INFINITY || mx == INFINITY) return mx;
  double sum;
  if (active_kernel_path() == KernelPath::Avx512) {
    sum = detail::sum_exp_avx512(x, n, mx);
  } else {
    sum = 0.0;
    for (int64_t i = 0; i < n; ++i) sum += std::exp(static_cast<double>(x[i] - mx));
  }
  return mx + static_cast<float>(std::log(sum));
}

}  // namespace eagle2

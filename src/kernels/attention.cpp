// Attention of one query head: scores, softmax and the weighted sum of values, each in slot order.
//
// Order of operations (fixed per path, identical for any context/extra split):
//   s_j = dot_f32(path, q, k_j) * scale          for j over the visible slots in order
//   m   = max_j s_j;  p_j = exp(s_j - m);  sum = sum_j p_j  (in double, slot order; the AVX-512
//                                                 path: its vector exp and 16 double lanes, see
//                                                 attention_internal.h)
//   out = (sum_j p_j v_j) * (float)(1 / sum)     (per element: slot order; FMA on SIMD paths,
//                                                 multiply-then-add on the scalar path)
// With no visible slot at all the output is zero.
#include "kernels/attention.h"

#include <cmath>

#include "kernels/attention_internal.h"
#include "kernels/matmul.h"

namespace eagle2 {

namespace {

inline const float* slot_ptr(const float* base, const AttentionKeys& keys, int64_t j) {
  const int64_t slot = j < keys.n_context ? j : keys.extra[j - keys.n_context];
  return base + slot * keys.stride;
}

void values_scalar(const AttentionKeys& keys, const float* p, float inv_sum, int64_t head_dim,
                   float* out) {
  for (int64_t d = 0; d < head_dim; ++d) out[d] = 0.0f;
  const int64_t n = keys.n_context + keys.n_extra;
  for (int64_t j = 0; j < n; ++j) {
    const float* v = slot_ptr(keys.v, keys, j);
    const float pj = p[j];
    for (int64_t d = 0; d < head_dim; ++d) out[d] += pj * v[d];
  }
  for (int64_t d = 0; d < head_dim; ++d) out[d] *= inv_sum;
}

}  // namespace

void attention_head(KernelPath path, const float* q, const AttentionKeys& keys, int64_t head_dim,
                    float scale, float* scratch, float* out) {
  const int64_t n = keys.n_context + keys.n_extra;
  if (n <= 0) {
    for (int64_t d = 0; d < head_dim; ++d) out[d] = 0.0f;
    return;
  }
  if (path == KernelPath::Avx512) {
    detail::attention_scores_avx512(q, keys.k, keys.stride, keys.n_context, keys.extra, keys.n_extra,
                                    head_dim, scale, scratch);
    const float inv_sum = detail::softmax_avx512(scratch, n);
    detail::attention_values_avx512(keys.v, keys.stride, keys.n_context, keys.extra, keys.n_extra,
                                    scratch, inv_sum, head_dim, out);
    return;
  }
  float mx = -INFINITY;
  for (int64_t j = 0; j < n; ++j) {
    const float s = dot_f32(path, q, slot_ptr(keys.k, keys, j), head_dim) * scale;
    scratch[j] = s;
    mx = s > mx ? s : mx;
  }
  double sum = 0.0;
  for (int64_t j = 0; j < n; ++j) {
    scratch[j] = std::exp(scratch[j] - mx);
    sum += scratch[j];
  }
  const float inv_sum = static_cast<float>(1.0 / sum);
  switch (path) {
    case KernelPath::Avx2:
      detail::attention_values_avx2(keys.v, keys.stride, keys.n_context, keys.extra, keys.n_extra,
                                    scratch, inv_sum, head_dim, out);
      return;
    case KernelPath::Scalar:
    case KernelPath::Avx512: break;
  }
  values_scalar(keys, scratch, inv_sum, head_dim, out);
}

}  // namespace eagle2

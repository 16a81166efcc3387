#include "train/lm_head_loss.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/error.h"
#include "kernels/matmul.h"
#include "train/cross_entropy.h"
#include "train/linear.h"

namespace eagle2::train {

namespace {

// The parts common to both losses. prepare(rows, r) runs once per chunk of r counted rows (the
// teacher's logits); row_grad(m, i, logits_row, backward) turns chunk row i (row m of x) of logits
// into probabilities, returns its loss, and when a backward is wanted leaves the gradient of that
// loss w.r.t. the logits, unscaled, in the same buffer.
template <class Prepare, class RowGrad>
double fused(const char* what, const float* x, const uint8_t* mask, int64_t M, const Matrix& W,
             const Matrix* WT, float* dx, float* dW, float dloss, ThreadPool& pool,
             int64_t chunk_rows, const Prepare& prepare, const RowGrad& row_grad) {
  if (chunk_rows <= 0) fail(what, ": chunk_rows must be positive, got ", chunk_rows);
  const int64_t V = W.rows, d = W.cols;
  std::vector<int64_t> rows;
  for (int64_t m = 0; m < M; ++m)
    if (!mask || mask[m]) rows.push_back(m);
  const int64_t n = static_cast<int64_t>(rows.size());
  if (n == 0) return 0.0;
  const bool backward = dx || dW;

  TransposedMatrix own_wt;
  if (dx && !WT) {
    own_wt = transpose_matrix(W, pool);
    WT = &own_wt.m;
  }
  if (WT && (WT->rows != d || WT->cols != V || WT->dtype != W.dtype))
    fail(what, ": WT is [", WT->rows, ", ", WT->cols, "], expected [", d, ", ", V, "]");

  const int64_t R = std::min(chunk_rows, n);
  std::vector<float> xc(static_cast<size_t>(R * d)), logits(static_cast<size_t>(R * V));
  std::vector<float> dxc(dx ? static_cast<size_t>(R * d) : 0);
  std::vector<double> loss(static_cast<size_t>(R));
  const float g = static_cast<float>(static_cast<double>(dloss) / static_cast<double>(n));
  double total = 0.0;
  for (int64_t c0 = 0; c0 < n; c0 += R) {
    const int64_t r = std::min(R, n - c0);
    for (int64_t i = 0; i < r; ++i)
      std::copy(x + rows[c0 + i] * d, x + (rows[c0 + i] + 1) * d, xc.data() + i * d);
    matmul(xc.data(), r, W, logits.data(), pool);
    prepare(rows.data() + c0, r);
    pool.parallel_for(r, [&](int64_t i) {
      float* lg = logits.data() + i * V;
      loss[static_cast<size_t>(i)] = row_grad(rows[c0 + i], i, lg, backward);
      if (backward)
        for (int64_t v = 0; v < V; ++v) lg[v] *= g;
    });
    for (int64_t i = 0; i < r; ++i) total += loss[static_cast<size_t>(i)];
    if (!backward) continue;
    if (dW) linear_backward_weight(dW, logits.data(), xc.data(), r, V, d, pool);
    if (dx) {
      std::fill(dxc.begin(), dxc.begin() + r * d, 0.0f);
      linear_backward_input(dxc.data(), logits.data(), r, *WT, pool);
      for (int64_t i = 0; i < r; ++i) {
        float* dst = dx + rows[c0 + i] * d;
        const float* src = dxc.data() + i * d;
        for (int64_t k = 0; k < d; ++k) dst[k] += src[k];
      }
    }
  }
  return total / static_cast<double>(n);
}

}  // namespace

double lm_head_cross_entropy(const float* x, const int32_t* targets, const uint8_t* mask, int64_t M,
                             const Matrix& W, const Matrix* WT, float* dx, float* dW, float dloss,
                             ThreadPool& pool, int64_t chunk_rows) {
  const int64_t V = W.rows;
  for (int64_t m = 0; m < M; ++m)
    if ((!mask || mask[m]) && (targets[m] < 0 || targets[m] >= V))
      fail("lm_head_cross_entropy: target ", targets[m], " at row ", m, " is outside [0, ", V, ")");
  return fused(
      "lm_head_cross_entropy", x, mask, M, W, WT, dx, dW, dloss, pool, chunk_rows,
      [](const int64_t*, int64_t) {},
      [&](int64_t m, int64_t, float* lg, bool backward) {
        const float target_logit = lg[targets[m]];
        const double lse = softmax_inplace(lg, V);
        if (backward) lg[targets[m]] -= 1.0f;
        return lse - static_cast<double>(target_logit);
      });
}

double lm_head_soft_cross_entropy(const float* x, const float* teacher_x, const uint8_t* mask,
                                  int64_t M, const Matrix& W, const Matrix* WT, float* dx,
                                  float* dW, float dloss, ThreadPool& pool, int64_t chunk_rows,
                                  float temperature) {
  if (!(temperature > 0) || !std::isfinite(temperature))
    fail("lm_head_soft_cross_entropy: temperature must be finite and > 0, got ", temperature);
  const int64_t V = W.rows, d = W.cols;
  const float inv_t = 1.0f / temperature;
  std::vector<float> tx, tprobs;
  const auto teacher_chunk = [&](const int64_t* rows, int64_t r) {
    tx.resize(static_cast<size_t>(r * d));
    tprobs.resize(static_cast<size_t>(r * V));
    for (int64_t i = 0; i < r; ++i)
      std::copy(teacher_x + rows[i] * d, teacher_x + (rows[i] + 1) * d, tx.data() + i * d);
    matmul(tx.data(), r, W, tprobs.data(), pool);
    pool.parallel_for(r, [&](int64_t i) {
      float* row = tprobs.data() + i * V;
      if (inv_t != 1.0f)
        for (int64_t v = 0; v < V; ++v) row[v] *= inv_t;
      softmax_inplace(row, V);
    });
  };
  return fused("lm_head_soft_cross_entropy", x, mask, M, W, WT, dx, dW, dloss, pool, chunk_rows,
               teacher_chunk, [&](int64_t, int64_t i, float* lg, bool backward) {
                 const float* tp = tprobs.data() + i * V;
                 if (inv_t != 1.0f)
                   for (int64_t v = 0; v < V; ++v) lg[v] *= inv_t;
                 double ps = 0.0, psum = 0.0;
                 for (int64_t v = 0; v < V; ++v) {
                   ps += static_cast<double>(tp[v]) * lg[v];
                   psum += tp[v];
                 }
                 const double lse = softmax_inplace(lg, V);
                 if (backward) {
                   // d/dlogit = (q_T * sum p - p_T) / T: the chain rule through logits / T.
                   const float pf = static_cast<float>(psum);
                   for (int64_t v = 0; v < V; ++v) lg[v] = (lg[v] * pf - tp[v]) * inv_t;
                 }
                 return lse * psum - ps;
               });
}

}  // namespace eagle2::train

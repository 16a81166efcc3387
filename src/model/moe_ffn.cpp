#include "model/moe_ffn.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/error.h"
#include "kernels/matmul.h"
#include "kernels/ops.h"

namespace eagle2 {

namespace {

// llama.cpp floors the sum of the chosen probabilities at the smallest normal f16 (2^-14) before
// dividing by it, so that a row whose chosen experts all have probability ~0 cannot divide by 0.
constexpr float kMoeMinWeightSum = 6.103515625e-5f;

// Expert e of a stacked [E, rows, cols] tensor: its e-th [rows, cols] slice, in place. Quantized
// rows are whole blocks (the file reader checked), so each slice starts on a row boundary.
std::vector<Matrix> moe_expert_slices(const TensorView& t) {
  require_float(t);
  const int64_t experts = t.shape[0], rows = t.shape[1], cols = t.shape[2];
  const size_t slice_bytes = static_cast<size_t>(rows) * dtype_bytes(t.dtype, cols);
  std::vector<Matrix> out;
  out.reserve(static_cast<size_t>(experts));
  for (int64_t e = 0; e < experts; ++e)
    out.push_back(Matrix{t.dtype, rows, cols,
                         static_cast<const char*>(t.data) + static_cast<size_t>(e) * slice_bytes});
  return out;
}

template <class T>
void moe_grow(std::vector<T>& v, size_t n) {
  if (v.size() < n) v.resize(n);
}

}  // namespace

MoeWeights bind_moe_weights(const TensorLookup& take, const std::string& prefix,
                            const MoeShape& s) {
  const int64_t E = s.experts, d = s.hidden, W = s.width;
  MoeWeights w;
  w.router = as_matrix(take(prefix + "mlp.gate.weight", {E, d}));
  w.gate = moe_expert_slices(take(prefix + "mlp.experts.gate_proj.weight", {E, W, d}));
  w.up = moe_expert_slices(take(prefix + "mlp.experts.up_proj.weight", {E, W, d}));
  w.down = moe_expert_slices(take(prefix + "mlp.experts.down_proj.weight", {E, d, W}));
  return w;
}

void moe_route(const float* logits, const MoeShape& s, int32_t* ids, float* weights) {
  const int64_t E = s.experts, k = s.used;
  // Softmax as ggml computes it: exponentials of (logit - max) in float, their sum in double, and
  // each scaled by the float reciprocal of the sum.
  float max = logits[0];
  for (int64_t e = 1; e < E; ++e) max = std::max(max, logits[e]);
  // Selection needs the probabilities only at the chosen experts, but ranks them by the same
  // rounded values llama.cpp ranks, so they are all computed.
  thread_local std::vector<float> probs;
  probs.resize(static_cast<size_t>(E));
  double sum = 0;
  for (int64_t e = 0; e < E; ++e) {
    probs[e] = std::exp(logits[e] - max);
    sum += probs[e];
  }
  const auto scale = static_cast<float>(1.0 / sum);
  for (int64_t e = 0; e < E; ++e) probs[e] *= scale;
  // Top k, best first; among equal probabilities the lower index first (llama.cpp's order for
  // E <= 16, where its argsort is an insertion sort; for larger E its tie order is unspecified).
  // A partial sort: O(E log k) per row.
  thread_local std::vector<int32_t> order;
  order.resize(static_cast<size_t>(E));
  for (int64_t e = 0; e < E; ++e) order[e] = static_cast<int32_t>(e);
  // A NaN probability (a hostile file's router) ranks below every number, so the comparison stays
  // a strict weak order (partial_sort's contract) and the ids stay distinct and in range.
  auto rank = [&](int32_t e) { return std::isnan(probs[e]) ? -1.0f : probs[e]; };
  std::partial_sort(order.begin(), order.begin() + k, order.end(), [&](int32_t a, int32_t b) {
    const float pa = rank(a), pb = rank(b);
    return pa > pb || (pa == pb && a < b);
  });
  for (int64_t r = 0; r < k; ++r) {
    ids[r] = order[r];
    weights[r] = probs[order[r]];
  }
  if (s.norm_topk_prob) {
    double chosen = 0;
    for (int64_t r = 0; r < k; ++r) chosen += weights[r];
    const float divisor = std::max(static_cast<float>(chosen), kMoeMinWeightSum);
    for (int64_t r = 0; r < k; ++r) weights[r] /= divisor;
  }
}

int64_t MoeFfn::scratch_elements() const {
  return static_cast<int64_t>(logits_.size() + weights_.size() + xg_.size() + gate_.size() +
                              up_.size() + yg_.size() + ids_.size() + slot_of_.size());
}

void MoeFfn::forward(const MoeWeights& w, const float* x, int64_t T, float* out, ThreadPool& pool) {
  const MoeShape& s = shape_;
  // Per row the scratch holds E logits, k weights, ids and slots, and k gathered copies of d
  // (input, output) and of W (gate, up) floats; every factor is bounded by the config limits, so
  // this product cannot overflow.
  const int64_t per_row = s.experts + s.used * (3 + 2 * s.hidden + 2 * s.width);
  const int64_t chunk = std::max<int64_t>(1, max_scratch_ / per_row);
  for (int64_t first = 0; first < T; first += chunk)
    forward_rows(w, x + first * s.hidden, std::min(chunk, T - first), out + first * s.hidden, pool);
}

void MoeFfn::forward_rows(const MoeWeights& w, const float* x, int64_t T, float* out,
                          ThreadPool& pool) {
  const MoeShape& s = shape_;
  const int64_t d = s.hidden, E = s.experts, k = s.used, W = s.width, n = T * k;
  moe_grow(logits_, static_cast<size_t>(T * E));
  moe_grow(weights_, static_cast<size_t>(n));
  moe_grow(ids_, static_cast<size_t>(n));
  moe_grow(slot_of_, static_cast<size_t>(n));
  moe_grow(xg_, static_cast<size_t>(n * d));
  moe_grow(yg_, static_cast<size_t>(n * d));
  moe_grow(gate_, static_cast<size_t>(n * W));
  moe_grow(up_, static_cast<size_t>(n * W));
  begin_.assign(static_cast<size_t>(E + 1), 0);

  matmul(x, T, w.router, logits_.data(), pool);
  for (int64_t i = 0; i < T; ++i) {
    moe_route(&logits_[i * E], s, &ids_[i * k], &weights_[i * k]);
    for (int64_t r = 0; r < k; ++r) ++begin_[ids_[i * k + r] + 1];
  }
  for (int64_t e = 0; e < E; ++e) begin_[e + 1] += begin_[e];
  // Each expert's rows in batch order, gathered into one contiguous block of xg_.
  std::vector<int64_t>& fill = fill_;
  fill.assign(begin_.begin(), begin_.end() - 1);
  for (int64_t i = 0; i < T; ++i)
    for (int64_t r = 0; r < k; ++r) {
      const int64_t slot = fill[ids_[i * k + r]]++;
      slot_of_[i * k + r] = static_cast<int32_t>(slot);
      std::memcpy(&xg_[slot * d], &x[i * d], static_cast<size_t>(d) * sizeof(float));
    }
  // One pass over each routed expert's matrices for all its rows.
  for (int64_t e = 0; e < E; ++e) {
    const int64_t b = begin_[e], m = begin_[e + 1] - b;
    if (m == 0) continue;
    ++touched_;
    matmul_multi(&xg_[b * d], m, {{&w.gate[e], &gate_[b * W]}, {&w.up[e], &up_[b * W]}}, pool);
    swiglu_inplace(&gate_[b * W], &up_[b * W], m * W);
    matmul(&gate_[b * W], m, w.down[e], &yg_[b * d], pool);
  }
  // Each row's experts weighted and added in rank order: (w0 y0 + w1 y1) + w2 y2 ...
  for (int64_t i = 0; i < T; ++i) {
    float* o = &out[i * d];
    const float w0 = weights_[i * k];
    const float* y0 = &yg_[slot_of_[i * k] * static_cast<int64_t>(d)];
    for (int64_t j = 0; j < d; ++j) o[j] = w0 * y0[j];
    for (int64_t r = 1; r < k; ++r) {
      const float wr = weights_[i * k + r];
      const float* yr = &yg_[slot_of_[i * k + r] * static_cast<int64_t>(d)];
      for (int64_t j = 0; j < d; ++j) o[j] += wr * yr[j];
    }
  }
}

}  // namespace eagle2

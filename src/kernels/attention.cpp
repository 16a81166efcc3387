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

#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/attention_internal.h"
#include "kernels/matmul.h"

namespace eagle2 {

namespace {

// The storage row of logical slot `slot` (attention_internal.h); a private copy per ISA file.
inline int64_t row_of(const int32_t* table, int shift, int64_t slot) {
  if (table == nullptr) return slot;
  return (static_cast<int64_t>(table[slot >> shift]) << shift) |
         (slot & ((int64_t{1} << shift) - 1));
}

inline const float* slot_ptr(const float* base, const AttentionKeys& keys, int64_t j) {
  const int64_t slot = j < keys.n_context ? j : keys.extra[j - keys.n_context];
  return base + row_of(keys.table, keys.shift, slot) * keys.stride;
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

// In place over s[0..n): p_j = exp(s_j - max), returns 1 / sum_j p_j (the sum in double, slot
// order): the softmax of the scalar and AVX2 paths.
float softmax_in_place(float* s, int64_t n) {
  float mx = -INFINITY;
  for (int64_t j = 0; j < n; ++j) mx = s[j] > mx ? s[j] : mx;
  double sum = 0.0;
  for (int64_t j = 0; j < n; ++j) {
    s[j] = std::exp(s[j] - mx);
    sum += s[j];
  }
  return static_cast<float>(1.0 / sum);
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
    detail::attention_scores_avx512(q, keys.k, keys.stride, keys.table, keys.shift, keys.n_context,
                                    keys.extra, keys.n_extra, head_dim, scale, scratch);
    const float inv_sum = detail::softmax_avx512(scratch, n);
    detail::attention_values_avx512(keys.v, keys.stride, keys.table, keys.shift, keys.n_context,
                                    keys.extra, keys.n_extra, scratch, inv_sum, head_dim, out);
    return;
  }
  for (int64_t j = 0; j < n; ++j)
    scratch[j] = dot_f32(path, q, slot_ptr(keys.k, keys, j), head_dim) * scale;
  const float inv_sum = softmax_in_place(scratch, n);
  switch (path) {
    case KernelPath::Avx2:
      detail::attention_values_avx2(keys.v, keys.stride, keys.table, keys.shift, keys.n_context,
                                    keys.extra, keys.n_extra, scratch, inv_sum, head_dim, out);
      return;
    case KernelPath::Scalar:
    case KernelPath::Avx512:
      break;
  }
  values_scalar(keys, scratch, inv_sum, head_dim, out);
}

void attention_batch(KernelPath path, const AttentionBatch& b, ThreadPool& pool) {
  const int64_t group = b.n_heads / b.n_kv_heads, qd = b.n_heads * b.head_dim;
  auto sequence_of = [&](int64_t i) { return b.row_sequence ? b.row_sequence[i] : 0; };
  // Rows per task: enough queries per task to share the context reads, enough tasks to keep
  // every thread busy. A task's rows are consecutive rows of one sequence (they share its
  // context); tasks of different sequences and KV heads run side by side.
  const int64_t rows_per_task =
      std::clamp<int64_t>(b.n_rows * b.n_kv_heads / (4 * static_cast<int64_t>(pool.size())), 1, 8);
  thread_local std::vector<int64_t> block_start;
  block_start.clear();
  int64_t max_scores = 0;
  for (int64_t i = 0; i < b.n_rows; ++i) {
    if (block_start.empty() || i - block_start.back() == rows_per_task ||
        sequence_of(i) != sequence_of(i - 1))
      block_start.push_back(i);
    max_scores = std::max(max_scores, b.sequences[sequence_of(i)].n_context +
                                          b.visible_begin[i + 1] - b.visible_begin[i]);
  }
  block_start.push_back(b.n_rows);
  const auto n_row_blocks = static_cast<int64_t>(block_start.size()) - 1;
  const std::vector<int64_t>& starts = block_start;  // the workers read the caller's copy
  pool.parallel_for(b.n_kv_heads * n_row_blocks, [&](int64_t task) {
    const int64_t g = task / n_row_blocks, blk = task % n_row_blocks;
    const int64_t r0 = starts[static_cast<size_t>(blk)], r1 = starts[static_cast<size_t>(blk) + 1];
    const AttentionSequence& seq = b.sequences[sequence_of(r0)];
    thread_local std::vector<float> scores, acc;
    thread_local std::vector<detail::MultiQuery> queries;
    const auto n_q = static_cast<size_t>((r1 - r0) * group);
    if (scores.size() < n_q * static_cast<size_t>(max_scores))
      scores.resize(n_q * static_cast<size_t>(max_scores));
    queries.clear();
    for (int64_t i = r0; i < r1; ++i)
      for (int64_t h = g * group; h < (g + 1) * group; ++h) {
        detail::MultiQuery mq;
        mq.q = b.q + i * qd + h * b.head_dim;
        mq.extra = b.visible + b.visible_begin[i];
        mq.n_extra = b.visible_begin[i + 1] - b.visible_begin[i];
        mq.scores = scores.data() + queries.size() * static_cast<size_t>(max_scores);
        mq.out = b.out + i * qd + h * b.head_dim;
        queries.push_back(mq);
      }
    const float* k = b.k + g * b.head_dim;
    const float* v = b.v + g * b.head_dim;
    if (path == KernelPath::Avx512 || path == KernelPath::Avx2) {
      // A query that sees no slot at all gets zeros, as attention_head gives it, and leaves.
      std::erase_if(queries, [&](const detail::MultiQuery& mq) {
        if (seq.n_context + mq.n_extra > 0) return false;
        std::fill(mq.out, mq.out + b.head_dim, 0.0f);
        return true;
      });
      if (acc.size() < 256 * queries.size()) acc.resize(256 * queries.size());
      const auto n_queries = static_cast<int64_t>(queries.size());
      if (n_queries == 0) return;
      if (path == KernelPath::Avx512) {
        detail::attention_multi_avx512(k, v, b.stride, seq.table, b.shift, seq.n_context,
                                       queries.data(), n_queries, b.head_dim, b.scale, acc.data());
        return;
      }
      thread_local std::vector<float> inv_sum;
      inv_sum.resize(queries.size());
      detail::attention_scores_multi_avx2(k, b.stride, seq.table, b.shift, seq.n_context,
                                          queries.data(), n_queries, b.head_dim, b.scale);
      for (size_t qi = 0; qi < queries.size(); ++qi)
        inv_sum[qi] = softmax_in_place(queries[qi].scores, seq.n_context + queries[qi].n_extra);
      detail::attention_values_multi_avx2(v, b.stride, seq.table, b.shift, seq.n_context,
                                          queries.data(), n_queries, inv_sum.data(), b.head_dim,
                                          acc.data());
      return;
    }
    for (const auto& mq : queries) {
      AttentionKeys keys;
      keys.k = k;
      keys.v = v;
      keys.stride = b.stride;
      keys.table = seq.table;
      keys.shift = b.shift;
      keys.n_context = seq.n_context;
      keys.extra = mq.extra;
      keys.n_extra = mq.n_extra;
      attention_head(path, mq.q, keys, b.head_dim, b.scale, mq.scores, mq.out);
    }
  });
}

}  // namespace eagle2

// ISA entry points of attention (attention_avx2.cpp, attention_avx512.cpp); declarations only, for
// the reason given in matmul_internal.h.
#pragma once

#include <cstdint>

namespace eagle2::detail {

// Every function below reads slot s (a logical slot of one sequence) at row
//   table[s >> shift] * 2^shift + (s & (2^shift - 1))   (table == nullptr: row s)
// of the layer's key or value storage (k or v + row * stride): the block table of a paged KV
// cache (model/kv_cache.h). Each ISA file computes it with a private copy of that one line.

// out[d] = inv_sum * sum_j p[j] * v_j[d], where v_j is the j-th visible slot (context slots
// 0..n_context-1, then extra[]) at v + slot * stride. For each d the sum runs over j in order with
// one FMA per slot (AVX2; AVX-512 below splits it in four), so it depends only on the sequence of
// slots, not on the context/extra split.
void attention_values_avx2(const float* v, int64_t stride, const int32_t* table, int shift,
                           int64_t n_context, const int32_t* extra, int64_t n_extra, const float* p,
                           float inv_sum, int64_t head_dim, float* out);
// The AVX-512 version splits each sum in four: partial r takes the slots j = r mod 4 in order,
// then (p0 + p1) + (p2 + p3). Still fixed by the slot sequence alone.
void attention_values_avx512(const float* v, int64_t stride, const int32_t* table, int shift,
                             int64_t n_context, const int32_t* extra, int64_t n_extra,
                             const float* p, float inv_sum, int64_t head_dim, float* out);

// s[j] = dot(q, k_j) * scale for every visible slot j, 16 slots at a time. Each dot keeps the order
// of dot_f32 on the AVX-512 path (one 16-lane accumulator, one FMA per 16 dims, masked tail, the
// fixed pairwise lane sum), so the scores are the bits the one-key-at-a-time loop gave.
void attention_scores_avx512(const float* q, const float* k, int64_t stride, const int32_t* table,
                             int shift, int64_t n_context, const int32_t* extra, int64_t n_extra,
                             int64_t head_dim, float scale, float* s);

// In place over s[0..n): p_j = exp(s_j - max), returns 1 / sum_j p_j. The order, fixed by n alone:
// the max is exact in any order; exp is a vector polynomial (exact at 0, so a lone slot gets
// weight 1); the sum runs in 16 double lanes (lane l takes j = l mod 16 in increasing j), then a
// fixed lane tree.
float softmax_avx512(float* s, int64_t n);

// sum_j exp(x_j - mx) over n values (all <= mx) with softmax_avx512's vector exp and 16 double
// lanes, fixed by n alone.
double sum_exp_avx512(const float* x, int64_t n, float mx);

// Several queries over one KV head's shared committed context (0..n_context), each with its own
// extra slots: what attention_head computes for each, bit for bit (every score is its own dot,
// and each query's value sums keep their slot order), with every block of 16 context keys and
// values read once for all queries instead of once per query. scores: n_context + n_extra floats
// per query; acc: 256 * n_queries floats of scratch.
struct MultiQuery {
  const float* q;
  const int32_t* extra;
  int64_t n_extra;
  float* scores;
  float* out;
};
void attention_multi_avx512(const float* k, const float* v, int64_t stride, const int32_t* table,
                            int shift, int64_t n_context, const MultiQuery* queries,
                            int64_t n_queries, int64_t head_dim, float scale, float* acc);

// The AVX2 pieces of the same multi-query walk (attention_batch runs the scalar softmax between
// them, as attention_head does on this path). Scores: s[j] = dot(q, k_j) * scale for every
// visible slot of every query, each dot in dot_f32's AVX2 order (one 8-lane accumulator, one FMA
// per 8 dims, a zero-filled tail, then matmul_avx2.cpp's hsum pairing), 8 keys at a time with one
// transposed sum, and every block of 8 context keys read once for all queries. Values: out =
// inv_sum[qi] * sum_j p_j v_j in attention_values_avx2's order per query (one FMA per slot, slot
// order), every block of 64 context value rows read once for all queries. acc: 64 * n_queries
// floats of scratch.
void attention_scores_multi_avx2(const float* k, int64_t stride, const int32_t* table, int shift,
                                 int64_t n_context, const MultiQuery* queries, int64_t n_queries,
                                 int64_t head_dim, float scale);
void attention_values_multi_avx2(const float* v, int64_t stride, const int32_t* table, int shift,
                                 int64_t n_context, const MultiQuery* queries, int64_t n_queries,
                                 const float* inv_sum, int64_t head_dim, float* acc);

}  // namespace eagle2::detail

// ISA entry points of attention (attention_avx2.cpp, attention_avx512.cpp); declarations only, for
// the reason given in matmul_internal.h.
#pragma once

#include <cstdint>

namespace eagle2::detail {

// out[d] = inv_sum * sum_j p[j] * v_j[d], where v_j is the j-th visible slot (context slots
// 0..n_context-1, then extra[]) at v + slot * stride. For each d the sum runs over j in order with
// one FMA per slot, so it depends only on the sequence of slots, not on the context/extra split.
void attention_values_avx2(const float* v, int64_t stride, int64_t n_context, const int32_t* extra,
                           int64_t n_extra, const float* p, float inv_sum, int64_t head_dim,
                           float* out);
void attention_values_avx512(const float* v, int64_t stride, int64_t n_context,
                             const int32_t* extra, int64_t n_extra, const float* p, float inv_sum,
                             int64_t head_dim, float* out);

}  // namespace eagle2::detail

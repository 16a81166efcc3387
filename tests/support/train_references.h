// Double-precision reference forwards of src/train's layers and losses: what the float forwards
// are compared with and what the finite differences of the gradient checks differentiate.
#pragma once

#include <cstdint>
#include <vector>

#include "train/attention.h"

namespace eagle2::test::grad_check {

using DVec = std::vector<double>;  // as in support/grad_check.h

// y = x W^T (+ b): x [M, K], W [N, K], b [N] or null.
DVec linear_ref(const DVec& x, const DVec& W, const DVec* b, int64_t M, int64_t N, int64_t K);

DVec rmsnorm_ref(const DVec& x, const DVec& w, double eps, int64_t M, int64_t C);

// Rotary embedding of x [T, H, hd] by the per-position tables cos, sin [T, hd / 2].
DVec rope_ref(const DVec& x, const std::vector<float>& cos, const std::vector<float>& sin,
              int64_t T, int64_t H, int64_t hd);

// Causal grouped-query attention, q [batch * T, H * hd], k and v [batch * T, n_kv_heads * hd].
DVec attention_ref(const DVec& q, const DVec& k, const DVec& v, const train::AttentionShape& s);

// Mean cross-entropy over the rows whose mask is set; logits [M, V].
double ce_ref(const DVec& logits, const std::vector<int32_t>& tg, const std::vector<uint8_t>& mask,
              int64_t M, int64_t V);

DVec softmax_ref(const DVec& x, int64_t M, int64_t V);

// Mean cross-entropy of the student logits s against teacher probabilities, over masked-in rows.
double soft_ce_ref(const DVec& s, const DVec& teacher, const std::vector<uint8_t>& mask, int64_t M,
                   int64_t V);

}  // namespace eagle2::test::grad_check

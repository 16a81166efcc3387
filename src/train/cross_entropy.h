// Softmax cross-entropy on logits: against integer targets (language modelling) and against a
// teacher distribution (EAGLE's soft loss). Losses are means over the rows that count: all rows
// when mask is null, else the rows with mask[m] != 0; with no row counting, the loss and every
// gradient are zero.
#pragma once

#include <cstdint>

#include "core/thread_pool.h"
#include "kernels/ops.h"

namespace eagle2::train {

// Number of rows that count (M when mask is null).
int64_t count_rows(const uint8_t* mask, int64_t M);

// probs[M, V] = softmax(logits[M, V]) for every row (probs may alias logits); returns the mean over
// counted rows of -log softmax(logits)[m, targets[m]]. A counted target outside [0, V) is an Error;
// targets of rows that do not count are not read.
double cross_entropy_forward(float* probs, const float* logits, const int32_t* targets,
                             const uint8_t* mask, int64_t M, int64_t V, ThreadPool& pool);

// dlogits[M, V] += dloss / count * (probs - onehot(target)) on counted rows.
void cross_entropy_backward(float* dlogits, const float* probs, const int32_t* targets,
                            const uint8_t* mask, int64_t M, int64_t V, float dloss,
                            ThreadPool& pool);

// probs[M, V] = softmax(student_logits) (may alias them); returns the mean over counted rows of
// -sum_v teacher[m, v] * log softmax(student)[m, v]. teacher rows are probabilities (rows need not
// sum to exactly 1: the gradient below is exact for any row sum).
double soft_cross_entropy_forward(float* probs, const float* student_logits, const float* teacher,
                                  const uint8_t* mask, int64_t M, int64_t V, ThreadPool& pool);

// dlogits[M, V] += dloss / count * (probs * sum_v(teacher) - teacher) on counted rows.
void soft_cross_entropy_backward(float* dlogits, const float* probs, const float* teacher,
                                 const uint8_t* mask, int64_t M, int64_t V, float dloss,
                                 ThreadPool& pool);

// Rows are normalized with eagle2::softmax_inplace (kernels/ops.h), which also returns the
// log-sum-exp of the row.

}  // namespace eagle2::train

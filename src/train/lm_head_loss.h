// lm_head fused with its loss, forward and backward in one call, a chunk of rows at a time:
// the [M, V] logits of a 32k vocabulary never exist at once (64 rows x 32k x 4 B = 8 MiB of
// scratch), and rows that do not count (mask) cost nothing.
//
// Both functions: x [M, d] are the inputs of lm_head W [V, d] (f32/f16/bf16; frozen in EAGLE, so
// its gradient is optional). They return the mean loss over counted rows (all rows when mask is
// null; with none, 0) and, when dx / dW are not null, ADD dloss * d(mean loss) into
// dx [M, d] / dW [V, d]. dloss is the weight of this loss in the total (EAGLE: 0.1 for the soft
// loss). WT, when given, is W^T [d, V] made once by transpose_matrix() and reused across calls;
// otherwise the call transposes W itself when dx is wanted. Results do not depend on the thread
// count; they do depend on chunk_rows (dW is summed chunk by chunk).
#pragma once

#include <cstdint>

#include "core/tensor.h"
#include "core/thread_pool.h"

namespace eagle2::train {

// Cross-entropy of softmax(x W^T) against integer targets [M].
double lm_head_cross_entropy(const float* x, const int32_t* targets, const uint8_t* mask, int64_t M,
                             const Matrix& W, const Matrix* WT, float* dx, float* dW, float dloss,
                             ThreadPool& pool, int64_t chunk_rows = 64);

// Soft cross-entropy of softmax(x W^T / T) (student) against softmax(teacher_x W^T / T) (teacher,
// no gradient): EAGLE's classification loss with teacher_x the target's true features. T
// (temperature > 0) is the serving temperature the head is distilled for: up to the teacher's
// entropy (constant) this is the forward KL(p_T || q_T) between the distributions that sampled
// decoding at T compares (acceptance 1 - TV(p_T, q_T) >= 1 - sqrt(KL / 2), Pinsker). T = 1 is
// EAGLE's loss.
double lm_head_soft_cross_entropy(const float* x, const float* teacher_x, const uint8_t* mask,
                                  int64_t M, const Matrix& W, const Matrix* WT, float* dx,
                                  float* dW, float dloss, ThreadPool& pool, int64_t chunk_rows = 64,
                                  float temperature = 1.0f);

}  // namespace eagle2::train

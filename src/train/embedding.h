// Token embedding lookup, forward and backward.
#pragma once

#include <cstdint>

#include "core/tensor.h"
#include "core/thread_pool.h"

namespace eagle2::train {

// out[M, C] = table[ids[m], :] for a table [V, C] in f32, f16 or bf16 (widened exactly).
// An id outside [0, V) is an Error.
void embedding_forward(float* out, const int32_t* ids, int64_t M, const Matrix& table,
                       ThreadPool& pool);

// dtable[V, C] += dout[m, :] at row ids[m], for m in order. (A repeated id sums its rows in m
// order, whatever the thread count: tasks split the C columns, not the rows.)
void embedding_backward(float* dtable, const float* dout, const int32_t* ids, int64_t M, int64_t V,
                        int64_t C, ThreadPool& pool);

}  // namespace eagle2::train

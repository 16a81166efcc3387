// The SwiGLU gate of the LLaMA MLP: out = silu(gate) * up, elementwise.
#pragma once

#include <cstdint>

#include "core/thread_pool.h"

namespace eagle2::train {

// out[n] = silu(gate[n]) * up[n] (same bits as the inference kernel swiglu_inplace).
void swiglu_forward(float* out, const float* gate, const float* up, int64_t n, ThreadPool& pool);

// dgate[n] += dout * up * silu'(gate), dup[n] += dout * silu(gate), with
// silu'(g) = s * (1 + g * (1 - s)), s = sigmoid(g). Either gradient may be null.
void swiglu_backward(float* dgate, float* dup, const float* dout, const float* gate,
                     const float* up, int64_t n, ThreadPool& pool);

}  // namespace eagle2::train

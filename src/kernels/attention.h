// Attention of one query head over the keys it may see, read from the KV cache in slot order.
#pragma once

#include <cstdint>

#include "kernels/cpu.h"

namespace eagle2 {

struct AttentionKeys {
  const float* k = nullptr;  // slot s's key for this head at k + s * stride (head_dim floats)
  const float* v = nullptr;  // likewise for values
  int64_t stride = 0;        // floats between consecutive slots
  int64_t n_context = 0;     // slots [0, n_context) are visible (the committed context)
  const int32_t* extra = nullptr;  // then these slots, in increasing order (batch rows it may see)
  int64_t n_extra = 0;
};

// out[head_dim] = sum_j softmax(scale * q.k_j)_j * v_j over the visible slots, in order.
// Batch invariance: the visible slots are treated as ONE sequence (context then extras); the result
// depends only on that sequence of (k, v) and never on where the context/extra split falls, so a
// token decoded alone and the same token inside a prefill or tree batch give identical bits.
// scratch needs n_context + n_extra floats. With no visible slot the output is zero. `path` must be
// one the CPU supports (the caller checked it, e.g. it came from active_kernel_path()).
void attention_head(KernelPath path, const float* q, const AttentionKeys& keys, int64_t head_dim,
                    float scale, float* scratch, float* out);

}  // namespace eagle2

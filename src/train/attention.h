// Grouped-query causal self-attention, forward and backward, for B sequences of T tokens each.
//
// Layout (rows are tokens, b-major: row = b * T + t):
//   q, dq     [B*T, n_heads * head_dim]      (after RoPE)
//   k, v, dk, dv [B*T, n_kv_heads * head_dim] (k after RoPE)
//   out, dout [B*T, n_heads * head_dim]
//   probs     [B, n_heads, T, T]  softmax rows saved by forward; row t uses entries 0..t only
// Query head h reads kv head h / (n_heads / n_kv_heads), as in Hugging Face's repeat_kv.
// Scale 1/sqrt(head_dim), computed in float as the inference forward does.
//
// Speed: every product (scores, P V, and the four of the backward) runs on the SIMD matmul kernel
// over per-head contiguous copies; products with the causal P / dS use full rows of exact zeros
// above the diagonal (about half of those flops are wasted, still far faster than scalar loops).
// Memory: probs is B*H*T^2 floats (T = 512, H = 8: 8 MiB per sequence), plus two T x T scratch
// buffers per task in the backward. Fine for the head and small models; a longer context would
// save only the per-row log-sum-exp and recompute the scores (flash-attention style).
#pragma once

#include <cstdint>

#include "core/thread_pool.h"

namespace eagle2::train {

struct AttentionShape {
  int64_t batch = 1;       // B sequences
  int64_t seq_len = 0;     // T tokens each
  int64_t n_heads = 0;     // H
  int64_t n_kv_heads = 0;  // KV, divides H
  int64_t head_dim = 0;
};

void attention_forward(float* out, float* probs, const float* q, const float* k, const float* v,
                       const AttentionShape& s, ThreadPool& pool);

// dq, dk, dv += gradients (any may be null), from dout and the forward's q, k, v, probs.
// With S = scale * q.k, P = softmax(S), O = P V per head and sequence:
//   dV = P^T dO,  dP = dO V^T,  dS = P * (dP - rowsum(P * dP)),  dQ = scale dS K,  dK = scale dS^T
//   Q.
// A task owns one (sequence, kv head) and processes its query heads in order, so the gradients of
// a shared kv head are summed in a fixed order whatever the thread count.
void attention_backward(float* dq, float* dk, float* dv, const float* dout, const float* q,
                        const float* k, const float* v, const float* probs, const AttentionShape& s,
                        ThreadPool& pool);

}  // namespace eagle2::train

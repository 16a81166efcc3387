// EAGLE-3's "training-time test" attention, forward and backward (issue 15; EAGLE-3 paper section
// 3, the reference trainer's per-step key/value lists).
//
// Training unrolls the head S steps over a window of T positions. Step 0 is the head run on the
// target's features (a plain causal layer); step s >= 1 is the head run again on its own step
// s-1 outputs, as at inference, where the s-th draft of a chain sees the stable prefix plus its own
// ancestors. So the query of step s at position t attends to
//   - the step-0 keys at positions t' <= t (causal), and
//   - its own keys of steps 1..s at the same position t (one "diagonal" entry per earlier step),
// with ONE softmax over all t + 1 + s entries. Step s never sees step u >= 1 at another position.
//
// Layout (rows are tokens, b-major: row = b * T + t; B, T, H, KV, hd from AttentionShape;
// s = k.size() - 1):
//   q, dq         [B*T, H * hd]     step s's queries (after RoPE)
//   k[u], v[u]    [B*T, KV * hd]    keys (after RoPE) and values of step u = 0..s
//   dk[u], dv[u]  [B*T, KV * hd]    their gradients (the span may be empty, an entry null)
//   out, dout     [B*T, H * hd]
//   probs         [B, H, T, T + s]  row (b, h, t): column t' < T is step 0's key t' (an exact
//                                   zero for t' > t), column T + u - 1 is step u's diagonal key
// Ragged batches: with `lengths` (B entries in [0, T]) sequence b has T_b = lengths[b] rows and
// the rows are packed, sequence b's first row being T_0 + ... + T_{b-1} (N = sum T_b rows in
// every tensor above); its probs are a [H, T_b, T_b + s] block after those of sequences < b. The
// results for a sequence are those of a batch of that sequence alone with T = T_b. Empty lengths
// mean T each (the rectangular layout above).
// Query head h reads kv head h / (H / KV) (Hugging Face's repeat_kv); scale 1 / sqrt(hd) in float.
//
// Cost: the step-0 part is causal attention (T^2 / 2 dot products per head), run as in
// train/attention.h on the SIMD matmul kernel over per-head contiguous copies (products against
// the causal P / dS use full rows of exact zeros above the diagonal); the diagonal part adds s
// dot products and axpys per row, done directly. Row-by-row dot products for the step-0 part were
// about 30 % of a training step (perf, AVX2 machine); on the kernel the attention's forward plus
// backward runs about 2x faster (bench/bench_training).
// Results do not depend on the thread count (each task owns its outputs, the kernel runs serially
// inside a task, and sums go in a fixed order).
#pragma once

#include <span>

#include "core/thread_pool.h"
#include "train/attention.h"

namespace eagle2::train {

// out[N, H*hd] and probs (saved for the backward; [B, H, T, T+s], or the ragged blocks above) of
// step s = k.size() - 1 >= 0.
// With s = 0 this is plain causal attention (train/attention.h's, up to summation order).
void ttt_attention_forward(float* out, float* probs, const float* q,
                           std::span<const float* const> k, std::span<const float* const> v,
                           const AttentionShape& shape, ThreadPool& pool,
                           std::span<const int64_t> lengths = {});

// Gradients ADDED (train/ convention) from dout and the forward's inputs and probs. With
// S = scale * scores, P = softmax(S) over the row's t + 1 + s entries, O = sum_entries P * value:
//   dP = dO . value,  dS = P * (dP - sum(P * dP)),  dq = scale * sum dS * key,
//   dkey += scale * dS * q,  dvalue += P * dO
// so dk[0] / dv[0] receive gradients at every position t' <= t of the queries, and dk[u] / dv[u]
// (u >= 1) only at the query's own position. dq may be null; dk / dv are empty or have s + 1
// entries, each of which may be null. A task owns one (sequence, kv head) and walks its query
// heads and rows in order, so shared key gradients are summed in a fixed order.
void ttt_attention_backward(float* dq, std::span<float* const> dk, std::span<float* const> dv,
                            const float* dout, const float* q, std::span<const float* const> k,
                            std::span<const float* const> v, const float* probs,
                            const AttentionShape& shape, ThreadPool& pool,
                            std::span<const int64_t> lengths = {});

}  // namespace eagle2::train

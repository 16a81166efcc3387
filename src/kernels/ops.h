// Row-wise operations of the transformer block. Each row is processed alone, in a fixed order,
// so these are batch-invariant by construction.
#pragma once

#include <cstdint>

namespace eagle2 {

// out[i] = x[i] / sqrt(mean(x^2) + eps) * w[i] for one row of n. (out may alias x)
// The sum of squares is accumulated in double in a fixed order (more accurate than HF's float32,
// still deterministic); the scale is rounded to float and applied as HF does: w * (x * scale).
void rmsnorm(const float* x, const float* w, float eps, float* out, int64_t n);

// silu(gate) * up, elementwise, written to gate.
void swiglu_inplace(float* gate, const float* up, int64_t n);

// Rotate-half RoPE (the Hugging Face convention) on one head vector of head_dim:
// x[i], x[i + head_dim/2] rotated by angle with cos/sin taken from tables of head_dim/2 entries.
void rope_rotate_half(float* x, const float* cos, const float* sin, int64_t head_dim);

// cos[T, half], sin[T, half] for positions[T] and inv_freq[half] (half = head_dim / 2), in float32
// like Hugging Face (angle = float(position) * inv_freq) with cos/sin evaluated in double and
// rounded. The one place every forward (target, head, training) takes its RoPE angles from.
void rope_tables(float* cos, float* sin, const int32_t* positions, int64_t T, const float* inv_freq,
                 int64_t half);

// In-place softmax of n values (max-subtracted; sums in index order, in double; then each value is
// multiplied by the float reciprocal of the sum). Entries of -inf become 0. Returns the
// log-sum-exp of the input (-inf for n = 0), which the training losses need.
double softmax_inplace(float* x, int64_t n);

// log(sum_i exp(x_i)) of n values (-inf for n = 0), on the active kernel path: max-subtracted, in
// double (scalar, AVX2) or with the AVX-512 softmax's vector exp and double lanes. Fixed by the
// path and n: the same row always gives the same bits. For draft log-probabilities, where a
// scalar exp per vocabulary entry cost more than the head's lm_head.
float log_sum_exp(const float* x, int64_t n);

}  // namespace eagle2

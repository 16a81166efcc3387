// Linear layers (nn.Linear convention) forward and backward, and the transposed products the
// backward needs. Shapes are given in comments as [rows, cols], row-major.
//
// Gradient convention of the whole train/ module: every *_backward ADDS into its gradient buffers
// (llm.c style), so a tensor used twice (residual streams, tied weights) just receives two
// contributions; callers zero gradients before a step. A null gradient pointer means "not wanted"
// (frozen weight, or an input that is data).
//
// Speed: all three products run on the inference matmul kernel (kernels/matmul.h, SIMD, batch- and
// thread-count-invariant). That kernel computes x * B^T only, so the two other products are
// reduced to it by transposing operands into scratch, which costs O(MN + MK + NK) memory traffic
// next to O(MNK) flops:
//   dinp[M,K] = dout[M,N] W[N,K]     = matmul(dout, (W^T)[K,N])
//   dW[N,K]   = dout^T[N,M] inp[M,K] = matmul(dout^T, (inp^T)[K,M])
// Determinism: each output element is produced by one thread in a fixed order; results do not
// depend on the thread count.
#pragma once

#include <cstdint>
#include <vector>

#include "core/tensor.h"
#include "core/thread_pool.h"

namespace eagle2::train {

// dst[C, R] = src[R, C]^T for elements of elem_size bytes (2 or 4).
void transpose(const void* src, int64_t R, int64_t C, size_t elem_size, void* dst,
               ThreadPool& pool);

// An owned transposed copy of a weight matrix, in the weight's own dtype: for a frozen weight
// (lm_head, the target's embedding) it is made once and reused by many backward calls.
struct TransposedMatrix {
  std::vector<float> storage;  // float-typed so that f32 data is aligned; 2-byte dtypes pack in it
  Matrix m;                    // [W.cols, W.rows], pointing into storage
};
TransposedMatrix transpose_matrix(const Matrix& W, ThreadPool& pool);

// out[M, N] = inp[M, K] W[N, K]^T (+ bias[N] when bias is not null). W in f32, f16 or bf16.
void linear_forward(float* out, const float* inp, int64_t M, const Matrix& W, const float* bias,
                    ThreadPool& pool);

// dinp[M, K] += dout[M, N] W[N, K], given WT = W^T ([K, N], any dtype).
void linear_backward_input(float* dinp, const float* dout, int64_t M, const Matrix& WT,
                           ThreadPool& pool);

// dweight[N, K] += dout[M, N]^T inp[M, K].
void linear_backward_weight(float* dweight, const float* dout, const float* inp, int64_t M,
                            int64_t N, int64_t K, ThreadPool& pool);

// dbias[N] += sum over m of dout[m, :] (rows summed in order m = 0, 1, ...).
void linear_backward_bias(float* dbias, const float* dout, int64_t M, int64_t N, ThreadPool& pool);

// All of the above for y = inp W^T + b. Any of dinp, dweight, dbias may be null. W^T is built in
// scratch when dinp is wanted.
void linear_backward(float* dinp, float* dweight, float* dbias, const float* dout, const float* inp,
                     int64_t M, const Matrix& W, ThreadPool& pool);

}  // namespace eagle2::train

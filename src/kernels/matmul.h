// y[M, N] = x[M, K] * W[N, K]^T with W in f32, f16, bf16 or a quantized block type (used in place;
// quant_matmul.h), x and y in f32.
//
// Batch invariance (DESIGN principle 1): y[m, n] is computed by the same sequence of floating-point
// operations whatever M, whatever the other rows of x, and whatever the thread count: the K
// reduction follows a fixed blocked order that depends only on K and the kernel path. Rows are
// still batched: each block of W that is loaded is reused across all M rows, which is what makes a
// k-token verify batch cheap on a memory-bound CPU.
#pragma once

#include <cstdint>
#include <initializer_list>

#include "core/tensor.h"
#include "core/thread_pool.h"
#include "kernels/cpu.h"

namespace eagle2 {

// bf16 weights: the activations are rounded to bf16 first (on every path), as a bf16 model runs
// in PyTorch, and the products are accumulated in f32. Each product of two bf16 numbers is exact
// in f32, which lets the AVX-512 path use vdpbf16ps (two products per lane per instruction, twice
// the FMA rate, no widening of the weights) where the CPU has AVX512-BF16. f32 and f16 weights
// keep f32 activations.
//
// Uses active_kernel_path().
void matmul(const float* x, int64_t M, const Matrix& W, float* y, ThreadPool& pool);

// A chosen path (tests compare the SIMD paths against KernelPath::Scalar).
void matmul_with(KernelPath path, const float* x, int64_t M, const Matrix& W, float* y,
                 ThreadPool& pool);

// One input against several matrices of the same K (q/k/v, gate/up): ys[i][M, Ws[i].rows]. The
// dtypes may differ (a Q4_K_M file mixes Q4_K and Q6_K); matrices whose activations are prepared
// alike (f32, bf16-rounded, Q8_0 or Q8_K) share one dispatch.
// Every output has the bits matmul() gives it; what is saved is per call, not per element: the
// input is rounded to bf16 once, and all matrices' tasks go to the threads in one dispatch, so a
// small decode step waits for the threads once instead of once per matrix.
struct MatmulOut {
  const Matrix* W;
  float* y;
};
void matmul_multi(const float* x, int64_t M, std::initializer_list<MatmulOut> outs,
                  ThreadPool& pool);
void matmul_multi_with(KernelPath path, const float* x, int64_t M,
                       std::initializer_list<MatmulOut> outs, ThreadPool& pool);

// Dot product of n floats in the kernel path's fixed reduction order (used by attention).
float dot_f32(KernelPath path, const float* a, const float* b, int64_t n);

}  // namespace eagle2

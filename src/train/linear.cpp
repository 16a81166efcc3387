#include "train/linear.h"

#include <algorithm>
#include <cstring>

#include "core/error.h"
#include "core/quant_blocks.h"
#include "kernels/matmul.h"
#include "kernels/transpose.h"

namespace eagle2::train {

namespace {

// Grow-only scratch of the calling thread: a training step calls the same shapes over and over,
// so after the first step nothing is allocated.
float* scratch(int slot, size_t n) {
  thread_local std::vector<float> bufs[4];
  std::vector<float>& b = bufs[slot];
  if (b.size() < n) b.resize(n);
  return b.data();
}

template <class T>
void transpose_typed(const T* src, int64_t R, int64_t C, T* dst, ThreadPool& pool) {
  // Square tiles keep both the rows read and the rows written within a few cache lines; a task
  // owns a band of destination rows, so no two tasks write the same element. 32-bit elements
  // take the SIMD tile (8 x 8 blocks in registers; the strided scalar loop was a tenth of an
  // EAGLE-3 training step).
  constexpr int64_t B = 32;
  const int64_t n_bands = (C + B - 1) / B;
  const KernelPath path = active_kernel_path();
  pool.parallel_for(n_bands, [&](int64_t band) {
    const int64_t c0 = band * B, c1 = std::min(C, c0 + B);
    for (int64_t r0 = 0; r0 < R; r0 += B) {
      const int64_t r1 = std::min(R, r0 + B);
      if constexpr (sizeof(T) == 4) {
        transpose32(path, src + r0 * C + c0, C, r1 - r0, c1 - c0, dst + c0 * R + r0, R);
      } else {
        for (int64_t c = c0; c < c1; ++c)
          for (int64_t r = r0; r < r1; ++r) dst[c * R + r] = src[r * C + c];
      }
    }
  });
}

void check_shape(const Matrix& W, const char* what) {
  if (W.rows < 0 || W.cols < 0) fail(what, ": negative shape [", W.rows, ", ", W.cols, "]");
}

// dst[i] += src[i] over n elements, split into fixed chunks.
void add_into(float* dst, const float* src, int64_t n, ThreadPool& pool) {
  constexpr int64_t kChunk = 1 << 14;
  pool.parallel_for((n + kChunk - 1) / kChunk, [&](int64_t t) {
    const int64_t i0 = t * kChunk, i1 = std::min(n, i0 + kChunk);
    for (int64_t i = i0; i < i1; ++i) dst[i] += src[i];
  });
}

}  // namespace

void transpose(const void* src, int64_t R, int64_t C, size_t elem_size, void* dst,
               ThreadPool& pool) {
  if (R < 0 || C < 0) fail("transpose: negative shape [", R, ", ", C, "]");
  if (elem_size == 4) {
    transpose_typed(static_cast<const uint32_t*>(src), R, C, static_cast<uint32_t*>(dst), pool);
  } else if (elem_size == 2) {
    transpose_typed(static_cast<const uint16_t*>(src), R, C, static_cast<uint16_t*>(dst), pool);
  } else {
    fail("transpose: unsupported element size ", elem_size);
  }
}

TransposedMatrix transpose_matrix(const Matrix& W, ThreadPool& pool) {
  check_shape(W, "transpose_matrix");
  TransposedMatrix t;
  if (is_block_dtype(W.dtype)) {
    // Quantized blocks run along rows and cannot be transposed as they are: training works on the
    // dequantized values (an f32 copy for the trainer's lifetime; inference never makes one).
    std::vector<float> wide(static_cast<size_t>(W.rows * W.cols));
    std::vector<unsigned char> row(dtype_bytes(W.dtype, W.cols));
    for (int64_t r = 0; r < W.rows; ++r) {  // any layout (core/tensor.h)
      row_blocks(W, r, row.data());
      convert_to_f32(W.dtype, row.data(), wide.data() + r * W.cols, static_cast<size_t>(W.cols));
    }
    t.storage.resize(wide.size());
    transpose(wide.data(), W.rows, W.cols, 4, t.storage.data(), pool);
    t.m = Matrix{DType::F32, W.cols, W.rows, t.storage.data()};
    return t;
  }
  const size_t bytes = static_cast<size_t>(W.rows * W.cols) * dtype_size(W.dtype);
  t.storage.resize((bytes + 3) / 4);
  transpose(W.data, W.rows, W.cols, dtype_size(W.dtype), t.storage.data(), pool);
  t.m = Matrix{W.dtype, W.cols, W.rows, t.storage.data()};
  return t;
}

void linear_forward(float* out, const float* inp, int64_t M, const Matrix& W, const float* bias,
                    ThreadPool& pool) {
  check_shape(W, "linear_forward");
  matmul(inp, M, W, out, pool);
  if (!bias) return;
  const int64_t N = W.rows;
  constexpr int64_t kRows = 64;
  pool.parallel_for((M + kRows - 1) / kRows, [&](int64_t t) {
    const int64_t m1 = std::min(M, (t + 1) * kRows);
    for (int64_t m = t * kRows; m < m1; ++m)
      for (int64_t n = 0; n < N; ++n) out[m * N + n] += bias[n];
  });
}

void linear_backward_input(float* dinp, const float* dout, int64_t M, const Matrix& WT,
                           ThreadPool& pool) {
  check_shape(WT, "linear_backward_input");
  const int64_t K = WT.rows;
  if (M == 0 || K == 0) return;
  float* tmp = scratch(0, static_cast<size_t>(M * K));
  matmul(dout, M, WT, tmp, pool);
  add_into(dinp, tmp, M * K, pool);
}

void linear_backward_weight(float* dweight, const float* dout, const float* inp, int64_t M,
                            int64_t N, int64_t K, ThreadPool& pool) {
  if (M < 0 || N < 0 || K < 0) fail("linear_backward_weight: negative shape");
  if (N == 0 || K == 0) return;
  if (M == 0) return;  // no rows, no contribution
  float* doutT = scratch(1, static_cast<size_t>(N * M));
  float* inpT = scratch(2, static_cast<size_t>(K * M));
  float* tmp = scratch(3, static_cast<size_t>(N * K));
  transpose(dout, M, N, 4, doutT, pool);
  transpose(inp, M, K, 4, inpT, pool);
  matmul(doutT, N, Matrix{DType::F32, K, M, inpT}, tmp, pool);
  add_into(dweight, tmp, N * K, pool);
}

void linear_backward_bias(float* dbias, const float* dout, int64_t M, int64_t N, ThreadPool& pool) {
  // A task owns a block of columns and walks all rows in order: a fixed summation order per
  // column whatever the thread count, with rows read contiguously within the block.
  constexpr int64_t kCols = 64;
  pool.parallel_for((N + kCols - 1) / kCols, [&](int64_t t) {
    const int64_t n0 = t * kCols, n1 = std::min(N, n0 + kCols);
    for (int64_t m = 0; m < M; ++m)
      for (int64_t n = n0; n < n1; ++n) dbias[n] += dout[m * N + n];
  });
}

void linear_backward(float* dinp, float* dweight, float* dbias, const float* dout, const float* inp,
                     int64_t M, const Matrix& W, ThreadPool& pool) {
  check_shape(W, "linear_backward");
  if (dbias) linear_backward_bias(dbias, dout, M, W.rows, pool);
  if (dweight) linear_backward_weight(dweight, dout, inp, M, W.rows, W.cols, pool);
  if (dinp && M > 0) {
    // Slot 1 is free again once the weight gradient is done; slot 0 is linear_backward_input's.
    const size_t elems = static_cast<size_t>(W.rows * W.cols);
    float* wt = scratch(1, (elems * dtype_size(W.dtype) + 3) / 4);
    transpose(W.data, W.rows, W.cols, dtype_size(W.dtype), wt, pool);
    linear_backward_input(dinp, dout, M, Matrix{W.dtype, W.cols, W.rows, wt}, pool);
  }
}

}  // namespace eagle2::train

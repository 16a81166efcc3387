// Matmul dispatch, work split and the portable reference path.
//
// The work is cut into tasks of (a block of up to kRowBlock rows of x) x (a block of W rows,
// i.e. output columns). Within a task the ISA kernel walks rows in groups of four and the block's
// columns in small tiles, so a block of W stays in L1/L2 while every row of the row block uses it.
// None of that affects any output bit: each y[m, n] has its own accumulator with a reduction order
// fixed by K and the path alone (see the ISA files), so the split, the thread count and M are free
// to be chosen for speed.
#include "kernels/matmul.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "core/error.h"
#include "core/quant_blocks.h"
#include "kernels/matmul_internal.h"
#include "kernels/quant_internal.h"
#include "kernels/quant_matmul.h"
#include "kernels/sanitizer_regions.h"

namespace eagle2 {

namespace {

// Portable reference order for one (m, n): 8 interleaved partial sums (lane j takes k = j mod 8),
// the last K % 8 elements go to lanes 0.., then a fixed pairwise sum. Plain multiply then add
// (the build uses -ffp-contract=off), so every x86-64 build computes the same bits.
float dot_scalar(const float* a, const float* b, int64_t n) {
  float s[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t k = 0;
  for (; k + 8 <= n; k += 8)
    for (int j = 0; j < 8; ++j) s[j] += a[k + j] * b[k + j];
  for (int j = 0; k + j < n; ++j) s[j] += a[k + j] * b[k + j];
  return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
}

// Reference kernel: each W row is widened to f32 once (exactly) and reused for all rows of x.
void matmul_range_scalar(const float* x, int64_t M_begin, int64_t M_end, const Matrix& W, float* y,
                         int64_t n0, int64_t n1) {
  const int64_t K = W.cols, N = W.rows;
  thread_local std::vector<float> wrow;
  if (W.dtype != DType::F32 && static_cast<int64_t>(wrow.size()) < K)
    wrow.resize(static_cast<size_t>(K));
  for (int64_t n = n0; n < n1; ++n) {
    const float* w;
    if (W.dtype == DType::F32) {
      w = static_cast<const float*>(W.row(n));
    } else {
      convert_to_f32(W.dtype, W.row(n), wrow.data(), static_cast<size_t>(K));
      w = wrow.data();
    }
    for (int64_t m = M_begin; m < M_end; ++m) y[m * N + n] = dot_scalar(x + m * K, w, K);
  }
}

// Rows of x per task: bounds how much of x a W block is paired with (x rows stream through L2/L3
// once per W block) while leaving whole decode/verify batches in one task.
constexpr int64_t kRowBlock = 64;

// The quantized-weight kernel of `path` (each takes every block type; all give the same bits,
// quant_matmul.h).
using QuantRange = void (*)(DType, const detail::QuantRowsView&, const void*, float*, int64_t,
                            int64_t, int64_t, int64_t, int64_t);
QuantRange quant_kernel(KernelPath path) {
  switch (path) {
    case KernelPath::Scalar:
      return detail::quant_matmul_range_scalar;
    case KernelPath::Avx2:
      return detail::quant_matmul_range_avx2;
    case KernelPath::Avx512:
      return cpu_has_avx512_vnni() ? detail::quant_matmul_range_avx512
                                   : detail::quant_matmul_range_avx2;
  }
  return detail::quant_matmul_range_scalar;
}

// Output columns per task: a multiple of granule (whole tiles: 8, or 16 for quantized weights).
// Up to 8 rows of x (decoding, a verify tree): each thread gets one contiguous share of W. Long
// sequential streams per thread read memory fastest: against blocks of 64 W rows handed out in
// turn, 1.1B-shape bf16 decoding on 2 threads went from 23 to 28-30 tokens/s and an 8-token
// verification of the bundled model from 2.5 to 2.2 ms (bf16) and 2.0 to 1.8 ms (Q4_0). More
// rows: small enough that the block of W rows fits comfortably in L2 next to the x rows (the
// kernels pass over it once per group of x rows), and small enough to give every thread several
// tasks.
int64_t column_block(int64_t N, int64_t K, DType dt, int n_threads, int64_t granule, int64_t M) {
  if (M <= 8) {
    const int64_t per = (N + n_threads - 1) / n_threads;
    return std::max<int64_t>(granule, (per + granule - 1) / granule * granule);
  }
  const int64_t row_bytes = std::max<int64_t>(1, static_cast<int64_t>(dtype_bytes(dt, K)));
  const int64_t by_cache = std::max<int64_t>(granule, (256 * 1024 / row_bytes) / granule * granule);
  const int64_t per_thread_tasks = 4;
  const int64_t per_task = granule * per_thread_tasks * n_threads;
  const int64_t by_balance = std::max<int64_t>(granule, (N + per_task - 1) / per_task * granule);
  return std::min(by_cache, by_balance);
}

// A matrix in MatrixLayout::kRowGroups16: the AVX-512 VNNI kernel reads the groups as they are;
// another path (or a range not in whole groups) gets each row back in the row layout and runs its
// per-row kernel on it, which gives the same bits (quant_matmul.h).
void quant_grouped(KernelPath path, QuantRange per_row, const detail::QuantRowsView& x,
                   const Matrix& W, float* y, int64_t ldy, int64_t m0, int64_t m1, int64_t n0,
                   int64_t n1) {
  if (path == KernelPath::Avx512 && cpu_has_avx512_vnni() && n0 % 16 == 0 && n1 % 16 == 0) {
    if (W.dtype == DType::Q4_K || W.dtype == DType::Q6_K)
      detail::quant_kgrouped16_range_avx512(W.dtype, x, W.data, y, ldy, m0, m1, n0, n1);
    else
      detail::quant_grouped16_range_avx512(W.dtype, x, W.data, y, ldy, m0, m1, n0, n1);
    return;
  }
  thread_local std::vector<unsigned char> row;
  row.resize(dtype_bytes(W.dtype, W.cols));
  detail::check_region(row.data(), row.size());
  for (int64_t n = n0; n < n1; ++n) {
    row_blocks(W, n, row.data());
    per_row(W.dtype, x, row.data(), y + n, ldy, m0, m1, 0, 1);
  }
}

// How the activations are prepared for a weight dtype. Matrices sharing one input and one format
// run in one dispatch; a mixed group (Q4_K_M files put Q6_K next to Q4_K in q/k/v) only needs the
// format to match, since each task calls the kernel of its own matrix's dtype.
enum class ActFormat { F32, BF16, Q8_0, Q8_K };
ActFormat act_format(DType dt) {
  switch (dt) {
    case DType::BF16:
      return ActFormat::BF16;
    default:
      // Every block type: Q8_0 activations for the 32-element blocks, Q8_K for the superblocks.
      if (!is_block_dtype(dt)) return ActFormat::F32;
      return dtype_block_elements(dt) == 32 ? ActFormat::Q8_0 : ActFormat::Q8_K;
  }
}

// One dispatch for matrices whose dtypes share an activation format.
void run_group(KernelPath path, const float* x, int64_t M, int64_t K, const MatmulOut* outs,
               size_t n_outs, ThreadPool& pool) {
  const DType dt0 = outs[0].W->dtype;
  const ActFormat format = act_format(dt0);

  // Quantized weights: quantize the activations per block once per call (quant_matmul.h).
  thread_local QuantizedRows xq;
  const bool quantized = is_block_dtype(dt0);
  if (quantized) quantize_rows(dt0, x, M, K, &xq, path);
  const detail::QuantRowsView xqv{xq.qs.data(), xq.scale.data(), xq.sums.data(), K,
                                  xq.block,     xq.sum_group};

  // bf16 weights: round the activations to bf16 once per call (see matmul.h).
  thread_local std::vector<uint16_t> xb;
  thread_local std::vector<float> xr;
  const bool bf16_dot =
      format == ActFormat::BF16 && path == KernelPath::Avx512 && cpu_has_avx512_bf16();
  const float* xin = x;
  if (format == ActFormat::BF16) {
    const size_t n = static_cast<size_t>(M * K);
    if (bf16_dot) {
      if (xb.size() < n) xb.resize(n);
      for (size_t i = 0; i < n; ++i) xb[i] = f32_to_bf16(x[i]);
    } else {
      if (xr.size() < n) xr.resize(n);
      for (size_t i = 0; i < n; ++i) xr[i] = bf16_to_f32(f32_to_bf16(x[i]));
      xin = xr.data();
    }
  }

  // What the kernels will read and write, checked whole under ASan (sanitizer_regions.h).
  const size_t MK = static_cast<size_t>(M * K);
  if (quantized) {
    detail::check_region(xqv.qs, MK);
    detail::check_region(xqv.scale, MK / static_cast<size_t>(xqv.block) * sizeof(float));
    detail::check_region(xqv.sums, MK / static_cast<size_t>(xqv.sum_group) * sizeof(int32_t));
  } else if (bf16_dot) {
    detail::check_region(xb.data(), MK * sizeof(uint16_t));
  } else {
    detail::check_region(xin, MK * sizeof(float));
  }
  for (size_t i = 0; i < n_outs; ++i) {
    const Matrix& W = *outs[i].W;
    detail::check_region(W.data, static_cast<size_t>(W.rows) * dtype_bytes(W.dtype, K));
    detail::check_region(outs[i].y, static_cast<size_t>(M * W.rows) * sizeof(float));
  }

  // Each matrix is cut into (row block) x (column block) tasks as if it were alone; the tasks of
  // all matrices are numbered one after another.
  struct Plan {
    const Matrix* W;
    float* y;
    int64_t nb, n_col_blocks, first_task;
    QuantRange qkernel;
  };
  Plan plans[8];
  const int64_t n_row_blocks = (M + kRowBlock - 1) / kRowBlock;
  int64_t n_tasks = 0, n_plans = 0;
  for (size_t i = 0; i < n_outs; ++i) {
    const MatmulOut& o = outs[i];
    const int64_t N = o.W->rows;
    if (N == 0) continue;
    // Quantized weights: whole groups of sixteen columns, which the AVX-512 kernels that put
    // sixteen weight rows in the lanes of a register need (a part group takes a slower kernel).
    const int64_t granule = o.W->layout == MatrixLayout::kRowGroups16 || quantized ? 16 : 8;
    const int64_t nb = column_block(N, K, o.W->dtype, pool.size(), granule, M);
    const int64_t n_col_blocks = (N + nb - 1) / nb;
    plans[n_plans++] =
        Plan{o.W, o.y, nb, n_col_blocks, n_tasks, quantized ? quant_kernel(path) : nullptr};
    n_tasks += n_row_blocks * n_col_blocks;
  }
  const uint16_t* xbp = xb.data();
  pool.parallel_for(n_tasks, [&](int64_t task) {
    int64_t p = n_plans - 1;
    while (plans[p].first_task > task) --p;
    const Plan& pl = plans[p];
    const Matrix& W = *pl.W;
    const int64_t N = W.rows, local = task - pl.first_task;
    const int64_t m0 = (local / pl.n_col_blocks) * kRowBlock, m1 = std::min(M, m0 + kRowBlock);
    const int64_t n0 = (local % pl.n_col_blocks) * pl.nb, n1 = std::min(N, n0 + pl.nb);
    if (pl.qkernel != nullptr) {
      if (W.layout == MatrixLayout::kRowGroups16)
        quant_grouped(path, pl.qkernel, xqv, W, pl.y, N, m0, m1, n0, n1);
      else
        pl.qkernel(W.dtype, xqv, W.data, pl.y, N, m0, m1, n0, n1);
      return;
    }
    if (bf16_dot) {
      detail::matmul_range_avx512_bf16dot(xbp, K, W.data, K, pl.y, N, m0, m1, n0, n1);
      return;
    }
    switch (path) {
      case KernelPath::Scalar:
        matmul_range_scalar(xin, m0, m1, W, pl.y, n0, n1);
        break;
      case KernelPath::Avx2:
        detail::matmul_range_avx2(W.dtype, xin, K, W.data, K, pl.y, N, m0, m1, n0, n1);
        break;
      case KernelPath::Avx512:
        detail::matmul_range_avx512(W.dtype, xin, K, W.data, K, pl.y, N, m0, m1, n0, n1);
        break;
    }
  });
}

}  // namespace

void matmul_multi_with(KernelPath path, const float* x, int64_t M,
                       std::initializer_list<MatmulOut> outs, ThreadPool& pool) {
  if (!cpu_supports(path))
    fail("matmul: kernel path ", kernel_path_name(path), " is not supported by this CPU");
  if (outs.size() == 0) return;
  if (outs.size() > 8) fail("matmul_multi: at most 8 matrices per call (got ", outs.size(), ")");
  const Matrix& W0 = *outs.begin()->W;
  const int64_t K = W0.cols;
  for (const MatmulOut& o : outs) {
    const Matrix& W = *o.W;
    if (M < 0 || W.rows < 0 || W.cols < 0)
      fail("matmul: negative shape M=", M, " W=[", W.rows, ", ", W.cols, "]");
    if (W.cols != K)
      fail("matmul: matrices of one input must share K (got [", W.rows, ", ", W.cols, "] with [",
           W0.rows, ", ", K, "])");
  }
  if (M == 0) return;
  if (K == 0) {
    for (const MatmulOut& o : outs) std::fill(o.y, o.y + M * o.W->rows, 0.0f);
    return;
  }
  // Group by activation format, in order of first appearance.
  MatmulOut group[8];
  bool done[8] = {};
  const MatmulOut* all = outs.begin();
  for (size_t i = 0; i < outs.size(); ++i) {
    if (done[i]) continue;
    size_t n = 0;
    for (size_t j = i; j < outs.size(); ++j)
      if (!done[j] && act_format(all[j].W->dtype) == act_format(all[i].W->dtype)) {
        group[n++] = all[j];
        done[j] = true;
      }
    run_group(path, x, M, K, group, n, pool);
  }
}

void matmul_with(KernelPath path, const float* x, int64_t M, const Matrix& W, float* y,
                 ThreadPool& pool) {
  matmul_multi_with(path, x, M, {MatmulOut{&W, y}}, pool);
}

void matmul(const float* x, int64_t M, const Matrix& W, float* y, ThreadPool& pool) {
  matmul_with(active_kernel_path(), x, M, W, y, pool);
}

void matmul_multi(const float* x, int64_t M, std::initializer_list<MatmulOut> outs,
                  ThreadPool& pool) {
  matmul_multi_with(active_kernel_path(), x, M, outs, pool);
}

float dot_f32(KernelPath path, const float* a, const float* b, int64_t n) {
  // No cpu_supports() check here: attention calls this per key, with a path it has already
  // validated (the paths come from active_kernel_path() or a test's explicit check).
  if (path != KernelPath::Scalar) {
    detail::check_region(a, static_cast<size_t>(n) * sizeof(float));
    detail::check_region(b, static_cast<size_t>(n) * sizeof(float));
  }
  switch (path) {
    case KernelPath::Avx2:
      return detail::dot_f32_avx2(a, b, n);
    case KernelPath::Avx512:
      return detail::dot_f32_avx512(a, b, n);
    case KernelPath::Scalar:
      break;
  }
  return dot_scalar(a, b, n);
}

}  // namespace eagle2

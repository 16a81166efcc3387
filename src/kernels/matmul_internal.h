// Entry points of the ISA-specific matmul translation units (matmul_avx2.cpp, matmul_avx512.cpp),
// used by the dispatcher in matmul.cpp. Only plain declarations live here: an inline function
// shared with an ISA-flagged file could be emitted with AVX-512 instructions and then picked by
// the linker for baseline callers, which would crash on an AVX2-only CPU.
#pragma once

#include <cstdint>

#include "core/dtype.h"

namespace eagle2::detail {

// y[m * ldy + n] = sum_k x[m * ldx + k] * w[n * K + k] for m in [m0, m1), n in [n0, n1), with w of
// dtype `dt` and row-major [N, K]. Every (m, n) follows the path's fixed reduction order.
void matmul_range_avx2(DType dt, const float* x, int64_t ldx, const void* w, int64_t K, float* y,
                       int64_t ldy, int64_t m0, int64_t m1, int64_t n0, int64_t n1);
void matmul_range_avx512(DType dt, const float* x, int64_t ldx, const void* w, int64_t K, float* y,
                         int64_t ldy, int64_t m0, int64_t m1, int64_t n0, int64_t n1);

// bf16 weights with activations already rounded to bf16 (xb, row stride ldx): vdpbf16ps over pairs
// of k, f32 accumulators. Requires cpu_has_avx512_bf16().
void matmul_range_avx512_bf16dot(const uint16_t* xb, int64_t ldx, const void* w, int64_t K,
                                 float* y, int64_t ldy, int64_t m0, int64_t m1, int64_t n0,
                                 int64_t n1);

// Exactly the op sequence of one (m, n) of the matching matmul_range with an f32 W.
float dot_f32_avx2(const float* a, const float* b, int64_t n);
float dot_f32_avx512(const float* a, const float* b, int64_t n);

}  // namespace eagle2::detail

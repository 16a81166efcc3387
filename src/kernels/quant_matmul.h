// Matmul against quantized weights (Q8_0, Q4_0, Q4_K, Q6_K, and the types of core/quant_codes.h:
// Q4_1, Q5_0, Q5_1, IQ4_NL, Q5_K, Q3_K, Q2_K, IQ4_XS), reading the blocks in place with integer
// dot products, on activations quantized per block as llama.cpp does: Q8_0 activations (32 int8
// and one scale per block) for the 32-element types, Q8_K (256 int8, one f32 scale, sums of every
// 16) for the 256-element ones.
//
// The reduction order of one output y[m, n], the same on every kernel path (scalar, AVX2,
// AVX-512), so each path gives the reference's bits and batch invariance holds by construction:
//   1. Per scale block i of the row (a 32-block for Q8_0/Q4_0, a 256-superblock for the K-quants)
//      an exact int32 sum:
//        Q8_0  s = sum w*x                 Q4_0  s = sum (q - 8)*x
//        Q4_K  s = sum_j sc_j * sum q*x, mins = sum_j m_j * sum x     (j: 32-element sub-blocks)
//        Q6_K  s = sum_j sc_j * sum (q - 32)*x                         (j: 16-element groups)
//        Q4_1, Q5_0, Q5_1, IQ4_NL: s = sum q*x over the block's codes as core/quant_codes.h
//              decodes them (Q5_0's q - 16, IQ4_NL's table values)
//        Q5_K, Q3_K, Q2_K, IQ4_XS: s = sum_g sc_g * sum q*x over the 16-element groups g, and for
//              Q5_K/Q2_K mins = sum_g m_g * (sum of group g's x)
//   2. One float term per scale block, each product rounded to f32, no fused multiply-add:
//        term = (dw * dx) * float(s)                       (Q8_0, Q4_0, Q6_K)
//        term = (dw * dx) * float(s) - (dmin * dx) * float(mins)   (Q4_K, Q5_K, Q2_K)
//        term = (dw * dx) * float(s) + (m * dx) * float(sum of the block's x)   (Q4_1, Q5_1)
//      with dw, dmin the block's f16 scales widened and dx the activation block's scale.
//   3. Eight partial sums: acc[i % 8] += term_i in block order, all starting at +0.0f; then
//      y = ((acc0 + acc1) + (acc2 + acc3)) + ((acc4 + acc5) + (acc6 + acc7)).
// Activation quantization is row-local and done once per call, by the reference code or by its
// AVX-512 twin (the same operations per element: the same bytes, tested), so it cannot break the
// contract either.
#pragma once

#include <cstdint>
#include <vector>

#include "core/dtype.h"
#include "kernels/cpu.h"

namespace eagle2 {

// Rows of activations quantized for one weight block type.
struct QuantizedRows {
  int64_t rows = 0, cols = 0;
  int64_t block = 32;         // elements per activation scale: 32 (Q8_0) or 256 (Q8_K)
  std::vector<int8_t> qs;     // [rows, cols], each in -127..127
  std::vector<float> scale;   // [rows, cols / block]: x ~ scale * q
  std::vector<int32_t> sums;  // [rows, cols / block * 2 or / 32]: see sum_group
  int64_t sum_group = 32;     // qs summed per entry of sums: 32 (Q8_0), 16 (Q8_K, ggml's bsums)
};

// Fills q for x[M, K] as `weights` needs it (K a whole number of that type's blocks):
//   Q8_0 / Q4_0 weights: ggml's quantize_row_q8_0 (scale amax / 127 rounded to f16, q = x / scale
//   rounded to nearest even);
//   Q4_K / Q6_K weights: ggml's quantize_row_q8_K (scale = max / -127 with max the element of
//   largest magnitude, f32, q = min(127, nearest-even(x * -127 / max))).
// `path` picks the code (AVX-512 on that path, the reference otherwise); the bytes are the same.
void quantize_rows(DType weights, const float* x, int64_t M, int64_t K, QuantizedRows* q,
                   KernelPath path = KernelPath::Scalar);

}  // namespace eagle2

// Entry points of the quantized-weight kernels (quant_matmul.h gives the reduction order every
// one of them follows). Plain declarations only, for the reason given in matmul_internal.h.
#pragma once

#include <cstdint>

#include "core/dtype.h"

namespace eagle2::detail {

// One row block of quantized activations, as the kernels read them (see QuantizedRows).
struct QuantRowsView {
  const int8_t* qs;     // row m at qs + m * cols
  const float* scale;   // row m at scale + m * (cols / block)
  const int32_t* sums;  // sums of sum_group consecutive qs; row m at sums + m * (cols / sum_group)
  int64_t cols;
  int64_t block;      // 32 (Q8_0 activations) or 256 (Q8_K)
  int64_t sum_group;  // 32 (Q8_0) or 16 (Q8_K)
};

// One row of activations quantized as quantize_rows (quant_matmul.h) does, in AVX-512
// (quant_rows_avx512.cpp): codes q[K], scales per 32 (Q8_0) or 256 (Q8_K), sums per 32 / 16.
void quantize_row_q8_0_avx512(const float* x, int64_t K, int8_t* q, float* scale, int32_t* sums);
void quantize_row_q8_k_avx512(const float* x, int64_t K, int8_t* q, float* scale, int32_t* sums);

// y[m * ldy + n] for m in [m0, m1), n in [n0, n1): weight rows of `dt` blocks (row n at
// w + n * row_bytes), K = x.cols.
void quant_matmul_range_scalar(DType dt, const QuantRowsView& x, const void* w, float* y,
                               int64_t ldy, int64_t m0, int64_t m1, int64_t n0, int64_t n1);
void quant_matmul_range_avx2(DType dt, const QuantRowsView& x, const void* w, float* y, int64_t ldy,
                             int64_t m0, int64_t m1, int64_t n0, int64_t n1);
// Requires AVX512-VNNI (cpu_has_avx512_vnni()); without it the AVX-512 path runs the AVX2 kernel,
// which gives the same bits.
void quant_matmul_range_avx512(DType dt, const QuantRowsView& x, const void* w, float* y,
                               int64_t ldy, int64_t m0, int64_t m1, int64_t n0, int64_t n1);

// The K-quant (Q4_K, Q6_K) halves of the two above, which route those types here
// (quant_kmatmul_avx2.cpp, quant_kmatmul_avx512.cpp; the latter requires AVX512-VNNI too).
void quant_kmatmul_range_avx2(DType dt, const QuantRowsView& x, const void* w, float* y,
                              int64_t ldy, int64_t m0, int64_t m1, int64_t n0, int64_t n1);
void quant_kmatmul_range_avx512(DType dt, const QuantRowsView& x, const void* w, float* y,
                                int64_t ldy, int64_t m0, int64_t m1, int64_t n0, int64_t n1);

// The types of core/quant_codes.h (quant_codes_avx2.cpp): both ISA paths run this AVX2 kernel
// for the columns the columns-in-lanes kernels below leave (Q5_K: quant_kcols*; Q4_1, Q5_0, Q5_1,
// IQ4_NL on AVX-512 VNNI: quant_codes_cols16), and for every column of Q3_K, Q2_K, IQ4_XS.
void quant_codes_range_avx2(DType dt, const QuantRowsView& x, const void* w, float* y, int64_t ldy,
                            int64_t m0, int64_t m1, int64_t n0, int64_t n1);

// Q4_K/Q5_K/Q6_K with sixteen weight rows per register, for several activation rows
// (quant_kcols16_avx512.cpp): columns n0 .. r - 1 in whole groups of sixteen; returns r, the first
// column left to quant_kmatmul_range_avx512's (Q5_K: quant_codes_range_avx2's) per-column kernel
// (the same bits). Requires AVX512-VNNI.
int64_t quant_kcols16_range_avx512(DType dt, const QuantRowsView& x, const void* w, float* y,
                                   int64_t ldy, int64_t m0, int64_t m1, int64_t n0, int64_t n1);

// Q4_K/Q5_K/Q6_K with eight weight rows per register, for several activation rows
// (quant_kcols8_avx2.cpp): columns n0 .. r - 1 in whole groups of eight; returns r, the first
// column left to quant_kmatmul_range_avx2's (Q5_K: quant_codes_range_avx2's) per-column kernel
// (the same bits). Row layout only.
int64_t quant_kcols8_range_avx2(DType dt, const QuantRowsView& x, const void* w, float* y,
                                int64_t ldy, int64_t m0, int64_t m1, int64_t n0, int64_t n1);

// Q4_1/Q5_0/Q5_1/IQ4_NL with sixteen weight rows per register (quant_codes_cols16_avx512.cpp):
// columns n0 .. r - 1 in whole groups of sixteen; returns r, the first column left to
// quant_codes_range_avx2 (the same bits); other types: returns n0. Requires AVX512-VNNI.
int64_t quant_codes_cols16_range_avx512(DType dt, const QuantRowsView& x, const void* w, float* y,
                                        int64_t ldy, int64_t m0, int64_t m1, int64_t n0,
                                        int64_t n1);

// Q4_1/Q5_0/Q5_1 with eight weight rows per register (quant_codes_cols8_avx2.cpp): columns n0 ..
// r - 1 in whole groups of eight; returns r, the first column left to quant_codes_range_avx2 (the
// same bits); other types: returns n0.
int64_t quant_codes_cols8_range_avx2(DType dt, const QuantRowsView& x, const void* w, float* y,
                                     int64_t ldy, int64_t m0, int64_t m1, int64_t n0, int64_t n1);

// Q8_0/Q4_0 with sixteen weight rows per register (quant_rows16_avx512.cpp): columns n0 .. r - 1
// in whole groups of sixteen; returns r, the first column left to quant_matmul_range_avx512's
// other kernel (the same bits). Requires AVX512-VNNI.
int64_t quant_rows16_range_avx512(DType dt, const QuantRowsView& x, const void* w, float* y,
                                  int64_t ldy, int64_t m0, int64_t m1, int64_t n0, int64_t n1);

// Q8_0/Q4_0 matrices in MatrixLayout::kRowGroups16 (core/tensor.h); n0 and n1 multiples of 16.
// Requires AVX512-VNNI.
void quant_grouped16_range_avx512(DType dt, const QuantRowsView& x, const void* w, float* y,
                                  int64_t ldy, int64_t m0, int64_t m1, int64_t n0, int64_t n1);
// Q4_K/Q6_K matrices in MatrixLayout::kRowGroups16 (quant_kcols16_avx512.cpp's kernel reading the
// groups as they are); n0 and n1 multiples of 16. Requires AVX512-VNNI.
void quant_kgrouped16_range_avx512(DType dt, const QuantRowsView& x, const void* w, float* y,
                                   int64_t ldy, int64_t m0, int64_t m1, int64_t n0, int64_t n1);

}  // namespace eagle2::detail

// Transposing a matrix of 32-bit elements (the trainers' backward passes: weight gradients and
// attention need the transposes of activations and weights every step).
#pragma once

#include <cstdint>

#include "kernels/cpu.h"

namespace eagle2 {

// dst[c * ldd + r] = src[r * lds + c] for r < rows, c < cols: pure data movement, so every path
// gives the same bits. The AVX2 path moves 8 x 8 blocks through registers (the scalar loop reads
// one column element per row, a strided load per element).
void transpose32(KernelPath path, const uint32_t* src, int64_t lds, int64_t rows, int64_t cols,
                 uint32_t* dst, int64_t ldd);

namespace detail {
// The AVX2 path's part (transpose_avx2.cpp): the same for rows and cols multiples of 8.
void transpose32_blocks_avx2(const uint32_t* src, int64_t lds, int64_t rows, int64_t cols,
                             uint32_t* dst, int64_t ldd);
}  // namespace detail

}  // namespace eagle2

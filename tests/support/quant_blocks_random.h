// Random quantized weight blocks for the kernel tests.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "core/dtype.h"

namespace eagle2::test {

// `rows` rows of `cols` elements of any block type `dt`: every quant byte
// random (all codes, Q8_0's -128 included), the f16 scales random of a realistic size (random
// bytes could be inf or NaN), so each kernel sees every nibble/bit pattern.
std::vector<unsigned char> random_blocks(DType dt, int64_t rows, int64_t cols, std::mt19937& rng);

}  // namespace eagle2::test

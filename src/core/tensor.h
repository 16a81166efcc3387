// Non-owning views of stored tensors (usually pointing into a memory-mapped file).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/dtype.h"

namespace eagle2 {

struct TensorView {
  std::string name;
  std::string file;  // where it came from, for error messages
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  const void* data = nullptr;

  int64_t numel() const {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n;
  }
  size_t nbytes() const { return dtype_bytes(dtype, numel()); }
};

std::string shape_string(const std::vector<int64_t>& shape);  // "[64, 172]"

// How a quantized matrix's blocks are arranged.
//   kRows: row after row, each row its blocks in order (the file's layout).
//   kRowGroups16 (Q8_0, Q4_0, Q4_K, Q6_K; rows a multiple of 16): the rows of each group of
//     sixteen are stored together, block by block: block i of group g at g * 16 * row_bytes + i *
//     16 * block_bytes holds the sixteen rows' copies of that block cut into parts: a leading f16
//     (Q8_0/Q4_0's scale) of the sixteen rows (32 bytes), then the block's dwords dword by dword
//     (dword t of row r at 32 + (16 * t + r) * 4 for Q8_0/Q4_0, (16 * t + r) * 4 for Q4_K's 36
//     and Q6_K's first 52), then a trailing f16 (Q6_K's d) of the sixteen rows (32 bytes). The
//     same bytes as kRows, so repacking in place costs no memory; the AVX-512 kernels then read
//     sixteen rows' block as whole vectors (quant_matmul.h).
enum class MatrixLayout : uint8_t { kRows, kRowGroups16 };

// A weight matrix in the nn.Linear convention: row-major [rows = out_features, cols = in_features],
// so y = W x means y[r] = sum_c W[r, c] * x[c]. Used in place, in its stored dtype (a block type:
// cols is a whole number of blocks, each row its own run of blocks unless layout says otherwise).
struct Matrix {
  DType dtype = DType::F32;
  int64_t rows = 0;
  int64_t cols = 0;
  const void* data = nullptr;
  MatrixLayout layout = MatrixLayout::kRows;

  // Row r's bytes; kRows only (row_blocks() in core/quant_blocks.h reads any layout).
  const void* row(int64_t r) const {
    return static_cast<const char*>(data) + static_cast<size_t>(r) * dtype_bytes(dtype, cols);
  }
};

}  // namespace eagle2

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

// A weight matrix in the nn.Linear convention: row-major [rows = out_features, cols = in_features],
// so y = W x means y[r] = sum_c W[r, c] * x[c]. Used in place, in its stored dtype (a block type:
// cols is a whole number of blocks, each row its own run of blocks).
struct Matrix {
  DType dtype = DType::F32;
  int64_t rows = 0;
  int64_t cols = 0;
  const void* data = nullptr;

  const void* row(int64_t r) const {
    return static_cast<const char*>(data) + static_cast<size_t>(r) * dtype_bytes(dtype, cols);
  }
};

}  // namespace eagle2

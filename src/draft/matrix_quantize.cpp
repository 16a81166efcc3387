#include "draft/matrix_quantize.h"

#include "core/error.h"
#include "core/quant_blocks.h"
#include "kernels/cpu.h"

namespace eagle2 {

bool quantize_matrix(Matrix& W, DType type, std::vector<std::vector<unsigned char>>& storage) {
  if (type != DType::Q8_0 && type != DType::Q4_0)
    fail("draft head: cannot quantize to ", dtype_name(type), " (Q8_0 or Q4_0)");
  if (is_block_dtype(W.dtype) || W.cols % dtype_block_elements(type) != 0) return false;
  const size_t row_bytes = dtype_bytes(type, W.cols);
  std::vector<unsigned char>& blocks =
      storage.emplace_back(static_cast<size_t>(W.rows) * row_bytes);
  std::vector<float> row(static_cast<size_t>(W.cols));
  for (int64_t r = 0; r < W.rows; ++r) {
    convert_to_f32(W.dtype, W.row(r), row.data(), row.size());
    quantize_blocks(type, row.data(), &blocks[static_cast<size_t>(r) * row_bytes], W.cols);
  }
  W = Matrix{type, W.rows, W.cols, blocks.data()};
  // The layout the AVX-512 VNNI kernels read fastest (core/tensor.h), as the target's loader does.
  if (active_kernel_path() == KernelPath::Avx512 && cpu_has_avx512_vnni() && can_group_rows16(W))
    group_rows16(W, blocks.data());
  return true;
}

}  // namespace eagle2

#include "kernels/transpose.h"

namespace eagle2 {

void transpose32(KernelPath path, const uint32_t* src, int64_t lds, int64_t rows, int64_t cols,
                 uint32_t* dst, int64_t ldd) {
  if (path != KernelPath::Scalar) {
    detail::transpose32_avx2(src, lds, rows, cols, dst, ldd);
    return;
  }
  for (int64_t c = 0; c < cols; ++c)
    for (int64_t r = 0; r < rows; ++r) dst[c * ldd + r] = src[r * lds + c];
}

}  // namespace eagle2

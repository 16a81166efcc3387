#include "kernels/transpose.h"

namespace eagle2 {

void transpose32(KernelPath path, const uint32_t* src, int64_t lds, int64_t rows, int64_t cols,
                 uint32_t* dst, int64_t ldd) {
  // The SIMD path takes the whole 8 x 8 blocks; the loops below take what is left (everything on
  // the scalar path): the last cols % 8 columns of every row, then the last rows % 8 rows.
  int64_t r8 = 0, c8 = 0;
  if (path != KernelPath::Scalar) {
    r8 = rows / 8 * 8;
    c8 = cols / 8 * 8;
    detail::transpose32_blocks_avx2(src, lds, r8, c8, dst, ldd);
  }
  for (int64_t c = c8; c < cols; ++c)
    for (int64_t r = 0; r < rows; ++r) dst[c * ldd + r] = src[r * lds + c];
  for (int64_t c = 0; c < c8; ++c)
    for (int64_t r = r8; r < rows; ++r) dst[c * ldd + r] = src[r * lds + c];
}

}  // namespace eagle2

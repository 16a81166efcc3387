// Memory checks of the SIMD matmul kernels in the sanitizer build, made once per call.
//
// Under AddressSanitizer every vector load of a kernel's inner tile is checked against the shadow
// memory, and UBSan's bounds and pointer checks keep the tile loops from unrolling, so the tiles
// of accumulators live on the stack: many-row matmuls ran 32x slower than in release (one row:
// 5x, as it is bound by memory bandwidth), and the sanitizer pass of the suite ran far past its
// budget. So in that build the matmul kernel files (kernels/matmul_avx*.cpp and the quantized
// *matmul_avx*.cpp, rows16) are compiled without the sanitizers, at -O2 (src/CMakeLists.txt),
// and their caller checks, once per call, every region the kernels may read or write: the
// activations, the weights and the output, whole. A kernel that indexed outside its arguments'
// regions would no longer be caught by ASan; the tests that compare each kernel path with the
// scalar reference would see its wrong result. test_matmul's MatmulSanitizer test shows that a
// buffer one element short is still reported on every path.
//
// Without ASan these are no-ops.
#pragma once

#include <cstddef>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#endif

namespace eagle2::detail {

// Reports the first byte of [p, p + bytes) that the program may not touch, as ASan reports a bad
// access (a one-byte instrumented read of it), and aborts there.
inline void check_region(const void* p, size_t bytes) {
#if defined(__SANITIZE_ADDRESS__)
  if (bytes == 0) return;
  if (void* bad = __asan_region_is_poisoned(const_cast<void*>(p), bytes))
    (void)*static_cast<const volatile char*>(bad);
#else
  (void)p;
  (void)bytes;
#endif
}

}  // namespace eagle2::detail

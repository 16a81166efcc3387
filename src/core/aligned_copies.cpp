#include "core/aligned_copies.h"

#include <cstdint>
#include <cstring>

namespace eagle2 {

bool is_aligned_for(const void* p, DType dtype) {
  return reinterpret_cast<uintptr_t>(p) % dtype_size(dtype) == 0;
}

unsigned char* AlignedCopies::allocate(size_t n) {
  buffers_.push_back(std::make_unique_for_overwrite<unsigned char[]>(n));
  copied_ += n;
  return buffers_.back().get();
}

const void* AlignedCopies::aligned(const unsigned char* bytes, size_t n, DType dtype) {
  if (n == 0 || is_aligned_for(bytes, dtype)) return bytes;
  unsigned char* copy = allocate(n);
  std::memcpy(copy, bytes, n);
  return copy;
}

}  // namespace eagle2

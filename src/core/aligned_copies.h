// Tensor data read from a file is used through typed pointers (float, uint16_t), so it must be
// aligned to its element size: an unaligned typed load is undefined behaviour (UBSan reports
// "misaligned address"), even where x86 tolerates it. Files do not promise alignment: a
// safetensors header need not be padded to 8 bytes, a torch storage may start at any byte of its
// zip entry. So every reader applies this one rule: aligned data is used in place (zero-copy), the
// rest is copied once into memory the reader owns.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "core/dtype.h"

namespace eagle2 {

// Whether p may be read as elements of dtype.
bool is_aligned_for(const void* p, DType dtype);

// The copies a file reader made, owned for as long as its views live. Moving the owner keeps
// every pointer valid (the buffers themselves never move).
class AlignedCopies {
 public:
  // n bytes aligned for any dtype (operator new[] aligns for every fundamental type).
  unsigned char* allocate(size_t n);
  // `bytes` itself when aligned for dtype, else a pointer to an owned aligned copy of its n bytes.
  const void* aligned(const unsigned char* bytes, size_t n, DType dtype);
  // Total bytes copied so far (readers bound it by their file's size).
  size_t copied_bytes() const { return copied_; }

 private:
  std::vector<std::unique_ptr<unsigned char[]>> buffers_;
  size_t copied_ = 0;
};

}  // namespace eagle2

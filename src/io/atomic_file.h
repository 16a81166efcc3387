// A file written beside its target as "<path>.tmp" and renamed into place by commit(): a write
// that fails or is interrupted never leaves a partial file under the target's name (a model a
// later load would half-read). Shared by the safetensors and GGUF writers.
#pragma once

#include <cstddef>
#include <cstdio>
#include <string>

namespace eagle2 {

class AtomicFile {
 public:
  // Creates "<path>.tmp"; Error "<path>.tmp: cannot create: <why>".
  explicit AtomicFile(std::string path);
  // Removes the temporary file unless commit() succeeded.
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  // Error "<path>.tmp: write failed: <why>".
  void write(const void* data, size_t n);
  // Appends `n` zero bytes (padding).
  void zeros(size_t n);
  // Closes and renames over `path`; Error on a failed close or rename.
  void commit();

 private:
  std::string path_, tmp_;
  FILE* f_ = nullptr;
  bool committed_ = false;
};

}  // namespace eagle2

#include "io/atomic_file.h"

#include <cerrno>
#include <cstring>

#include "core/error.h"

namespace eagle2 {

AtomicFile::AtomicFile(std::string path) : path_(std::move(path)), tmp_(path_ + ".tmp") {
  f_ = std::fopen(tmp_.c_str(), "wb");
  if (!f_) fail(tmp_, ": cannot create: ", std::strerror(errno));
}

AtomicFile::~AtomicFile() {
  if (f_) std::fclose(f_);
  if (!committed_) std::remove(tmp_.c_str());
}

void AtomicFile::write(const void* data, size_t n) {
  if (n != 0 && std::fwrite(data, 1, n, f_) != n)
    fail(tmp_, ": write failed: ", std::strerror(errno));
}

void AtomicFile::zeros(size_t n) {
  static const char kZeros[64] = {};
  while (n > 0) {
    const size_t k = n < sizeof kZeros ? n : sizeof kZeros;
    write(kZeros, k);
    n -= k;
  }
}

void AtomicFile::commit() {
  const int rc = std::fclose(f_);
  f_ = nullptr;
  if (rc != 0) fail(tmp_, ": write failed: ", std::strerror(errno));
  if (std::rename(tmp_.c_str(), path_.c_str()) != 0)
    fail(path_, ": cannot rename ", tmp_, " into place: ", std::strerror(errno));
  committed_ = true;
}

}  // namespace eagle2

#include "core/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/error.h"

namespace eagle2 {

namespace {

// Closes the descriptor on every path out of the constructor; the mapping stays valid without it.
struct FdGuard {
  int fd;
  ~FdGuard() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

MappedFile::MappedFile(const std::string& path) : path_(path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail(path, ": cannot open: ", std::strerror(errno));
  FdGuard guard{fd};

  struct stat st;
  if (::fstat(fd, &st) != 0) fail(path, ": cannot stat: ", std::strerror(errno));
  // Mapping a directory or a FIFO "works" or blocks in surprising ways; refuse it with a clear line.
  if (!S_ISREG(st.st_mode)) fail(path, ": not a regular file");
  if (st.st_size < 0) fail(path, ": cannot stat: negative size");
  size_ = static_cast<size_t>(st.st_size);
  // mmap of length 0 is EINVAL; an empty file is valid and simply has no bytes.
  if (size_ == 0) return;

  void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
  if (p == MAP_FAILED) fail(path, ": cannot mmap ", size_, " bytes: ", std::strerror(errno));
  data_ = static_cast<const unsigned char*>(p);
}

MappedFile::~MappedFile() {
  if (data_ != nullptr) ::munmap(const_cast<unsigned char*>(data_), size_);
}

}  // namespace eagle2

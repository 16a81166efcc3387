#include "core/mapped_file.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "core/error.h"
#include "core/regular_file.h"

namespace eagle2 {

namespace {

constexpr size_t kHugePage = size_t{2} << 20;

// Reads the whole file into fresh anonymous memory advised for huge pages, then makes it read-only
// like a mapping of the file.
unsigned char* read_into_huge_pages(int fd, const std::string& path, size_t size, size_t* mapped) {
  *mapped = (size + kHugePage - 1) / kHugePage * kHugePage;
  void* p = ::mmap(nullptr, *mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED)
    fail(path, ": cannot allocate ", *mapped, " bytes for the weights: ", std::strerror(errno));
  auto* bytes = static_cast<unsigned char*>(p);
  // Advice only: where THP is off the copy still works, on 4 KiB pages.
  (void)::madvise(p, *mapped, MADV_HUGEPAGE);
  size_t done = 0;
  while (done < size) {
    const ssize_t n = ::pread(fd, bytes + done, std::min<size_t>(size - done, size_t{1} << 30),
                              static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = errno;
      ::munmap(p, *mapped);
      if (n == 0) fail(path, ": file shrank while reading: got ", done, " of ", size, " bytes");
      fail(path, ": read failed at byte ", done, ": ", std::strerror(err));
    }
    done += static_cast<size_t>(n);
  }
  if (::mprotect(p, *mapped, PROT_READ) != 0) {
    const int err = errno;
    ::munmap(p, *mapped);
    fail(path, ": cannot make the weights read-only: ", std::strerror(err));
  }
  return bytes;
}

}  // namespace

Residency weight_residency() {
  const char* v = std::getenv("EAGLE2_WEIGHTS");
  if (v == nullptr || *v == '\0' || std::strcmp(v, "hugepages") == 0)
    return Residency::kHugePageCopy;
  if (std::strcmp(v, "mmap") == 0) return Residency::kMapInPlace;
  fail("EAGLE2_WEIGHTS=", v,
       ": expected 'hugepages' (the default: weights copied into huge pages) or 'mmap' (used in "
       "place)");
}

MappedFile::MappedFile(const std::string& path, Residency residency)
    : path_(path), residency_(residency) {
  // Refuses FIFOs, devices and directories without blocking (see regular_file.h); the descriptor
  // closes at the end of the constructor, the mapping or copy stays valid without it.
  const RegularFile file(path);
  const int fd = file.fd();
  size_ = static_cast<size_t>(file.size());
  // mmap of length 0 is EINVAL; an empty file is valid and simply has no bytes.
  if (size_ == 0) return;

  if (residency == Residency::kHugePageCopy) {
    data_ = read_into_huge_pages(fd, path, size_, &mapped_bytes_);
    return;
  }
  void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
  if (p == MAP_FAILED) fail(path, ": cannot mmap ", size_, " bytes: ", std::strerror(errno));
  data_ = static_cast<const unsigned char*>(p);
  mapped_bytes_ = size_;
}

void MappedFile::set_writable(bool writable) const {
  if (residency_ != Residency::kHugePageCopy)
    fail(path_, ": a mapping of the file cannot be written");
  if (data_ == nullptr) return;
  if (::mprotect(const_cast<unsigned char*>(data_), mapped_bytes_,
                 writable ? PROT_READ | PROT_WRITE : PROT_READ) != 0)
    fail(path_, ": cannot change the weights' protection: ", std::strerror(errno));
}

MappedFile::~MappedFile() {
  if (data_ != nullptr) ::munmap(const_cast<unsigned char*>(data_), mapped_bytes_);
}

}  // namespace eagle2

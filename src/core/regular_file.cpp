#include "core/regular_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "core/error.h"

namespace eagle2 {

RegularFile::RegularFile(const std::string& path) {
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd_ < 0) fail(path, ": cannot open: ", std::strerror(errno));
  struct stat st;
  if (::fstat(fd_, &st) != 0) {
    const int err = errno;
    ::close(fd_);
    fail(path, ": cannot stat: ", std::strerror(err));
  }
  if (!S_ISREG(st.st_mode) || st.st_size < 0) {
    ::close(fd_);
    fail(path, ": not a regular file");
  }
  // O_NONBLOCK was only there to make open() safe; reads of the regular file behave as usual.
  const int flags = ::fcntl(fd_, F_GETFL);
  if (flags >= 0) (void)::fcntl(fd_, F_SETFL, flags & ~O_NONBLOCK);
  size_ = static_cast<uint64_t>(st.st_size);
}

RegularFile::~RegularFile() {
  if (fd_ >= 0) ::close(fd_);
}

int RegularFile::release() {
  const int fd = fd_;
  fd_ = -1;
  return fd;
}

void fail_too_large(const std::string& path, uint64_t bytes, uint64_t max_bytes, const char* what) {
  if (max_bytes % read_limit::kMiB == 0) {
    fail(path, ": ", bytes, " bytes, more than the ", max_bytes / read_limit::kMiB,
         " MiB allowed for ", what);
  }
  fail(path, ": ", bytes, " bytes, more than the ", max_bytes, " bytes allowed for ", what);
}

std::string read_regular_file(const std::string& path, uint64_t max_bytes, const char* what) {
  RegularFile file(path);
  if (file.size() > max_bytes) fail_too_large(path, file.size(), max_bytes, what);
  std::string bytes(static_cast<size_t>(file.size()), '\0');
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n =
        ::pread(file.fd(), bytes.data() + done,
                std::min<size_t>(bytes.size() - done, size_t{1} << 30), static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail(path, ": read failed at byte ", done, ": ", std::strerror(errno));
    if (n == 0) break;  // the file shrank after fstat: what was read is the file now
    done += static_cast<size_t>(n);
  }
  bytes.resize(done);
  return bytes;
}

}  // namespace eagle2

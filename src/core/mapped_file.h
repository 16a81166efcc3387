// The read-only bytes of a whole file, either mapped in place or copied once into anonymous memory
// backed by 2 MiB transparent huge pages.
//
// Why the copy: decoding streams every weight once per token, and with 4 KiB pages a 50 MB model
// spans 12 800 pages, more than the CPU's second-level TLB holds, so every page costs a page walk.
// Measured on the Zen 4 machine this project runs on: one core streams 21.6 GB/s from 4 KiB pages
// and 31.4 GB/s from huge pages. A file mapping cannot get huge pages (page-cache THP needs
// special file systems), an anonymous one can (MADV_HUGEPAGE works when THP is "madvise" or
// "always"). The price is one read of the file at load and resident memory for all of it.
#pragma once

#include <cstddef>
#include <string>

namespace eagle2 {

enum class Residency {
  kMapInPlace,    // mmap of the file: nothing is read until touched (headers, indexes, tools)
  kHugePageCopy,  // read into huge-page-advised anonymous memory (weights used every token)
};

// The residency weights get: kHugePageCopy unless the environment sets EAGLE2_WEIGHTS=mmap (for a
// model that should stay in the page cache only, e.g. larger than half the RAM). Any other value
// of EAGLE2_WEIGHTS is an Error naming the accepted ones.
Residency weight_residency();

class MappedFile {
 public:
  // Throws Error naming the path on failure (missing, not a regular file, short read). FIFOs and
  // devices are refused without blocking (see core/regular_file.h).
  explicit MappedFile(const std::string& path, Residency residency = Residency::kMapInPlace);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const std::string& path() const { return path_; }
  const unsigned char* data() const { return data_; }
  size_t size() const { return size_; }
  Residency residency() const { return residency_; }
  // kHugePageCopy only: opens the copy for writing (true) or closes it again (false), for a loader
  // that rearranges weights in place (MatrixLayout::kRowGroups16). Error for a file mapping.
  void set_writable(bool writable) const;

 private:
  std::string path_;
  Residency residency_;
  const unsigned char* data_ = nullptr;
  size_t size_ = 0;
  size_t mapped_bytes_ = 0;  // what munmap releases (the copy is rounded up to whole huge pages)
};

}  // namespace eagle2

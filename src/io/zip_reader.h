// The zip reader under torch.save checkpoints: stored entries only (torch.save never
// compresses), zip64 included, every offset and size checked against the file. Private to src/io/.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace eagle2::detail {

struct ZipEntry {
  std::string name;
  uint64_t offset = 0;  // of the entry's first data byte in the file
  uint64_t size = 0;
};

struct ZipArchive {
  std::vector<ZipEntry> entries;  // central-directory order
  std::unordered_map<std::string, size_t> by_name;

  const ZipEntry* find(const std::string& name) const {
    auto it = by_name.find(name);
    return it == by_name.end() ? nullptr : &entries[it->second];
  }
};

// Parses the central directory of the archive [data, data + size); every structural problem is an
// Error of one line naming `path` (and the entry).
ZipArchive read_zip(const std::string& path, const unsigned char* data, uint64_t size);

}  // namespace eagle2::detail

// A read-only memory map of a whole file (weights are used in place, never copied).
#pragma once

#include <cstddef>
#include <string>

namespace eagle2 {

class MappedFile {
 public:
  explicit MappedFile(const std::string& path);  // throws Error naming the path on failure
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const std::string& path() const { return path_; }
  const unsigned char* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  std::string path_;
  const unsigned char* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace eagle2

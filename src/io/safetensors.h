// Reader and writer of the safetensors format, single file or sharded through
// model.safetensors.index.json. Tensors are memory-mapped and used in place.
//
// File layout: u64 little-endian header length N, N bytes of JSON
//   {"__metadata__": {...}, "<name>": {"dtype": "F32", "shape": [..], "data_offsets": [b, e]}, ...}
// then the data section; offsets are relative to the data section's start.
// Every structural problem is an Error of one line naming the file (and the tensor).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/mapped_file.h"
#include "core/tensor.h"

namespace eagle2 {

class SafetensorsFile {
 public:
  explicit SafetensorsFile(const std::string& path);
  const std::string& path() const { return file_->path(); }
  const std::map<std::string, TensorView>& tensors() const { return tensors_; }

 private:
  std::unique_ptr<MappedFile> file_;
  std::map<std::string, TensorView> tensors_;
};

// All tensors of a model folder: model.safetensors, or the shards listed by
// model.safetensors.index.json ("weight_map": name -> shard file).
class TensorStore {
 public:
  // Opens dir/model.safetensors.index.json if present, else dir/model.safetensors.
  static TensorStore open_dir(const std::string& dir);
  // Opens a list of files (merged; a name in two files is an Error).
  static TensorStore open_files(const std::vector<std::string>& paths);

  bool has(const std::string& name) const { return tensors_.count(name) != 0; }
  // Throws "<dir>: tensor '<name>' not found" when missing.
  const TensorView& get(const std::string& name) const;
  // As get(), and checks the shape: "<file>: tensor '<name>' has shape [a, b], expected [c, d]".
  const TensorView& get(const std::string& name, const std::vector<int64_t>& shape) const;
  const std::map<std::string, TensorView>& tensors() const { return tensors_; }
  const std::string& where() const { return where_; }

 private:
  std::vector<std::shared_ptr<SafetensorsFile>> files_;
  std::map<std::string, TensorView> tensors_;
  std::string where_;
};

// Writes tensors (data in their stated dtype) to a single safetensors file, in the given order.
struct TensorToWrite {
  std::string name;
  DType dtype;
  std::vector<int64_t> shape;
  const void* data;
};
void write_safetensors(const std::string& path, const std::vector<TensorToWrite>& tensors,
                       const std::map<std::string, std::string>& metadata = {});

}  // namespace eagle2

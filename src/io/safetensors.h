// Reader and writer of the safetensors format, single file or sharded through
// model.safetensors.index.json. Tensors are memory-mapped and used in place when aligned for
// their dtype, else copied once into aligned memory the file object owns.
//
// File layout: u64 little-endian header length N, N bytes of JSON
//   {"__metadata__": {...}, "<name>": {"dtype": "F32", "shape": [..], "data_offsets": [b, e]}, ...}
// then the data section; offsets are relative to the data section's start.
// Every structural problem is an Error of one line naming the file (and the tensor).
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/aligned_copies.h"
#include "core/mapped_file.h"
#include "core/tensor.h"

namespace eagle2 {

class SafetensorsFile {
 public:
  explicit SafetensorsFile(const std::string& path);
  const std::string& path() const { return file_->path(); }
  const std::map<std::string, TensorView>& tensors() const { return tensors_; }
  // The string entries of "__metadata__" (the format allows only strings; others are ignored).
  const std::map<std::string, std::string>& metadata() const { return metadata_; }

 private:
  std::unique_ptr<MappedFile> file_;
  AlignedCopies copies_;  // tensors whose data the file does not align, copied aligned
  std::map<std::string, TensorView> tensors_;
  std::map<std::string, std::string> metadata_;
};

// All tensors of a model folder: model.safetensors, or the shards listed by
// model.safetensors.index.json ("weight_map": name -> shard file).
class TensorStore {
 public:
  // Opens dir/model.safetensors.index.json if present, else dir/model.safetensors.
  static TensorStore open_dir(const std::string& dir);
  // Opens a list of files (merged; a name in two files is an Error).
  static TensorStore open_files(const std::vector<std::string>& paths);
  // Tensors read some other way (a GGUF file, io/gguf_weights.h): `owners` keep their data alive.
  static TensorStore from_views(std::string where, std::map<std::string, TensorView> tensors,
                                std::vector<std::shared_ptr<const void>> owners);

  bool has(const std::string& name) const { return tensors_.count(name) != 0; }
  // Throws "<dir>: tensor '<name>' not found" when missing.
  const TensorView& get(const std::string& name) const;
  // As get(), and checks the shape: "<file>: tensor '<name>' has shape [a, b], expected [c, d]".
  const TensorView& get(const std::string& name, const std::vector<int64_t>& shape) const;
  // As get(name, shape), and checks the dtype: "<file>: tensor '<name>' has dtype F16, expected
  // F32".
  const TensorView& get(const std::string& name, const std::vector<int64_t>& shape,
                        DType dtype) const;
  const std::map<std::string, TensorView>& tensors() const { return tensors_; }
  const std::string& where() const { return where_; }

 private:
  std::vector<std::shared_ptr<SafetensorsFile>> files_;
  std::vector<std::shared_ptr<const void>> owners_;
  std::map<std::string, TensorView> tensors_;
  std::string where_;
};

// Writes tensors (data in their stated dtype) to a single safetensors file. The header lists them
// in the given order; the data section keeps that order within each element size but puts wider
// elements first (a stable sort, as the reference writer does), so that every tensor is aligned to
// its element size while the section stays contiguous (readers such as the Rust reference reject
// gaps). The header is padded with spaces to a multiple of 8 bytes. The file is written beside
// the target as "<path>.tmp" and renamed into place, so a failed write never leaves a partial file.
struct TensorToWrite {
  std::string name;
  DType dtype;
  std::vector<int64_t> shape;
  const void* data;
};
void write_safetensors(const std::string& path, const std::vector<TensorToWrite>& tensors,
                       const std::map<std::string, std::string>& metadata = {});

// The streaming form, for models larger than one wants to hold in memory: only one tensor's bytes
// exist at a time. fill(i, dst) writes tensors[i]'s numel * dtype_size bytes to dst (a buffer
// aligned for any dtype); it is called once per tensor, in data-section order.
struct TensorSpec {
  std::string name;
  DType dtype;
  std::vector<int64_t> shape;
};
using TensorFill = std::function<void(size_t index, void* dst)>;
void write_safetensors_streaming(const std::string& path, const std::vector<TensorSpec>& tensors,
                                 const TensorFill& fill,
                                 const std::map<std::string, std::string>& metadata = {});

}  // namespace eagle2

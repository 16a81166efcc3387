// Writes GGUF files (version 3) as ggml lays them out, so that llama.cpp and io/gguf.h read them:
// header, metadata key/values in the order added, tensor infos, padding to the alignment, then
// each tensor's data in info order, each padded to the alignment.
//
// Metadata is encoded as it is added (the whole header stays in memory: a vocabulary of 128k
// tokens is a few MB); tensor data is streamed, one tensor at a time through one reusable buffer,
// so a model is never held in memory twice. Every size and offset is checked arithmetic, and
// anything the reader would refuse (a repeated key or tensor name, a name over ggml's 63 bytes,
// 0 or more than 4 dimensions, a row that is not whole blocks) is an Error here, before anything
// is written. The file appears under its name only once complete (io/atomic_file.h).
#pragma once

#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "io/gguf.h"

namespace eagle2 {

class GgufWriter {
 public:
  // `alignment`: a power of two; anything but ggml's default 32 is written as general.alignment,
  // the first key.
  explicit GgufWriter(uint64_t alignment = 32);

  uint64_t alignment() const { return alignment_; }
  bool has_key(std::string_view key) const { return keys_.count(std::string(key)) != 0; }

  // Scalars, one per GGUF value type.
  void add_u8(std::string_view key, uint8_t v);
  void add_i8(std::string_view key, int8_t v);
  void add_u16(std::string_view key, uint16_t v);
  void add_i16(std::string_view key, int16_t v);
  void add_u32(std::string_view key, uint32_t v);
  void add_i32(std::string_view key, int32_t v);
  void add_u64(std::string_view key, uint64_t v);
  void add_i64(std::string_view key, int64_t v);
  void add_f32(std::string_view key, float v);
  void add_f64(std::string_view key, double v);
  void add_bool(std::string_view key, bool v);
  void add_string(std::string_view key, std::string_view v);

  // Arrays.
  void add_f32_array(std::string_view key, const std::vector<float>& v);
  void add_i32_array(std::string_view key, const std::vector<int32_t>& v);
  void add_string_array(std::string_view key, const std::vector<std::string>& v);
  // An array of any scalar type from `count` little-endian elements at `raw` (GGUF's own
  // encoding, as GgufValue::raw holds them).
  void add_raw_array(std::string_view key, GgufType element, const void* raw, uint64_t count);
  // A value as the reader returned it, of any type, nested arrays included: copies metadata from
  // one file to another.
  void add_value(std::string_view key, const GgufValue& v);

  // A tensor of ggml type `ggml_type` with dimensions ne[0] (the contiguous one) first; its data
  // follows the previous tensor's. Returns its index (the order data is asked for).
  size_t add_tensor(std::string_view name, const std::vector<int64_t>& dims, uint32_t ggml_type);
  size_t tensor_count() const { return tensors_.size(); }
  uint64_t tensor_bytes(size_t index) const { return tensors_.at(index).bytes; }

  // fill(i, dst) writes tensor i's tensor_bytes(i) bytes to dst (aligned to 64); it is called
  // once per tensor, in order. Errors from fill propagate and leave no file behind.
  using Fill = std::function<void(size_t index, unsigned char* dst)>;
  void write(const std::string& path, const Fill& fill) const;

 private:
  void key(std::string_view k, GgufType type);
  void raw(const void* p, size_t n) {
    if (n != 0) kv_.append(static_cast<const char*>(p), n);
  }
  void le(uint64_t v, int bytes);
  void str(std::string_view s);
  void value_body(const GgufValue& v, std::string_view key, int depth);

  struct Tensor {
    std::string name;
    std::vector<int64_t> dims;
    uint32_t type;
    uint64_t offset, bytes;
  };
  uint64_t alignment_;
  uint64_t n_kv_ = 0;
  std::string kv_;  // the encoded key/values
  std::set<std::string> keys_, names_;
  std::vector<Tensor> tensors_;
  uint64_t data_end_ = 0;  // end of the last tensor's data, relative to the data section
};

}  // namespace eagle2

// GGUF files (llama.cpp's format): the header, every metadata key/value and every tensor's info,
// read strictly from a file mapped in place. The tensor data is not interpreted here (the
// quantized formats come with GGUF weights); only its place in the file is checked.
//
// Hostile input: every count and length is checked against the bytes left in the file before
// anything is allocated or read, every size product and sum is checked for overflow, nesting of
// arrays is bounded, keys and tensor names must be unique, tensor offsets must follow each other
// as ggml writes them (aligned, in order, no overlap) and end inside the file. Any violation is
// one Error "<path>: GGUF: <what is wrong and where>".
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/mapped_file.h"

namespace eagle2 {

enum class GgufType : uint32_t {
  kUint8 = 0,
  kInt8 = 1,
  kUint16 = 2,
  kInt16 = 3,
  kUint32 = 4,
  kInt32 = 5,
  kFloat32 = 6,
  kBool = 7,
  kString = 8,
  kArray = 9,
  kUint64 = 10,
  kInt64 = 11,
  kFloat64 = 12,
};

// What a GGUF file may hold: the reader refuses more, the writer (io/gguf_writer.h) never writes
// more.
namespace gguf_limits {
// Deeper nesting than any writer produces; bounded so a file cannot exhaust the stack.
inline constexpr int kMaxArrayDepth = 8;
// ggml's GGML_MAX_NAME is 64 bytes including the terminating NUL; GGML_MAX_DIMS is 4.
inline constexpr uint64_t kMaxTensorName = 63;
inline constexpr uint32_t kMaxDims = 4;
// The GGUF specification limits keys to 65535 bytes.
inline constexpr uint64_t kMaxKey = 65535;
}  // namespace gguf_limits

// "uint32", "string", "array", ... (for messages).
const char* gguf_type_name(GgufType type);
// Bytes of one value of a fixed-size type; 0 for string and array (and unknown types).
uint64_t gguf_scalar_size(GgufType type);

// One metadata value. Strings and string arrays are views into the mapped file (valid while the
// GgufFile lives); scalar arrays stay in the file as raw little-endian bytes.
struct GgufValue {
  GgufType type = GgufType::kUint8;
  uint64_t bits = 0;        // scalar: the value's bytes, zero-extended
  std::string_view string;  // kString
  // kArray:
  GgufType element_type = GgufType::kUint8;
  uint64_t count = 0;
  const unsigned char* raw = nullptr;     // scalar elements, count * element size bytes
  std::vector<std::string_view> strings;  // string elements
  std::vector<GgufValue> arrays;          // nested array elements

  bool is_integer() const;
  bool is_float() const;
  // The scalar as a signed 64-bit integer (any integer type; a uint64 above INT64_MAX is an Error).
  int64_t as_int(std::string_view key) const;
  double as_float(std::string_view key) const;  // float32, float64
};

struct GgufKv {
  std::string_view key;
  GgufValue value;
};

struct GgufTensorInfo {
  std::string_view name;
  std::vector<int64_t> dims;  // ne[0] first (the contiguous dimension), as ggml stores them
  uint32_t type = 0;          // ggml type id
  uint64_t offset = 0;        // relative to data_offset()
  uint64_t bytes = 0;         // size of its data
};

class GgufFile {
 public:
  // Maps and parses the file; Error naming the path and the fault on anything malformed. Weights
  // to be used every token want Residency::kHugePageCopy (weight_residency()).
  explicit GgufFile(const std::string& path, Residency residency = Residency::kMapInPlace);

  const std::string& path() const { return file_->path(); }
  // The bytes' residency, and MappedFile::set_writable on them (kHugePageCopy only).
  Residency residency() const { return file_->residency(); }
  void set_writable(bool writable) const { file_->set_writable(writable); }
  uint32_t version() const { return version_; }
  const std::vector<GgufKv>& metadata() const { return kv_; }
  const std::vector<GgufTensorInfo>& tensors() const { return tensors_; }
  uint64_t alignment() const { return alignment_; }
  uint64_t data_offset() const { return data_offset_; }

  // nullptr when the key is absent.
  const GgufValue* find(std::string_view key) const;
  // Typed access: Error "<path>: GGUF: <key> is <type>, expected <what>" on a type mismatch, and
  // for the required variants "<path>: GGUF: no <key>" when absent.
  std::string_view string(std::string_view key) const;
  std::string_view string_or(std::string_view key, std::string_view fallback) const;
  int64_t integer_or(std::string_view key, int64_t fallback) const;
  bool boolean_or(std::string_view key, bool fallback) const;
  // An array of `element` type (required when `required`, else nullptr if absent).
  const GgufValue* array(std::string_view key, GgufType element, bool required) const;

  // A tensor's data (its offset and size were checked against the file when it was parsed).
  const unsigned char* tensor_data(const GgufTensorInfo& t) const;

  [[noreturn]] void fail_at(std::string_view what) const;

 private:
  std::unique_ptr<MappedFile> file_;
  uint32_t version_ = 0;
  std::vector<GgufKv> kv_;
  std::vector<GgufTensorInfo> tensors_;
  uint64_t alignment_ = 32;
  uint64_t data_offset_ = 0;
};

// A scalar array element read from raw little-endian bytes (no alignment needed).
float gguf_f32_at(const GgufValue& array, uint64_t i);
int32_t gguf_i32_at(const GgufValue& array, uint64_t i);

// ggml's block size (elements) and bytes per block of a tensor type; false for a type id this
// reader does not know.
bool ggml_type_size(uint32_t type, uint64_t* block_elements, uint64_t* block_bytes);
const char* ggml_type_name(uint32_t type);

}  // namespace eagle2

#include "io/gguf_writer.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <memory>
#include <new>

#include "core/error.h"
#include "io/atomic_file.h"
#include "io/byte_reading.h"

namespace eagle2 {

namespace {

using detail::printable;

constexpr uint32_t kVersion = 3;

uint64_t add_checked(uint64_t a, uint64_t b, std::string_view what) {
  if (b > std::numeric_limits<uint64_t>::max() - a)
    fail("GGUF writer: ", what, " overflows 64 bits");
  return a + b;
}
uint64_t mul_checked(uint64_t a, uint64_t b, std::string_view what) {
  if (a != 0 && b > std::numeric_limits<uint64_t>::max() / a)
    fail("GGUF writer: ", what, " overflows 64 bits");
  return a * b;
}
uint64_t align_up(uint64_t x, uint64_t a, std::string_view what) {
  return add_checked(x, (a - x % a) % a, what);
}

}  // namespace

GgufWriter::GgufWriter(uint64_t alignment) : alignment_(alignment) {
  if (alignment == 0 || (alignment & (alignment - 1)) != 0 ||
      alignment > std::numeric_limits<uint32_t>::max())
    fail("GGUF writer: alignment ", alignment, " is not a power of two below 2^32");
  if (alignment != 32) add_u32("general.alignment", static_cast<uint32_t>(alignment));
}

void GgufWriter::le(uint64_t v, int bytes) {
  unsigned char b[8];
  for (int i = 0; i < bytes; ++i) b[i] = static_cast<unsigned char>(v >> (8 * i));
  raw(b, static_cast<size_t>(bytes));
}

void GgufWriter::str(std::string_view s) {
  le(s.size(), 8);
  raw(s.data(), s.size());
}

void GgufWriter::key(std::string_view k, GgufType type) {
  if (k.empty()) fail("GGUF writer: empty metadata key");
  if (k.size() > gguf_limits::kMaxKey)
    fail("GGUF writer: metadata key of ", k.size(), " bytes (at most ", gguf_limits::kMaxKey, ")");
  if (!keys_.insert(std::string(k)).second)
    fail("GGUF writer: metadata key '", printable(k), "' added twice");
  ++n_kv_;
  str(k);
  le(static_cast<uint32_t>(type), 4);
}

void GgufWriter::add_u8(std::string_view k, uint8_t v) {
  key(k, GgufType::kUint8);
  le(v, 1);
}
void GgufWriter::add_i8(std::string_view k, int8_t v) {
  key(k, GgufType::kInt8);
  le(static_cast<uint8_t>(v), 1);
}
void GgufWriter::add_u16(std::string_view k, uint16_t v) {
  key(k, GgufType::kUint16);
  le(v, 2);
}
void GgufWriter::add_i16(std::string_view k, int16_t v) {
  key(k, GgufType::kInt16);
  le(static_cast<uint16_t>(v), 2);
}
void GgufWriter::add_u32(std::string_view k, uint32_t v) {
  key(k, GgufType::kUint32);
  le(v, 4);
}
void GgufWriter::add_i32(std::string_view k, int32_t v) {
  key(k, GgufType::kInt32);
  le(static_cast<uint32_t>(v), 4);
}
void GgufWriter::add_u64(std::string_view k, uint64_t v) {
  key(k, GgufType::kUint64);
  le(v, 8);
}
void GgufWriter::add_i64(std::string_view k, int64_t v) {
  key(k, GgufType::kInt64);
  le(static_cast<uint64_t>(v), 8);
}
void GgufWriter::add_f32(std::string_view k, float v) {
  uint32_t bits;
  std::memcpy(&bits, &v, 4);
  key(k, GgufType::kFloat32);
  le(bits, 4);
}
void GgufWriter::add_f64(std::string_view k, double v) {
  uint64_t bits;
  std::memcpy(&bits, &v, 8);
  key(k, GgufType::kFloat64);
  le(bits, 8);
}
void GgufWriter::add_bool(std::string_view k, bool v) {
  key(k, GgufType::kBool);
  le(v ? 1 : 0, 1);
}
void GgufWriter::add_string(std::string_view k, std::string_view v) {
  key(k, GgufType::kString);
  str(v);
}

void GgufWriter::add_raw_array(std::string_view k, GgufType element, const void* data,
                               uint64_t count) {
  const uint64_t size = gguf_scalar_size(element);
  if (size == 0)
    fail("GGUF writer: ", printable(k), ": an array of ", gguf_type_name(element),
         " is not an array of scalars");
  const uint64_t bytes = mul_checked(count, size, "array size");
  if (bytes > std::numeric_limits<size_t>::max()) fail("GGUF writer: array size overflows");
  if (element == GgufType::kBool)
    for (uint64_t i = 0; i < count; ++i)
      if (static_cast<const unsigned char*>(data)[i] > 1)
        fail("GGUF writer: ", printable(k), "[", i, "] is a bool holding ",
             int{static_cast<const unsigned char*>(data)[i]});
  key(k, GgufType::kArray);
  le(static_cast<uint32_t>(element), 4);
  le(count, 8);
  // Elements are little-endian in the file: the byte order of every machine this builds for.
  raw(data, static_cast<size_t>(bytes));
}

void GgufWriter::add_f32_array(std::string_view k, const std::vector<float>& v) {
  std::vector<unsigned char> bytes(v.size() * 4);
  for (size_t i = 0; i < v.size(); ++i) {
    uint32_t bits;
    std::memcpy(&bits, &v[i], 4);
    for (int b = 0; b < 4; ++b) bytes[4 * i + b] = static_cast<unsigned char>(bits >> (8 * b));
  }
  add_raw_array(k, GgufType::kFloat32, bytes.data(), v.size());
}

void GgufWriter::add_i32_array(std::string_view k, const std::vector<int32_t>& v) {
  std::vector<unsigned char> bytes(v.size() * 4);
  for (size_t i = 0; i < v.size(); ++i) {
    const auto bits = static_cast<uint32_t>(v[i]);
    for (int b = 0; b < 4; ++b) bytes[4 * i + b] = static_cast<unsigned char>(bits >> (8 * b));
  }
  add_raw_array(k, GgufType::kInt32, bytes.data(), v.size());
}

void GgufWriter::add_string_array(std::string_view k, const std::vector<std::string>& v) {
  key(k, GgufType::kArray);
  le(static_cast<uint32_t>(GgufType::kString), 4);
  le(v.size(), 8);
  for (const std::string& s : v) str(s);
}

// The value's encoding after its type: what read_value() in gguf.cpp parses.
void GgufWriter::value_body(const GgufValue& v, std::string_view k, int depth) {
  if (const uint64_t n = gguf_scalar_size(v.type)) {
    le(v.bits, static_cast<int>(n));
    return;
  }
  if (v.type == GgufType::kString) {
    str(v.string);
    return;
  }
  if (v.type != GgufType::kArray)
    fail("GGUF writer: ", printable(k), " has unknown type ", static_cast<uint32_t>(v.type));
  if (depth >= gguf_limits::kMaxArrayDepth)
    fail("GGUF writer: ", printable(k), " nests arrays deeper than ", gguf_limits::kMaxArrayDepth);
  le(static_cast<uint32_t>(v.element_type), 4);
  le(v.count, 8);
  if (const uint64_t n = gguf_scalar_size(v.element_type)) {
    raw(v.raw, static_cast<size_t>(mul_checked(v.count, n, "array size")));
  } else if (v.element_type == GgufType::kString) {
    if (v.strings.size() != v.count) fail("GGUF writer: ", printable(k), ": string count mismatch");
    for (std::string_view s : v.strings) str(s);
  } else {
    if (v.arrays.size() != v.count) fail("GGUF writer: ", printable(k), ": array count mismatch");
    for (const GgufValue& a : v.arrays) {
      if (a.type != v.element_type)
        fail("GGUF writer: ", printable(k), ": an element is not of the array's element type");
      value_body(a, k, depth + 1);
    }
  }
}

void GgufWriter::add_value(std::string_view k, const GgufValue& v) {
  if (k == "general.alignment")
    fail("GGUF writer: general.alignment is the writer's own (its constructor sets it)");
  key(k, v.type);
  value_body(v, k, 0);
}

size_t GgufWriter::add_tensor(std::string_view name, const std::vector<int64_t>& dims,
                              uint32_t ggml_type) {
  const std::string what = "tensor '" + printable(name) + "'";
  if (name.empty() || name.size() > gguf_limits::kMaxTensorName)
    fail("GGUF writer: ", what, " name must be 1 to ", gguf_limits::kMaxTensorName, " bytes");
  if (!names_.insert(std::string(name)).second) fail("GGUF writer: ", what, " added twice");
  if (dims.empty() || dims.size() > gguf_limits::kMaxDims)
    fail("GGUF writer: ", what, " has ", dims.size(), " dimensions (1 to 4 allowed)");
  uint64_t block = 0, block_bytes = 0;
  if (!ggml_type_size(ggml_type, &block, &block_bytes))
    fail("GGUF writer: ", what, " has unknown ggml type ", ggml_type);
  uint64_t elements = 1;
  for (int64_t d : dims) {
    if (d < 0) fail("GGUF writer: ", what, " has negative dimension ", d);
    elements = mul_checked(elements, static_cast<uint64_t>(d), what + " element count");
  }
  if (elements > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
    fail("GGUF writer: ", what, " has more than 2^63 elements");
  if (static_cast<uint64_t>(dims[0]) % block != 0)
    fail("GGUF writer: ", what, " row of ", dims[0], " elements is not a whole number of ",
         ggml_type_name(ggml_type), " blocks of ", block);
  Tensor t{std::string(name), dims, ggml_type, data_end_,
           mul_checked(elements / block, block_bytes, what + " size")};
  data_end_ = align_up(add_checked(t.offset, t.bytes, what + " end"), alignment_, what + " end");
  tensors_.push_back(std::move(t));
  return tensors_.size() - 1;
}

void GgufWriter::write(const std::string& path, const Fill& fill) const {
  std::string head;
  auto put = [&head](uint64_t v, int bytes) {
    for (int i = 0; i < bytes; ++i) head.push_back(static_cast<char>(v >> (8 * i)));
  };
  head.append("GGUF", 4);
  put(kVersion, 4);
  put(tensors_.size(), 8);
  put(n_kv_, 8);
  head += kv_;
  uint64_t max_bytes = 0;
  for (const Tensor& t : tensors_) {
    put(t.name.size(), 8);
    head += t.name;
    put(t.dims.size(), 4);
    for (int64_t d : t.dims) put(static_cast<uint64_t>(d), 8);
    put(t.type, 4);
    put(t.offset, 8);
    max_bytes = std::max(max_bytes, t.bytes);
  }
  if (max_bytes > std::numeric_limits<size_t>::max() / 2)
    fail(path, ": a tensor of ", max_bytes, " bytes does not fit in memory");
  const uint64_t data_offset = align_up(head.size(), alignment_, "data offset");

  AtomicFile out(path);
  out.write(head.data(), head.size());
  out.zeros(static_cast<size_t>(data_offset - head.size()));
  // One buffer for every tensor, sized for the largest: writing costs one tensor's memory. 64-byte
  // aligned (operator new's alignment is only 16), enough for any element or block type.
  struct Free {
    void operator()(unsigned char* p) const { ::operator delete[](p, std::align_val_t{64}); }
  };
  std::unique_ptr<unsigned char, Free> buffer(
      max_bytes ? static_cast<unsigned char*>(
                      ::operator new[](static_cast<size_t>(max_bytes), std::align_val_t{64}))
                : nullptr);
  uint64_t pos = 0;
  for (size_t i = 0; i < tensors_.size(); ++i) {
    const Tensor& t = tensors_[i];
    out.zeros(static_cast<size_t>(t.offset - pos));  // padding after the previous tensor
    if (t.bytes != 0) {
      fill(i, buffer.get());
      out.write(buffer.get(), static_cast<size_t>(t.bytes));
    }
    pos = t.offset + t.bytes;
  }
  out.zeros(static_cast<size_t>(data_end_ - pos));  // ggml pads the last tensor too
  out.commit();
}

}  // namespace eagle2

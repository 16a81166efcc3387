#include "io/gguf.h"

#include <cstring>
#include <limits>
#include <sstream>
#include <unordered_set>

#include "core/error.h"
#include "io/byte_reading.h"

namespace eagle2 {

namespace {

using detail::printable;

using gguf_limits::kMaxArrayDepth;
using gguf_limits::kMaxDims;
using gguf_limits::kMaxKey;
using gguf_limits::kMaxTensorName;

}  // namespace

uint64_t gguf_scalar_size(GgufType t) {
  switch (t) {
    case GgufType::kUint8:
    case GgufType::kInt8:
    case GgufType::kBool:
      return 1;
    case GgufType::kUint16:
    case GgufType::kInt16:
      return 2;
    case GgufType::kUint32:
    case GgufType::kInt32:
    case GgufType::kFloat32:
      return 4;
    case GgufType::kUint64:
    case GgufType::kInt64:
    case GgufType::kFloat64:
      return 8;
    default:
      return 0;  // string, array: not fixed-size
  }
}

namespace {

uint64_t scalar_size(GgufType t) {
  return gguf_scalar_size(t);
}

bool known_type(uint32_t t) {
  return t <= static_cast<uint32_t>(GgufType::kFloat64);
}

// A bounds-checked reader over the mapped bytes; every failure names what was being read.
class Cursor {
 public:
  Cursor(const GgufFile& file, const unsigned char* data, uint64_t size)
      : file_(file), data_(data), size_(size) {}

  uint64_t pos() const { return pos_; }
  uint64_t left() const { return size_ - pos_; }

  const unsigned char* take(uint64_t n, const std::string& what) {
    if (n > left()) {
      std::ostringstream m;
      m << "truncated: " << what << " needs " << n << " bytes at offset " << pos_ << ", " << left()
        << " left";
      file_.fail_at(m.str());
    }
    const unsigned char* p = data_ + pos_;
    pos_ += n;
    return p;
  }
  uint32_t u32(const std::string& what) {
    return static_cast<uint32_t>(detail::rd32(take(4, what)));
  }
  uint64_t u64(const std::string& what) { return detail::rd64(take(8, what)); }
  std::string_view str(const std::string& what,
                       uint64_t max_len = std::numeric_limits<uint64_t>::max()) {
    const uint64_t n = u64(what + " length");
    if (n > max_len) {
      std::ostringstream m;
      m << what << " is " << n << " bytes long, more than the " << max_len << " allowed";
      file_.fail_at(m.str());
    }
    const unsigned char* p = take(n, what);
    return {reinterpret_cast<const char*>(p), static_cast<size_t>(n)};
  }

 private:
  const GgufFile& file_;
  const unsigned char* data_;
  uint64_t size_;
  uint64_t pos_ = 0;
};

// `count` items of at least `min_bytes` each must fit in what is left of the file: checked
// before any vector is sized by the count.
void check_count(const GgufFile& f, const Cursor& c, uint64_t count, uint64_t min_bytes,
                 const std::string& what) {
  if (min_bytes != 0 && count > c.left() / min_bytes) {
    std::ostringstream m;
    m << what << " count " << count << " cannot fit in the " << c.left() << " bytes left";
    f.fail_at(m.str());
  }
}

GgufValue read_value(const GgufFile& f, Cursor& c, uint32_t raw_type, const std::string& where,
                     int depth) {
  if (!known_type(raw_type)) {
    std::ostringstream m;
    m << where << " has unknown value type " << raw_type;
    f.fail_at(m.str());
  }
  GgufValue v;
  v.type = static_cast<GgufType>(raw_type);
  if (const uint64_t n = scalar_size(v.type)) {
    v.bits = detail::rd_le(c.take(n, where), static_cast<int>(n));
    if (v.type == GgufType::kBool && v.bits > 1) {
      std::ostringstream m;
      m << where << " is a bool holding " << v.bits;
      f.fail_at(m.str());
    }
    return v;
  }
  if (v.type == GgufType::kString) {
    v.string = c.str(where);
    return v;
  }
  // Array: element type, count, elements.
  if (depth >= kMaxArrayDepth)
    f.fail_at(where + " nests arrays deeper than " + std::to_string(kMaxArrayDepth));
  const uint32_t et = c.u32(where + " element type");
  if (!known_type(et)) {
    std::ostringstream m;
    m << where << " has unknown element type " << et;
    f.fail_at(m.str());
  }
  v.element_type = static_cast<GgufType>(et);
  v.count = c.u64(where + " element count");
  const uint64_t es = scalar_size(v.element_type);
  if (es != 0) {
    check_count(f, c, v.count, es, where);
    v.raw = c.take(v.count * es, where);  // product fits: count <= left / es
    if (v.element_type == GgufType::kBool) {
      for (uint64_t i = 0; i < v.count; ++i) {
        if (v.raw[i] > 1)
          f.fail_at(where + "[" + std::to_string(i) + "] is a bool holding " +
                    std::to_string(v.raw[i]));
      }
    }
  } else if (v.element_type == GgufType::kString) {
    check_count(f, c, v.count, 8, where);
    v.strings.reserve(static_cast<size_t>(v.count));
    for (uint64_t i = 0; i < v.count; ++i)
      v.strings.push_back(c.str(where + "[" + std::to_string(i) + "]"));
  } else {
    check_count(f, c, v.count, 12, where);  // a nested array is at least its type and count
    v.arrays.reserve(static_cast<size_t>(v.count));
    for (uint64_t i = 0; i < v.count; ++i) {
      v.arrays.push_back(read_value(f, c, et, where + "[" + std::to_string(i) + "]", depth + 1));
    }
  }
  return v;
}

// a * b, or fail when it overflows.
uint64_t mul_checked(const GgufFile& f, uint64_t a, uint64_t b, const std::string& what) {
  if (a != 0 && b > std::numeric_limits<uint64_t>::max() / a)
    f.fail_at(what + " overflows 64 bits");
  return a * b;
}
uint64_t add_checked(const GgufFile& f, uint64_t a, uint64_t b, const std::string& what) {
  if (b > std::numeric_limits<uint64_t>::max() - a) f.fail_at(what + " overflows 64 bits");
  return a + b;
}
uint64_t align_up(const GgufFile& f, uint64_t x, uint64_t a, const std::string& what) {
  return add_checked(f, x, (a - x % a) % a, what);
}

}  // namespace

const char* gguf_type_name(GgufType type) {
  static const char* const names[] = {"uint8",  "int8",    "uint16", "int16",  "uint32",
                                      "int32",  "float32", "bool",   "string", "array",
                                      "uint64", "int64",   "float64"};
  const auto i = static_cast<uint32_t>(type);
  return i < sizeof(names) / sizeof(names[0]) ? names[i] : "unknown";
}

bool GgufValue::is_integer() const {
  switch (type) {
    case GgufType::kUint8:
    case GgufType::kInt8:
    case GgufType::kUint16:
    case GgufType::kInt16:
    case GgufType::kUint32:
    case GgufType::kInt32:
    case GgufType::kUint64:
    case GgufType::kInt64:
      return true;
    default:
      return false;
  }
}

bool GgufValue::is_float() const {
  return type == GgufType::kFloat32 || type == GgufType::kFloat64;
}

int64_t GgufValue::as_int(std::string_view key) const {
  switch (type) {
    case GgufType::kUint8:
    case GgufType::kUint16:
    case GgufType::kUint32:
      return static_cast<int64_t>(bits);
    case GgufType::kInt8:
      return static_cast<int8_t>(bits);
    case GgufType::kInt16:
      return static_cast<int16_t>(bits);
    case GgufType::kInt32:
      return static_cast<int32_t>(bits);
    case GgufType::kInt64:
      return static_cast<int64_t>(bits);
    case GgufType::kUint64:
      if (bits > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
        fail("GGUF: ", key, " = ", bits, " is out of range");
      }
      return static_cast<int64_t>(bits);
    default:
      fail("GGUF: ", key, " is ", gguf_type_name(type), ", expected an integer");
  }
}

double GgufValue::as_float(std::string_view key) const {
  if (type == GgufType::kFloat32) {
    float f;
    const auto b = static_cast<uint32_t>(bits);
    std::memcpy(&f, &b, 4);
    return f;
  }
  if (type == GgufType::kFloat64) {
    double d;
    std::memcpy(&d, &bits, 8);
    return d;
  }
  fail("GGUF: ", key, " is ", gguf_type_name(type), ", expected a float");
}

float gguf_f32_at(const GgufValue& a, uint64_t i) {
  float f;
  std::memcpy(&f, a.raw + i * 4, 4);
  return f;
}

int32_t gguf_i32_at(const GgufValue& a, uint64_t i) {
  return static_cast<int32_t>(detail::rd32(a.raw + i * 4));
}

void GgufFile::fail_at(std::string_view what) const {
  fail(path(), ": GGUF: ", what);
}

const unsigned char* GgufFile::tensor_data(const GgufTensorInfo& t) const {
  return static_cast<const unsigned char*>(file_->data()) + data_offset_ + t.offset;
}

GgufFile::GgufFile(const std::string& path, Residency residency)
    : file_(std::make_unique<MappedFile>(path, residency)) {
  Cursor c(*this, file_->data(), file_->size());
  const unsigned char* magic = c.take(4, "the magic");
  if (std::memcmp(magic, "GGUF", 4) != 0) fail_at("not a GGUF file (no GGUF magic)");
  version_ = c.u32("the version");
  if (version_ != 2 && version_ != 3) {
    // A big-endian file reads as 0x02000000 / 0x03000000 here.
    if (version_ == 0x02000000u || version_ == 0x03000000u)
      fail_at("big-endian files are not supported");
    fail_at("version " + std::to_string(version_) + " is not supported (2 and 3 are)");
  }
  const uint64_t n_tensors = c.u64("the tensor count");
  const uint64_t n_kv = c.u64("the metadata count");
  // Each key/value takes at least 8 (key length) + 1 (key) + 4 (type) + 1 (value) bytes.
  check_count(*this, c, n_kv, 14, "metadata");
  kv_.reserve(static_cast<size_t>(n_kv));
  std::unordered_set<std::string_view> keys;
  for (uint64_t i = 0; i < n_kv; ++i) {
    const std::string where = "metadata #" + std::to_string(i);
    const std::string_view key = c.str(where + " key", kMaxKey);
    if (key.empty()) fail_at(where + " has an empty key");
    if (!keys.insert(key).second) fail_at("metadata key '" + printable(key) + "' appears twice");
    const uint32_t type = c.u32("the type of " + printable(key));
    kv_.push_back({key, read_value(*this, c, type, printable(key), 0)});
  }

  if (const GgufValue* a = find("general.alignment")) {
    if (a->type != GgufType::kUint32)
      fail_at("general.alignment is " + std::string(gguf_type_name(a->type)) + ", expected uint32");
    alignment_ = a->bits;
    if (alignment_ == 0 || (alignment_ & (alignment_ - 1)) != 0) {
      fail_at("general.alignment " + std::to_string(alignment_) + " is not a power of two");
    }
  }

  // Each tensor info takes at least 8 + 1 (name) + 4 (n_dims) + 8 (one dim) + 4 (type) + 8 bytes.
  check_count(*this, c, n_tensors, 33, "tensor");
  tensors_.reserve(static_cast<size_t>(n_tensors));
  std::unordered_set<std::string_view> names;
  for (uint64_t i = 0; i < n_tensors; ++i) {
    GgufTensorInfo t;
    const std::string where = "tensor #" + std::to_string(i);
    t.name = c.str(where + " name", kMaxTensorName);
    const std::string name = "tensor '" + printable(t.name) + "'";
    if (!names.insert(t.name).second) fail_at(name + " appears twice");
    const uint32_t n_dims = c.u32(name + " dimension count");
    if (n_dims == 0 || n_dims > kMaxDims) {
      fail_at(name + " has " + std::to_string(n_dims) + " dimensions (1 to 4 allowed)");
    }
    uint64_t elements = 1;
    for (uint32_t d = 0; d < n_dims; ++d) {
      const uint64_t ne = c.u64(name + " dimension");
      if (ne > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
        fail_at(name + " dimension " + std::to_string(d) + " = " + std::to_string(ne) +
                " is out of range");
      }
      t.dims.push_back(static_cast<int64_t>(ne));
      elements = mul_checked(*this, elements, ne, name + " element count");
    }
    if (elements > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      fail_at(name + " has more than 2^63 elements");
    }
    t.type = c.u32(name + " type");
    uint64_t block = 0, block_bytes = 0;
    if (!ggml_type_size(t.type, &block, &block_bytes)) {
      fail_at(name + " has ggml type " + std::to_string(t.type) +
              ", which this reader does not know");
    }
    if (t.dims[0] % static_cast<int64_t>(block) != 0) {
      fail_at(name + " row of " + std::to_string(t.dims[0]) +
              " elements is not a whole number of " + ggml_type_name(t.type) + " blocks of " +
              std::to_string(block));
    }
    t.bytes = mul_checked(*this, elements / block, block_bytes, name + " size");
    t.offset = c.u64(name + " offset");
    tensors_.push_back(std::move(t));
  }

  data_offset_ = align_up(*this, c.pos(), alignment_, "the data offset");
  // ggml writes the tensors' data in info order, each padded to the alignment: require exactly
  // that, which rules out overlaps and holes, and require all of it inside the file.
  uint64_t expected = 0;
  for (const GgufTensorInfo& t : tensors_) {
    const std::string name = "tensor '" + printable(t.name) + "'";
    if (t.offset != expected) {
      fail_at(name + " has data offset " + std::to_string(t.offset) + ", expected " +
              std::to_string(expected));
    }
    expected = align_up(*this, add_checked(*this, t.offset, t.bytes, name + " end"), alignment_,
                        name + " end");
    const uint64_t end = add_checked(
        *this, add_checked(*this, data_offset_, t.offset, name + " end"), t.bytes, name + " end");
    if (end > file_->size()) {
      fail_at(name + " data ends at byte " + std::to_string(end) + ", past the end of the file (" +
              std::to_string(file_->size()) + " bytes)");
    }
  }
}

const GgufValue* GgufFile::find(std::string_view key) const {
  for (const GgufKv& kv : kv_) {
    if (kv.key == key) return &kv.value;
  }
  return nullptr;
}

std::string_view GgufFile::string(std::string_view key) const {
  const GgufValue* v = find(key);
  if (v == nullptr) fail_at("no " + std::string(key));
  if (v->type != GgufType::kString)
    fail_at(std::string(key) + " is " + gguf_type_name(v->type) + ", expected string");
  return v->string;
}

std::string_view GgufFile::string_or(std::string_view key, std::string_view fallback) const {
  return find(key) == nullptr ? fallback : string(key);
}

int64_t GgufFile::integer_or(std::string_view key, int64_t fallback) const {
  const GgufValue* v = find(key);
  if (v == nullptr) return fallback;
  if (!v->is_integer())
    fail_at(std::string(key) + " is " + gguf_type_name(v->type) + ", expected an integer");
  if (v->type == GgufType::kUint64 &&
      v->bits > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    fail_at(std::string(key) + " = " + std::to_string(v->bits) + " is out of range");
  }
  return v->as_int(key);
}

bool GgufFile::boolean_or(std::string_view key, bool fallback) const {
  const GgufValue* v = find(key);
  if (v == nullptr) return fallback;
  if (v->type != GgufType::kBool)
    fail_at(std::string(key) + " is " + gguf_type_name(v->type) + ", expected bool");
  return v->bits != 0;
}

const GgufValue* GgufFile::array(std::string_view key, GgufType element, bool required) const {
  const GgufValue* v = find(key);
  if (v == nullptr) {
    if (required) fail_at("no " + std::string(key));
    return nullptr;
  }
  if (v->type != GgufType::kArray || v->element_type != element) {
    fail_at(std::string(key) + " is " +
            (v->type == GgufType::kArray
                 ? "an array of " + std::string(gguf_type_name(v->element_type))
                 : std::string(gguf_type_name(v->type))) +
            ", expected an array of " + gguf_type_name(element));
  }
  return v;
}

}  // namespace eagle2

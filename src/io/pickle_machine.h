// The pickle machine of the torch.save checkpoint reader: just enough of the protocol-2 stack
// machine to rebuild a state dict, with an allowlist of globals instead of Python, so a hostile
// data.pkl can at worst produce an Error. pickle_machine.cpp runs the opcodes;
// pickle_torch_objects.cpp holds the torch vocabulary (the allowed globals, what calling them
// builds, and the persistent ids that name storages). Private to src/io/.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/dtype.h"
#include "core/error.h"
#include "io/zip_reader.h"

namespace eagle2::detail {

enum class Kind : uint8_t {
  None,
  Bool,
  Int,
  Float,
  Str,
  Tuple,
  List,
  Dict,
  Global,
  Storage,
  Tensor
};

const char* kind_name(Kind k);
// The opcode's name, or nullptr for a byte that is no pickle opcode.
const char* opcode_name(unsigned char op);

// Objects live in one arena and refer to each other by index: nothing is destroyed recursively
// and reference cycles (legal in a pickle) cannot leak or loop. A Global's Callable is an enum of
// pickle_torch_objects.cpp.
struct Obj {
  Kind kind = Kind::None;
  int64_t i = 0;                // Int, Bool; Global: Callable; Storage/Tensor: index in their table
  double f = 0;                 // Float
  std::string s;                // Str
  std::vector<uint32_t> items;  // Tuple/List elements; Dict keys and values, interleaved
};

struct StorageRef {
  std::string key;  // the persistent id's key, i.e. the entry <archive>/data/<key>
  DType dtype = DType::F32;
  const unsigned char* data = nullptr;
  int64_t numel = 0;
};

struct TensorRef {
  uint32_t storage = 0;  // index in the storage table
  int64_t offset = 0;
  std::vector<int64_t> shape, stride;
};

// Bounds against hostile pickles; a real state dict needs a few objects per tensor.
constexpr size_t kMaxObjects = size_t{1} << 20;
constexpr size_t kMaxStack = size_t{1} << 20;
constexpr size_t kMaxMemo = size_t{1} << 20;
constexpr size_t kMaxGlobalLine = 256;

class Unpickler {
 public:
  // `file` is the whole mapped archive (storages point into it); data.pkl is [data, data + size).
  Unpickler(const std::string& path, const unsigned char* file, const ZipArchive& zip,
            const std::string& prefix, const unsigned char* data, uint64_t size)
      : path_(path), file_(file), p_(data), n_(size), zip_(zip), prefix_(prefix) {}

  // Runs data.pkl up to its STOP (pickle_machine.cpp); returns the one object left, the root.
  uint32_t run();

  const Obj& obj(uint32_t i) const { return objs_[i]; }
  const StorageRef& storage(int64_t i) const { return storages_[static_cast<size_t>(i)]; }
  const TensorRef& tensor(int64_t i) const { return tensors_[static_cast<size_t>(i)]; }

 private:
  [[noreturn]] void truncated(uint64_t need) const {
    fail(path_, ": data.pkl is truncated (", opcode_name(op_), " at byte ", op_at_, " needs ", need,
         " more bytes)");
  }
  const unsigned char* take(uint64_t k) {
    if (k > n_ - pos_) truncated(k);
    const unsigned char* at = p_ + pos_;
    pos_ += k;
    return at;
  }
  template <class... Parts>
  [[noreturn]] void bad(Parts&&... parts) const {
    fail(path_, ": data.pkl: ", opcode_name(op_), " at byte ", op_at_, ": ",
         std::forward<Parts>(parts)...);
  }

  uint32_t make(Kind k) {
    if (objs_.size() >= kMaxObjects) bad("more than ", kMaxObjects, " objects");
    objs_.emplace_back();
    objs_.back().kind = k;
    return static_cast<uint32_t>(objs_.size() - 1);
  }
  uint32_t make_int(int64_t v, Kind k = Kind::Int) {
    const uint32_t o = make(k);
    objs_[o].i = v;
    return o;
  }
  void push(uint32_t o) {
    if (stack_.size() >= kMaxStack) bad("stack deeper than ", kMaxStack);
    stack_.push_back(o);
  }
  // Items above the innermost MARK are all an opcode may touch (as in Python's unpickler).
  size_t frame_base() const { return marks_.empty() ? 0 : marks_.back(); }
  uint32_t pop() {
    if (stack_.size() <= frame_base()) bad("stack underflow");
    const uint32_t o = stack_.back();
    stack_.pop_back();
    return o;
  }
  uint32_t top() const {
    if (stack_.size() <= frame_base()) bad("stack underflow");
    return stack_.back();
  }
  std::vector<uint32_t> pop_mark() {
    if (marks_.empty()) bad("no MARK on the stack");
    const size_t base = marks_.back();
    marks_.pop_back();
    std::vector<uint32_t> items(stack_.begin() + static_cast<std::ptrdiff_t>(base), stack_.end());
    stack_.resize(base);
    return items;
  }
  void memo_put(uint64_t key) {
    const uint32_t o = top();
    auto it = memo_.find(key);
    if (it != memo_.end()) {
      it->second = o;
      return;
    }
    if (memo_.size() >= kMaxMemo) bad("more than ", kMaxMemo, " memo entries");
    memo_.emplace(key, o);
  }
  void memo_get(uint64_t key) {
    auto it = memo_.find(key);
    if (it == memo_.end()) bad("memo key ", key, " is not defined");
    push(it->second);
  }
  uint32_t tuple_of(std::vector<uint32_t> items) {
    const uint32_t o = make(Kind::Tuple);
    objs_[o].items = std::move(items);
    return o;
  }
  std::string read_line() {
    const uint64_t left = n_ - pos_;
    const uint64_t limit = left < kMaxGlobalLine ? left : kMaxGlobalLine;
    const void* nl = std::memchr(p_ + pos_, '\n', limit);
    if (nl == nullptr) {
      if (left < kMaxGlobalLine) truncated(left + 1);
      bad("name longer than ", kMaxGlobalLine, " bytes");
    }
    const uint64_t len = static_cast<const unsigned char*>(nl) - (p_ + pos_);
    std::string s(reinterpret_cast<const char*>(p_ + pos_), len);
    pos_ += len + 1;
    return s;
  }

  // The torch vocabulary, in pickle_torch_objects.cpp.
  void op_global();
  void op_reduce();
  void op_binpersid();
  void op_build();

  const std::string& path_;
  const unsigned char* file_;
  const unsigned char* p_;
  uint64_t n_;
  const ZipArchive& zip_;
  const std::string& prefix_;
  uint64_t pos_ = 0;
  uint64_t op_at_ = 0;
  unsigned char op_ = 0;

  std::vector<Obj> objs_;
  std::vector<StorageRef> storages_;
  std::vector<TensorRef> tensors_;
  std::vector<uint32_t> stack_;
  std::vector<size_t> marks_;
  std::unordered_map<uint64_t, uint32_t> memo_;
};

}  // namespace eagle2::detail

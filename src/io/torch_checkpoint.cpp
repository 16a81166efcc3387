#include "io/torch_checkpoint.h"

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "core/error.h"

namespace eagle2 {
namespace {

// ---------------------------------------------------------------------------------------------
// Small helpers

uint64_t rd_le(const unsigned char* p, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}
uint32_t rd16(const unsigned char* p) {
  return static_cast<uint32_t>(rd_le(p, 2));
}
uint32_t rd32(const unsigned char* p) {
  return static_cast<uint32_t>(rd_le(p, 4));
}
uint64_t rd64(const unsigned char* p) {
  return rd_le(p, 8);
}

// Names come from the file and may hold anything; an Error must stay one readable line.
std::string printable(std::string_view s) {
  constexpr size_t kMax = 200;
  std::string out;
  for (size_t i = 0; i < s.size() && i < kMax; ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  if (s.size() > kMax) out += "...";
  return out;
}

// ---------------------------------------------------------------------------------------------
// Zip (stored entries only; torch.save never compresses)

constexpr uint32_t kLocalSig = 0x04034b50;
constexpr uint32_t kCentralSig = 0x02014b50;
constexpr uint32_t kEocdSig = 0x06054b50;
constexpr uint32_t kZip64EocdSig = 0x06064b50;
constexpr uint32_t kZip64LocatorSig = 0x07064b50;
constexpr uint64_t kEocdSize = 22;
constexpr uint64_t kCentralSize = 46;
constexpr uint64_t kLocalSize = 30;
constexpr uint64_t kZip64EocdSize = 56;
constexpr uint64_t kZip64LocatorSize = 20;

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

// Fills the fields that the central directory saturated (0xFFFFFFFF / 0xFFFF) from the zip64
// extra field (id 1), which lists only those, in this fixed order.
void apply_zip64_extra(const std::string& path, const std::string& shown, const unsigned char* p,
                       uint64_t len, uint64_t* usize, uint64_t* csize, uint64_t* lho,
                       uint64_t* disk) {
  while (len >= 4) {
    const uint32_t id = rd16(p);
    const uint64_t sz = rd16(p + 2);
    if (sz > len - 4) fail(path, ": zip entry '", shown, "' has a malformed extra field");
    if (id == 1) {
      const unsigned char* q = p + 4;
      uint64_t left = sz;
      auto take = [&](uint64_t* field, uint64_t saturated, int width) {
        if (*field != saturated) return;
        if (left < static_cast<uint64_t>(width)) {
          fail(path, ": zip entry '", shown, "' has a zip64 extra field too short for its sizes");
        }
        *field = rd_le(q, width);
        q += width;
        left -= width;
      };
      take(usize, 0xffffffffu, 8);
      take(csize, 0xffffffffu, 8);
      take(lho, 0xffffffffu, 8);
      take(disk, 0xffffu, 4);
      return;
    }
    p += 4 + sz;
    len -= 4 + sz;
  }
  fail(path, ": zip entry '", shown, "' needs a zip64 extra field but has none");
}

ZipArchive read_zip(const std::string& path, const unsigned char* data, uint64_t size) {
  if (size < kEocdSize) {
    fail(path, ": not a zip archive (", size, " bytes, no end of central directory record)");
  }
  // The record sits at the end, after at most a 64 KiB comment. Requiring the comment length to
  // reach exactly the end keeps a signature inside the comment or the data from being taken.
  const uint64_t last = size - kEocdSize;
  const uint64_t lowest = last > 0xffff ? last - 0xffff : 0;
  uint64_t eocd = UINT64_MAX;
  for (uint64_t pos = last + 1; pos-- > lowest;) {
    if (rd32(data + pos) == kEocdSig && pos + kEocdSize + rd16(data + pos + 20) == size) {
      eocd = pos;
      break;
    }
  }
  if (eocd == UINT64_MAX) fail(path, ": not a zip archive (no end of central directory record)");

  const unsigned char* e = data + eocd;
  uint64_t disk = rd16(e + 4), cd_disk = rd16(e + 6);
  uint64_t count_here = rd16(e + 8), count = rd16(e + 10);
  uint64_t cd_size = rd32(e + 12), cd_offset = rd32(e + 16);
  uint64_t cd_limit = eocd;  // the central directory ends before the records that describe it

  if (eocd >= kZip64LocatorSize && rd32(e - kZip64LocatorSize) == kZip64LocatorSig) {
    const unsigned char* loc = e - kZip64LocatorSize;
    if (rd32(loc + 4) != 0 || rd32(loc + 16) != 1) {
      fail(path, ": multi-disk zip archives are not supported");
    }
    const uint64_t rec = rd64(loc + 8);
    const uint64_t rec_limit = eocd - kZip64LocatorSize;
    if (rec > rec_limit || rec_limit - rec < kZip64EocdSize) {
      fail(path, ": zip64 end of central directory record (offset ", rec,
           ") lies outside the file");
    }
    const unsigned char* r = data + rec;
    if (rd32(r) != kZip64EocdSig) {
      fail(path, ": no zip64 end of central directory record at offset ", rec);
    }
    disk = rd32(r + 16);
    cd_disk = rd32(r + 20);
    count_here = rd64(r + 24);
    count = rd64(r + 32);
    cd_size = rd64(r + 40);
    cd_offset = rd64(r + 48);
    cd_limit = rec;
  } else if (count == 0xffff || cd_size == 0xffffffffu || cd_offset == 0xffffffffu) {
    fail(path, ": zip end of central directory record needs zip64, but there is no zip64 locator");
  }
  if (disk != 0 || cd_disk != 0 || count_here != count) {
    fail(path, ": multi-disk zip archives are not supported");
  }
  if (cd_offset > cd_limit || cd_size > cd_limit - cd_offset) {
    fail(path, ": zip central directory (", cd_size, " bytes at offset ", cd_offset,
         ") lies outside the file");
  }
  if (count > cd_size / kCentralSize) {
    fail(path, ": zip central directory claims ", count, " entries but holds only ", cd_size,
         " bytes");
  }

  ZipArchive zip;
  zip.entries.reserve(count);
  const uint64_t cd_end = cd_offset + cd_size;
  uint64_t pos = cd_offset;
  for (uint64_t i = 0; i < count; ++i) {
    if (cd_end - pos < kCentralSize || rd32(data + pos) != kCentralSig) {
      fail(path, ": zip central directory entry ", i, " (offset ", pos, ") is malformed");
    }
    const unsigned char* c = data + pos;
    const uint32_t flags = rd16(c + 8);
    const uint32_t method = rd16(c + 10);
    uint64_t csize = rd32(c + 20), usize = rd32(c + 24);
    const uint64_t name_len = rd16(c + 28), extra_len = rd16(c + 30), comment_len = rd16(c + 32);
    uint64_t entry_disk = rd16(c + 34);
    uint64_t lho = rd32(c + 42);
    if (cd_end - pos - kCentralSize < name_len + extra_len + comment_len) {
      fail(path, ": zip central directory entry ", i, " (offset ", pos,
           ") runs past the central directory");
    }
    ZipEntry entry;
    entry.name.assign(reinterpret_cast<const char*>(c + kCentralSize), name_len);
    const std::string shown = printable(entry.name);
    if (usize == 0xffffffffu || csize == 0xffffffffu || lho == 0xffffffffu ||
        entry_disk == 0xffffu) {
      apply_zip64_extra(path, shown, c + kCentralSize + name_len, extra_len, &usize, &csize, &lho,
                        &entry_disk);
    }
    if (entry_disk != 0) fail(path, ": multi-disk zip archives are not supported");
    if (flags & 1u) {
      fail(path, ": zip entry '", shown, "' is encrypted; encrypted entries are not supported");
    }
    if (method != 0) {
      fail(path, ": zip entry '", shown, "' is compressed (method ", method,
           "); only stored entries are supported");
    }
    if (csize != usize) {
      fail(path, ": zip entry '", shown, "' is stored but its compressed size (", csize,
           ") differs from its size (", usize, ")");
    }

    // The data starts after the local header, whose extra field (torch pads with it to align
    // the data) may differ in length from the central one. Its size fields are not used: torch
    // sets the data-descriptor flag and leaves them zero.
    if (lho > size || size - lho < kLocalSize || rd32(data + lho) != kLocalSig) {
      fail(path, ": zip entry '", shown, "' has no local header at offset ", lho);
    }
    const unsigned char* l = data + lho;
    const uint64_t local_name_len = rd16(l + 26), local_extra_len = rd16(l + 28);
    const uint64_t start = lho + kLocalSize + local_name_len + local_extra_len;
    if (start > size || usize > size - start) {
      fail(path, ": zip entry '", shown, "' (", usize, " bytes at offset ", start,
           ") runs past the end of the file (", size, " bytes)");
    }
    if (local_name_len != name_len ||
        std::memcmp(l + kLocalSize, c + kCentralSize, name_len) != 0 ||
        ((rd16(l + 6) ^ flags) & 1u) != 0 || rd16(l + 8) != method) {
      fail(path, ": zip entry '", shown,
           "' has a local header that disagrees with the central directory");
    }
    entry.offset = start;
    entry.size = usize;
    if (!zip.by_name.emplace(entry.name, zip.entries.size()).second) {
      fail(path, ": zip archive has two entries named '", shown, "'");
    }
    zip.entries.push_back(std::move(entry));
    pos += kCentralSize + name_len + extra_len + comment_len;
  }
  return zip;
}

// ---------------------------------------------------------------------------------------------
// Pickle: just enough of the protocol-2 machine to rebuild a state dict.

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

const char* kind_name(Kind k) {
  switch (k) {
    case Kind::None:
      return "None";
    case Kind::Bool:
      return "bool";
    case Kind::Int:
      return "int";
    case Kind::Float:
      return "float";
    case Kind::Str:
      return "str";
    case Kind::Tuple:
      return "tuple";
    case Kind::List:
      return "list";
    case Kind::Dict:
      return "dict";
    case Kind::Global:
      return "global";
    case Kind::Storage:
      return "storage";
    case Kind::Tensor:
      return "tensor";
  }
  return "?";
}

enum class Callable : uint8_t {
  OrderedDict,
  RebuildTensorV2,
  RebuildParameter,
  FloatStorage,
  HalfStorage,
  BFloat16Storage
};

const char* callable_name(Callable c) {
  switch (c) {
    case Callable::OrderedDict:
      return "collections.OrderedDict";
    case Callable::RebuildTensorV2:
      return "torch._utils._rebuild_tensor_v2";
    case Callable::RebuildParameter:
      return "torch._utils._rebuild_parameter";
    case Callable::FloatStorage:
      return "torch.FloatStorage";
    case Callable::HalfStorage:
      return "torch.HalfStorage";
    case Callable::BFloat16Storage:
      return "torch.BFloat16Storage";
  }
  return "?";
}

// Every pickle opcode, so that an unsupported one is reported by name.
struct OpcodeName {
  unsigned char code;
  const char* name;
};
// clang-format off
constexpr OpcodeName kOpcodeNames[] = {
    {'(', "MARK"}, {'.', "STOP"}, {'0', "POP"}, {'1', "POP_MARK"}, {'2', "DUP"}, {'F', "FLOAT"},
    {'I', "INT"}, {'J', "BININT"}, {'K', "BININT1"}, {'L', "LONG"}, {'M', "BININT2"},
    {'N', "NONE"}, {'P', "PERSID"}, {'Q', "BINPERSID"}, {'R', "REDUCE"}, {'S', "STRING"},
    {'T', "BINSTRING"}, {'U', "SHORT_BINSTRING"}, {'V', "UNICODE"}, {'X', "BINUNICODE"},
    {'a', "APPEND"}, {'b', "BUILD"}, {'c', "GLOBAL"}, {'d', "DICT"}, {'}', "EMPTY_DICT"},
    {'e', "APPENDS"}, {'g', "GET"}, {'h', "BINGET"}, {'i', "INST"}, {'j', "LONG_BINGET"},
    {'l', "LIST"}, {']', "EMPTY_LIST"}, {'o', "OBJ"}, {'p', "PUT"}, {'q', "BINPUT"},
    {'r', "LONG_BINPUT"}, {'s', "SETITEM"}, {'t', "TUPLE"}, {')', "EMPTY_TUPLE"},
    {'u', "SETITEMS"}, {'G', "BINFLOAT"}, {'B', "BINBYTES"}, {'C', "SHORT_BINBYTES"},
    {0x80, "PROTO"}, {0x81, "NEWOBJ"}, {0x82, "EXT1"}, {0x83, "EXT2"}, {0x84, "EXT4"},
    {0x85, "TUPLE1"}, {0x86, "TUPLE2"}, {0x87, "TUPLE3"}, {0x88, "NEWTRUE"}, {0x89, "NEWFALSE"},
    {0x8a, "LONG1"}, {0x8b, "LONG4"}, {0x8c, "SHORT_BINUNICODE"}, {0x8d, "BINUNICODE8"},
    {0x8e, "BINBYTES8"}, {0x8f, "EMPTY_SET"}, {0x90, "ADDITEMS"}, {0x91, "FROZENSET"},
    {0x92, "NEWOBJ_EX"}, {0x93, "STACK_GLOBAL"}, {0x94, "MEMOIZE"}, {0x95, "FRAME"},
    {0x96, "BYTEARRAY8"}, {0x97, "NEXT_BUFFER"}, {0x98, "READONLY_BUFFER"},
};
// clang-format on

const char* opcode_name(unsigned char op) {
  for (const OpcodeName& o : kOpcodeNames) {
    if (o.code == op) return o.name;
  }
  return nullptr;
}

// Objects live in one arena and refer to each other by index: nothing is destroyed recursively
// and reference cycles (legal in a pickle) cannot leak or loop.
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

void Unpickler::op_global() {
  const std::string module = read_line();
  const std::string name = read_line();
  const std::string full = module + "." + name;
  Callable c;
  if (full == "collections.OrderedDict") {
    c = Callable::OrderedDict;
  } else if (full == "torch._utils._rebuild_tensor_v2") {
    c = Callable::RebuildTensorV2;
  } else if (full == "torch._utils._rebuild_parameter") {
    c = Callable::RebuildParameter;
  } else if (full == "torch.FloatStorage") {
    c = Callable::FloatStorage;
  } else if (full == "torch.HalfStorage") {
    c = Callable::HalfStorage;
  } else if (full == "torch.BFloat16Storage") {
    c = Callable::BFloat16Storage;
  } else if (module == "torch" && name.size() > 7 &&
             name.compare(name.size() - 7, 7, "Storage") == 0) {
    // A real checkpoint with, e.g., int64 buffers lands here; say why rather than just "no".
    fail(path_, ": pickle global '", printable(full),
         "' is not allowed (only float32, float16 and bfloat16 tensors are supported)");
  } else {
    fail(path_, ": pickle global '", printable(full), "' is not allowed");
  }
  push(make_int(static_cast<int64_t>(c), Kind::Global));
}

void Unpickler::op_binpersid() {
  const uint32_t pid = pop();
  const Obj& t = objs_[pid];
  auto is = [&](size_t k, Kind kind) { return objs_[t.items[k]].kind == kind; };
  if (t.kind != Kind::Tuple || t.items.size() != 5 || !is(0, Kind::Str) ||
      objs_[t.items[0]].s != "storage" || !is(1, Kind::Global) || !is(2, Kind::Str) ||
      !is(3, Kind::Str) || !is(4, Kind::Int)) {
    bad("persistent id is not ('storage', storage_type, key, location, numel)");
  }
  StorageRef s;
  switch (static_cast<Callable>(objs_[t.items[1]].i)) {
    case Callable::FloatStorage:
      s.dtype = DType::F32;
      break;
    case Callable::HalfStorage:
      s.dtype = DType::F16;
      break;
    case Callable::BFloat16Storage:
      s.dtype = DType::BF16;
      break;
    default:
      bad("persistent id names '", callable_name(static_cast<Callable>(objs_[t.items[1]].i)),
          "', not a storage type");
  }
  s.key = objs_[t.items[2]].s;
  s.numel = objs_[t.items[4]].i;
  const std::string entry_name = prefix_ + "/data/" + s.key;
  const ZipEntry* entry = zip_.find(entry_name);
  if (entry == nullptr) {
    fail(path_, ": storage '", printable(s.key), "' has no zip entry '", printable(entry_name),
         "'");
  }
  const uint64_t el = dtype_size(s.dtype);
  if (s.numel < 0 || static_cast<uint64_t>(s.numel) > entry->size / el) {
    fail(path_, ": truncated storage: zip entry '", printable(entry_name), "' holds ", entry->size,
         " bytes, the pickle declares ", s.numel, " elements of ", el, " bytes");
  }
  s.data = file_ + entry->offset;
  storages_.push_back(std::move(s));
  const uint32_t o = make(Kind::Storage);
  objs_[o].i = static_cast<int64_t>(storages_.size() - 1);
  push(o);
}

void Unpickler::op_reduce() {
  const uint32_t args_i = pop();
  const uint32_t fn_i = pop();
  if (objs_[fn_i].kind != Kind::Global) bad("cannot call a ", kind_name(objs_[fn_i].kind));
  if (objs_[args_i].kind != Kind::Tuple)
    bad("arguments are a ", kind_name(objs_[args_i].kind), ", not a tuple");
  const Callable fn = static_cast<Callable>(objs_[fn_i].i);
  const std::vector<uint32_t> args = objs_[args_i].items;  // copy: make() may grow objs_
  auto kind = [&](size_t k) { return objs_[args[k]].kind; };
  switch (fn) {
    case Callable::OrderedDict:
      if (!args.empty()) bad("collections.OrderedDict called with arguments");
      push(make(Kind::Dict));
      return;
    case Callable::RebuildParameter:
      if (args.size() != 3 || kind(0) != Kind::Tensor || kind(1) != Kind::Bool ||
          kind(2) != Kind::Dict) {
        bad("_rebuild_parameter expects (tensor, requires_grad, backward_hooks)");
      }
      push(args[0]);
      return;
    case Callable::RebuildTensorV2: {
      if (args.size() < 6 || args.size() > 7) {
        bad("_rebuild_tensor_v2 expects 6 or 7 arguments, got ", args.size());
      }
      const Kind want[7] = {Kind::Storage, Kind::Int,  Kind::Tuple, Kind::Tuple,
                            Kind::Bool,    Kind::Dict, Kind::Dict};
      for (size_t k = 0; k < args.size(); ++k) {
        if (kind(k) == want[k] || (k == 6 && kind(k) == Kind::None)) continue;
        bad("_rebuild_tensor_v2 argument ", k, " is a ", kind_name(kind(k)), ", expected a ",
            kind_name(want[k]),
            " (arguments: storage, storage_offset, size, stride, requires_grad, "
            "backward_hooks[, metadata])");
      }
      TensorRef t;
      t.storage = static_cast<uint32_t>(objs_[args[0]].i);
      t.offset = objs_[args[1]].i;
      for (int which = 0; which < 2; ++which) {
        std::vector<int64_t>& dst = which == 0 ? t.shape : t.stride;
        for (uint32_t item : objs_[args[2 + which]].items) {
          if (objs_[item].kind != Kind::Int) {
            bad("_rebuild_tensor_v2 ", which == 0 ? "size" : "stride", " holds a ",
                kind_name(objs_[item].kind), ", expected ints");
          }
          dst.push_back(objs_[item].i);
        }
      }
      if (t.shape.size() != t.stride.size()) {
        bad("_rebuild_tensor_v2 size has ", t.shape.size(), " dimensions but stride has ",
            t.stride.size());
      }
      tensors_.push_back(std::move(t));
      const uint32_t o = make(Kind::Tensor);
      objs_[o].i = static_cast<int64_t>(tensors_.size() - 1);
      push(o);
      return;
    }
    default:
      bad("pickle global '", callable_name(fn), "' cannot be called");
  }
}

void Unpickler::op_build() {
  // Only OrderedDict state (state_dict()'s `_metadata` attribute) is expected; it carries nothing
  // a reader of the tensors needs.
  const uint32_t state = pop();
  const uint32_t target = top();
  if (objs_[target].kind != Kind::Dict ||
      (objs_[state].kind != Kind::Dict && objs_[state].kind != Kind::None)) {
    bad("cannot set the state of a ", kind_name(objs_[target].kind), " from a ",
        kind_name(objs_[state].kind));
  }
}

uint32_t Unpickler::run() {
  while (pos_ < n_) {
    op_at_ = pos_;
    op_ = p_[pos_++];
    switch (op_) {
      case 0x80: {  // PROTO
        const unsigned v = *take(1);
        if (v < 2 || v > 5) bad("unsupported pickle protocol ", v);
        break;
      }
      case 0x95: {  // FRAME: only a read-ahead hint; the bytes that follow are ordinary opcodes
        const uint64_t len = rd64(take(8));
        if (len > n_ - pos_) truncated(len);
        break;
      }
      case '}':
        push(make(Kind::Dict));
        break;
      case ']':
        push(make(Kind::List));
        break;
      case ')':
        push(make(Kind::Tuple));
        break;
      case '(':
        if (marks_.size() >= kMaxStack) bad("more than ", kMaxStack, " open MARKs");
        marks_.push_back(stack_.size());
        break;
      case 'X':
      case 0x8c: {  // BINUNICODE, SHORT_BINUNICODE
        const uint64_t len = op_ == 'X' ? rd32(take(4)) : *take(1);
        const unsigned char* at = take(len);
        const uint32_t o = make(Kind::Str);
        objs_[o].s.assign(reinterpret_cast<const char*>(at), len);
        push(o);
        break;
      }
      case 'J':
        push(make_int(static_cast<int32_t>(rd32(take(4)))));
        break;
      case 'K':
        push(make_int(*take(1)));
        break;
      case 'M':
        push(make_int(rd16(take(2))));
        break;
      case 0x8a: {  // LONG1: little-endian two's complement of n bytes
        const unsigned len = *take(1);
        if (len > 8) bad("integer of ", len, " bytes is too large");
        const unsigned char* at = take(len);
        uint64_t v = len == 0 ? 0 : rd_le(at, static_cast<int>(len));
        if (len > 0 && len < 8 && (at[len - 1] & 0x80)) v |= ~uint64_t{0} << (8 * len);
        push(make_int(static_cast<int64_t>(v)));
        break;
      }
      case 'N':
        push(make(Kind::None));
        break;
      case 0x88:
        push(make_int(1, Kind::Bool));
        break;
      case 0x89:
        push(make_int(0, Kind::Bool));
        break;
      case 'G': {  // BINFLOAT is big-endian
        const unsigned char* at = take(8);
        uint64_t bits = 0;
        for (int k = 0; k < 8; ++k) bits = (bits << 8) | at[k];
        const uint32_t o = make(Kind::Float);
        std::memcpy(&objs_[o].f, &bits, 8);
        push(o);
        break;
      }
      case 't':
        push(tuple_of(pop_mark()));
        break;
      case 0x85:
      case 0x86:
      case 0x87: {  // TUPLE1..3
        const size_t k = op_ - 0x84u;
        std::vector<uint32_t> items(k);
        for (size_t j = k; j-- > 0;) items[j] = pop();
        push(tuple_of(std::move(items)));
        break;
      }
      case 's': {
        const uint32_t v = pop();
        const uint32_t key = pop();
        const uint32_t d = top();
        if (objs_[d].kind != Kind::Dict)
          bad("target is a ", kind_name(objs_[d].kind), ", not a dict");
        objs_[d].items.push_back(key);
        objs_[d].items.push_back(v);
        break;
      }
      case 'u': {
        std::vector<uint32_t> items = pop_mark();
        const uint32_t d = top();
        if (objs_[d].kind != Kind::Dict)
          bad("target is a ", kind_name(objs_[d].kind), ", not a dict");
        if (items.size() % 2 != 0) bad("odd number of items (", items.size(), ")");
        objs_[d].items.insert(objs_[d].items.end(), items.begin(), items.end());
        break;
      }
      case 'a': {
        const uint32_t v = pop();
        const uint32_t l = top();
        if (objs_[l].kind != Kind::List)
          bad("target is a ", kind_name(objs_[l].kind), ", not a list");
        objs_[l].items.push_back(v);
        break;
      }
      case 'e': {
        std::vector<uint32_t> items = pop_mark();
        const uint32_t l = top();
        if (objs_[l].kind != Kind::List)
          bad("target is a ", kind_name(objs_[l].kind), ", not a list");
        objs_[l].items.insert(objs_[l].items.end(), items.begin(), items.end());
        break;
      }
      case 'q':
        memo_put(*take(1));
        break;
      case 'r':
        memo_put(rd32(take(4)));
        break;
      case 0x94:
        memo_put(memo_.size());
        break;
      case 'h':
        memo_get(*take(1));
        break;
      case 'j':
        memo_get(rd32(take(4)));
        break;
      case 'c':
        op_global();
        break;
      case 'R':
        op_reduce();
        break;
      case 'b':
        op_build();
        break;
      case 'Q':
        op_binpersid();
        break;
      case '.':
        if (!marks_.empty() || stack_.size() != 1) {
          bad("stack holds ", stack_.size(), " items and ", marks_.size(),
              " MARKs, expected exactly one object");
        }
        return stack_.back();
      default: {
        char hex[8];
        std::snprintf(hex, sizeof hex, "0x%02x", op_);
        const char* name = opcode_name(op_);
        if (name != nullptr) {
          fail(path_, ": unsupported pickle opcode ", hex, " ('", name, "') at byte ", op_at_);
        }
        fail(path_, ": unsupported pickle opcode ", hex, " at byte ", op_at_);
      }
    }
  }
  fail(path_, ": data.pkl ends at byte ", n_, " without a STOP opcode");
}

bool mul_overflows(int64_t a, int64_t b, int64_t* out) {
  return __builtin_mul_overflow(a, b, out);
}
bool add_overflows(int64_t a, int64_t b, int64_t* out) {
  return __builtin_add_overflow(a, b, out);
}

}  // namespace

TorchCheckpoint::TorchCheckpoint(const std::string& path)
    : path_(path), file_(std::make_unique<MappedFile>(path)) {
  const unsigned char* base = file_->data();
  const uint64_t size = file_->size();
  const ZipArchive zip = read_zip(path, base, size);

  // torch names every entry "<archive>/..." and takes the archive name from the first entry.
  if (zip.entries.empty()) fail(path, ": zip archive is empty; not a torch.save checkpoint");
  const std::string& first = zip.entries.front().name;
  const size_t slash = first.find('/');
  if (slash == std::string::npos || slash == 0) {
    fail(path, ": zip entry '", printable(first),
         "' is not inside an archive folder; not a torch.save checkpoint");
  }
  const std::string prefix = first.substr(0, slash);

  if (const ZipEntry* order = zip.find(prefix + "/byteorder")) {
    const std::string_view value(reinterpret_cast<const char*>(base + order->offset), order->size);
    if (value != "little") {
      fail(path, ": byteorder is '", printable(value),
           "'; only little-endian checkpoints are supported");
    }
  }
  const ZipEntry* pkl = zip.find(prefix + "/data.pkl");
  if (pkl == nullptr) {
    fail(path, ": zip archive has no entry '", printable(prefix),
         "/data.pkl'; not a torch.save checkpoint");
  }

  Unpickler up(path, base, zip, prefix, base + pkl->offset, pkl->size);
  const Obj& root = up.obj(up.run());
  if (root.kind != Kind::Dict) {
    fail(path, ": data.pkl holds a ", kind_name(root.kind), ", expected a dict of name -> tensor");
  }

  // Copies are the only allocation a small hostile file could inflate (a stride-0 view of one
  // element can claim any size); honest views never need more than the storages they view, so
  // all copies together are bounded by the file's size.
  for (size_t k = 0; k + 1 < root.items.size(); k += 2) {
    const Obj& key = up.obj(root.items[k]);
    const Obj& value = up.obj(root.items[k + 1]);
    if (key.kind != Kind::Str) {
      fail(path, ": state dict has a key that is a ", kind_name(key.kind), ", expected a str");
    }
    const std::string name = printable(key.s);
    if (value.kind != Kind::Tensor) {
      fail(path, ": state dict entry '", name, "' is a ", kind_name(value.kind),
           ", expected a tensor");
    }
    const TensorRef& t = up.tensor(value.i);
    const StorageRef& s = up.storage(t.storage);
    const int64_t el = static_cast<int64_t>(dtype_size(s.dtype));
    auto where = [&] {
      return std::string("(storage offset ") + std::to_string(t.offset) + ", shape " +
             shape_string(t.shape) + ", stride " + shape_string(t.stride) + ")";
    };

    if (t.offset < 0) fail(path, ": tensor '", name, "' has a negative storage offset ", where());
    int64_t numel = 1;
    int64_t last = t.offset;  // highest element index the view touches
    for (size_t d = 0; d < t.shape.size(); ++d) {
      if (t.shape[d] < 0 || t.stride[d] < 0) {
        fail(path, ": tensor '", name, "' has a negative size or stride ", where());
      }
      int64_t reach = 0;
      if (mul_overflows(numel, t.shape[d], &numel) || numel > INT64_MAX / el ||
          (t.shape[d] > 0 && (mul_overflows(t.shape[d] - 1, t.stride[d], &reach) ||
                              add_overflows(last, reach, &last)))) {
        fail(path, ": tensor '", name, "' is too large ", where());
      }
    }
    TensorView view;
    view.name = key.s;
    view.file = path;
    view.dtype = s.dtype;
    view.shape = t.shape;
    if (numel == 0) {
      view.data = s.data;
    } else {
      if (last >= s.numel) {
        fail(path, ": tensor '", name, "' ", where(), " reaches element ", last, " of storage '",
             printable(s.key), "', which holds ", s.numel, " elements");
      }
      bool contiguous = true;
      int64_t expect = 1;
      for (size_t d = t.shape.size(); d-- > 0;) {
        if (t.shape[d] != 1 && t.stride[d] != expect) contiguous = false;
        expect *= t.shape[d];
      }
      const unsigned char* first_byte = s.data + t.offset * el;
      const uint64_t bytes = static_cast<uint64_t>(numel) * static_cast<uint64_t>(el);
      if (!contiguous || !is_aligned_for(first_byte, s.dtype)) {
        if (bytes > size - copies_.copied_bytes()) {
          fail(path, ": tensor '", name, "' ", where(), " needs a copy of ", bytes,
               " bytes, more than the whole file holds; refusing");
        }
      }
      if (contiguous) {
        // The shared rule: in place when aligned, else one owned aligned copy.
        view.data = copies_.aligned(first_byte, bytes, s.dtype);
      } else {
        unsigned char* buf = copies_.allocate(bytes);
        // Walk the view in row-major order with an odometer over its indices.
        const size_t nd = t.shape.size();
        std::vector<int64_t> idx(nd, 0);
        int64_t src = t.offset;
        for (int64_t i = 0; i < numel; ++i) {
          std::memcpy(buf + i * el, s.data + src * el, static_cast<size_t>(el));
          // Never step past the last index: for a size-1 dimension any stride is legal, and
          // src + stride could overflow.
          for (size_t d = nd; d-- > 0;) {
            if (++idx[d] < t.shape[d]) {
              src += t.stride[d];
              break;
            }
            src -= t.stride[d] * (t.shape[d] - 1);
            idx[d] = 0;
          }
        }
        view.data = buf;
      }
    }
    if (!tensors_.emplace(key.s, std::move(view)).second) {
      fail(path, ": state dict has two entries named '", name, "'");
    }
  }
}

}  // namespace eagle2

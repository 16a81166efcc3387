#include "io/pickle_machine.h"

#include <cstdio>
#include <cstring>

#include "io/byte_reading.h"

namespace eagle2::detail {

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

namespace {

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

}  // namespace

const char* opcode_name(unsigned char op) {
  for (const OpcodeName& o : kOpcodeNames) {
    if (o.code == op) return o.name;
  }
  return nullptr;
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

}  // namespace eagle2::detail

// The torch side of the pickle machine: the globals a state dict may name (an allowlist), what
// calling them builds, and the persistent ids that tie a storage to its zip entry.
#include <string>
#include <utility>
#include <vector>

#include "core/error.h"
#include "io/byte_reading.h"
#include "io/pickle_machine.h"

namespace eagle2::detail {
namespace {

enum class Callable : uint8_t {
  OrderedDict,
  RebuildTensorV2,
  RebuildParameter,
  FloatStorage,
  HalfStorage,
  BFloat16Storage,
  LongStorage,  // int64: an EAGLE-3 head's d2t
  BoolStorage   // an EAGLE-3 head's t2d
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
    case Callable::LongStorage:
      return "torch.LongStorage";
    case Callable::BoolStorage:
      return "torch.BoolStorage";
  }
  return "?";
}

}  // namespace

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
  } else if (full == "torch.LongStorage") {
    c = Callable::LongStorage;
  } else if (full == "torch.BoolStorage") {
    c = Callable::BoolStorage;
  } else if (module == "torch" && name.size() > 7 &&
             name.compare(name.size() - 7, 7, "Storage") == 0) {
    // A real checkpoint with, e.g., int32 buffers lands here; say why rather than just "no".
    fail(path_, ": pickle global '", printable(full),
         "' is not allowed (supported: float32, float16 and bfloat16 tensors, and int64 and bool "
         "index tensors)");
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
    case Callable::LongStorage:
      s.dtype = DType::I64;
      break;
    case Callable::BoolStorage:
      s.dtype = DType::BOOL;
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

}  // namespace eagle2::detail

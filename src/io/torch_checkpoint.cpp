#include "io/torch_checkpoint.h"

#include <cstdint>
#include <cstring>
#include <string_view>
#include <utility>
#include <vector>

#include "core/error.h"
#include "io/byte_reading.h"
#include "io/pickle_machine.h"
#include "io/zip_reader.h"

// The torch.save reader in three parts: zip_reader.cpp finds the entries, the pickle machine
// (pickle_machine.cpp, pickle_torch_objects.cpp) rebuilds the state dict's objects, and this file
// checks the archive's layout and turns each (storage, offset, shape, stride) into a tensor view.
namespace eagle2 {
namespace {

using detail::Kind;
using detail::kind_name;
using detail::Obj;
using detail::printable;
using detail::read_zip;
using detail::StorageRef;
using detail::TensorRef;
using detail::Unpickler;
using detail::ZipArchive;
using detail::ZipEntry;

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

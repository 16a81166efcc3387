#include "io/safetensors.h"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <utility>

#include "core/error.h"
#include "core/regular_file.h"
#include "io/atomic_file.h"

namespace eagle2 {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// The header limit of the safetensors format (the reference implementation's MAX_HEADER_SIZE).
constexpr uint64_t kMaxHeaderBytes = 100'000'000;

uint64_t read_u64_le(const unsigned char* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

// Parses JSON text; a syntax error becomes one line naming the file and the byte where it broke
// (nlohmann's own wording varies between versions, so it is not passed on). Two equal keys in one
// object are refused: nlohmann would silently keep the last, the safetensors format forbids them,
// and a tensor or weight_map entry listed twice is two answers to one name.
json parse_json(const char* begin, const char* end, const std::string& where, const char* what) {
  std::vector<std::set<std::string>> keys_of_open_objects;
  const json::parser_callback_t refuse_duplicate_keys = [&](int, json::parse_event_t event,
                                                            json& parsed) {
    if (event == json::parse_event_t::object_start) keys_of_open_objects.emplace_back();
    if (event == json::parse_event_t::object_end) keys_of_open_objects.pop_back();
    if (event == json::parse_event_t::key &&
        !keys_of_open_objects.back().insert(parsed.get<std::string>()).second) {
      fail(where, ": ", what, " has two entries named '", parsed.get<std::string>(), "'");
    }
    return true;
  };
  try {
    return json::parse(begin, end, refuse_duplicate_keys);
  } catch (const json::parse_error& e) {
    fail(where, ": ", what, " is not valid JSON (parse error at byte ", e.byte, ")");
  } catch (const json::exception& e) {
    fail(where, ": ", what, " is not valid JSON (", e.what(), ")");
  }
}

// A JSON value as a non-negative integer no larger than `max`; false if it is anything else
// (negative, fractional, boolean, string, too large).
bool json_to_u64(const json& v, uint64_t* out) {
  if (v.is_number_unsigned()) {
    *out = v.get<uint64_t>();
    return true;
  }
  if (v.is_number_integer()) {
    const int64_t s = v.get<int64_t>();
    if (s < 0) return false;
    *out = static_cast<uint64_t>(s);
    return true;
  }
  return false;
}

struct Range {
  uint64_t begin, end;
  const std::string* name;
};

template <class... Parts>
[[noreturn]] void bad_entry(const std::string& path, const std::string& name, Parts&&... parts) {
  fail(path, ": tensor '", name, "': ", std::forward<Parts>(parts)...);
}

// Validates one header entry and returns its view (data pointer relative to `data`).
TensorView parse_entry(const std::string& path, const std::string& name, const json& entry,
                       const unsigned char* data, uint64_t data_size, Range* range) {
  if (!entry.is_object()) bad_entry(path, name, "entry is not an object");
  for (const char* key : {"dtype", "shape", "data_offsets"}) {
    if (!entry.contains(key)) bad_entry(path, name, "missing \"", key, "\"");
  }

  TensorView view;
  view.name = name;
  view.file = path;

  const json& dt = entry["dtype"];
  if (!dt.is_string()) bad_entry(path, name, "\"dtype\" is not a string");
  const std::string& dts = dt.get_ref<const std::string&>();
  // The element types only: parse_dtype also knows ggml's block types, which this format has no
  // spelling for (and whose sizes are not per element).
  if (!parse_dtype(dts, &view.dtype) || is_block_dtype(view.dtype)) {
    bad_entry(path, name, "unsupported dtype '", dts,
              "' (supported: F32, F16, BF16, and I64 and BOOL for index tensors)");
  }

  const json& sh = entry["shape"];
  if (!sh.is_array()) bad_entry(path, name, "\"shape\" is not a list of integers");
  for (const json& d : sh) {
    if (d.is_number_integer() && !d.is_number_unsigned() && d.get<int64_t>() < 0) {
      bad_entry(path, name, "negative dimension ", d.get<int64_t>(), " in shape");
    }
    uint64_t u;
    if (!json_to_u64(d, &u)) bad_entry(path, name, "\"shape\" is not a list of integers");
    if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      bad_entry(path, name, "dimension ", u, " in shape is too large");
    }
    view.shape.push_back(static_cast<int64_t>(u));
  }
  // The byte count is computed in unsigned 64-bit with overflow checks, and the product of the
  // nonzero dimensions must fit int64 too, so that TensorView::numel() (a plain int64 product in
  // order) can never overflow on a shape that passed here, even one like [2^40, 2^40, 0].
  uint64_t nonzero_product = 1;
  bool has_zero = false;
  for (int64_t d : view.shape) {
    if (d == 0) {
      has_zero = true;
    } else if (__builtin_mul_overflow(nonzero_product, static_cast<uint64_t>(d),
                                      &nonzero_product) ||
               nonzero_product > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      bad_entry(path, name, "shape ", shape_string(view.shape), " is too large");
    }
  }
  uint64_t need = 0;
  if (!has_zero && __builtin_mul_overflow(nonzero_product, dtype_size(view.dtype), &need)) {
    bad_entry(path, name, "shape ", shape_string(view.shape), " is too large");
  }

  const json& off = entry["data_offsets"];
  uint64_t b = 0, e = 0;
  if (!off.is_array() || off.size() != 2 || !json_to_u64(off[0], &b) || !json_to_u64(off[1], &e)) {
    bad_entry(path, name,
              "\"data_offsets\" is not a list [begin, end] of two non-negative integers");
  }
  if (b > e) bad_entry(path, name, "data_offsets [", b, ", ", e, ") have begin > end");
  if (e > data_size) {
    fail(path, ": tensor '", name, "' data [", b, ", ", e,
         ") extends past the end of the data section (size ", data_size, "): file truncated?");
  }
  if (e - b != need) {
    bad_entry(path, name, "data_offsets [", b, ", ", e, ") hold ", e - b, " bytes, but shape ",
              shape_string(view.shape), " of ", dtype_name(view.dtype), " needs ", need);
  }
  view.data = data + b;
  *range = Range{b, e, nullptr};
  return view;
}

}  // namespace

SafetensorsFile::SafetensorsFile(const std::string& path)
    : file_(std::make_unique<MappedFile>(path, weight_residency())) {
  const size_t size = file_->size();
  if (size < 8) {
    fail(path, ": file is ", size, " bytes, too short for a safetensors header (needs at least 8)");
  }
  const uint64_t header_len = read_u64_le(file_->data());
  if (header_len > size - 8)
    fail(path, ": header length ", header_len, " exceeds file size ", size);
  // The format caps the header (the reference reader refuses more): a larger one is not a
  // safetensors file, and its parsed form would cost many times its size in memory.
  if (header_len > kMaxHeaderBytes) {
    fail(path, ": header length ", header_len, " exceeds the format's limit of ", kMaxHeaderBytes,
         " bytes");
  }

  const char* hbegin = reinterpret_cast<const char*>(file_->data()) + 8;
  const json header = parse_json(hbegin, hbegin + header_len, path, "header");
  if (!header.is_object()) fail(path, ": header is not a JSON object");

  const unsigned char* data = file_->data() + 8 + header_len;
  const uint64_t data_size = size - 8 - header_len;
  std::vector<Range> ranges;
  try {
    for (const auto& [name, entry] : header.items()) {
      if (name == "__metadata__") {
        if (!entry.is_object()) fail(path, ": header \"__metadata__\" is not an object");
        for (const auto& [key, value] : entry.items()) {
          if (value.is_string()) metadata_.emplace(key, value.get<std::string>());
        }
        continue;
      }
      Range r{};
      TensorView view = parse_entry(path, name, entry, data, data_size, &r);
      auto it = tensors_.emplace(name, std::move(view)).first;
      r.name = &it->first;
      ranges.push_back(r);
    }
  } catch (const json::exception& e) {
    // Defensive: every access above is type-checked first, but a hostile header must never escape
    // as anything but an Error.
    fail(path, ": malformed header (", e.what(), ")");
  }

  // Overlapping tensors would alias each other's weights; empty ranges occupy no bytes.
  std::erase_if(ranges, [](const Range& r) { return r.begin == r.end; });
  std::sort(ranges.begin(), ranges.end(),
            [](const Range& a, const Range& b) { return a.begin < b.begin; });
  for (size_t i = 1; i < ranges.size(); ++i) {
    const Range& a = ranges[i - 1];
    const Range& b = ranges[i];
    if (b.begin < a.end) {
      fail(path, ": tensors '", *a.name, "' [", a.begin, ", ", a.end, ") and '", *b.name, "' [",
           b.begin, ", ", b.end, ") overlap");
    }
  }
  // Nothing in the format aligns the data section (an unpadded header shifts every tensor), so
  // the shared rule applies: aligned tensors stay in place, the others are copied once. The
  // ranges do not overlap, so all copies together are at most the file's size.
  for (auto& [name, view] : tensors_) {
    view.data =
        copies_.aligned(static_cast<const unsigned char*>(view.data), view.nbytes(), view.dtype);
  }
}

namespace {

// Whether a shard path from an index names a file inside the model folder: relative, non-empty,
// without a '..' component. Judged on the text alone, never by resolving symlinks: a Hugging Face
// cache links every shard to ../../blobs/<hash>, which is fine, while the index is what may lie.
bool stays_inside_folder(const std::string& shard) {
  const fs::path p(shard);
  if (shard.empty() || p.has_root_path()) return false;
  for (const fs::path& part : p) {
    if (part == "..") return false;
  }
  return true;
}

void merge_file(std::map<std::string, TensorView>& into, const SafetensorsFile& file) {
  for (const auto& [name, view] : file.tensors()) {
    auto [it, inserted] = into.emplace(name, view);
    if (!inserted) fail(file.path(), ": tensor '", name, "' is also in ", it->second.file);
  }
}

}  // namespace

TensorStore TensorStore::open_files(const std::vector<std::string>& paths) {
  TensorStore store;
  for (size_t i = 0; i < paths.size(); ++i) {
    if (i) store.where_ += ", ";
    store.where_ += paths[i];
    auto file = std::make_shared<SafetensorsFile>(paths[i]);
    merge_file(store.tensors_, *file);
    store.files_.push_back(std::move(file));
  }
  return store;
}

TensorStore TensorStore::from_views(std::string where, std::map<std::string, TensorView> tensors,
                                    std::vector<std::shared_ptr<const void>> owners) {
  TensorStore store;
  store.where_ = std::move(where);
  store.tensors_ = std::move(tensors);
  store.owners_ = std::move(owners);
  return store;
}

TensorStore TensorStore::open_dir(const std::string& dir) {
  std::error_code ec;
  if (!fs::exists(dir, ec)) fail(dir, ": model directory not found");
  if (!fs::is_directory(dir, ec)) fail(dir, ": not a directory");

  const std::string index_path = (fs::path(dir) / "model.safetensors.index.json").string();
  const std::string single_path = (fs::path(dir) / "model.safetensors").string();
  if (!fs::exists(index_path, ec)) {
    if (!fs::exists(single_path, ec)) {
      fail(dir, ": no model.safetensors or model.safetensors.index.json found");
    }
    TensorStore store = open_files({single_path});
    store.where_ = dir;
    return store;
  }

  // Sharded: every tensor the index names must be in the shard it names; shards are opened once.
  std::map<std::string, std::string> weight_map;
  {
    const std::string text = read_regular_file(index_path, read_limit::kJson, "a JSON index");
    const json index = parse_json(text.data(), text.data() + text.size(), index_path, "index");
    if (!index.is_object()) fail(index_path, ": not a JSON object");
    auto wm = index.find("weight_map");
    if (wm == index.end() || !wm->is_object()) fail(index_path, ": missing \"weight_map\" object");
    if (wm->empty()) fail(index_path, ": \"weight_map\" is empty");
    for (const auto& [name, shard] : wm->items()) {
      if (!shard.is_string()) fail(index_path, ": weight_map entry '", name, "' is not a string");
      const std::string& file = shard.get_ref<const std::string&>();
      if (!stays_inside_folder(file)) {
        fail(index_path, ": weight_map entry '", name, "' names shard '", file,
             "' outside the model folder (absolute paths and '..' are refused)");
      }
      weight_map.emplace(name, file);
    }
  }

  TensorStore store;
  store.where_ = dir;
  std::map<std::string, std::shared_ptr<SafetensorsFile>> shards;
  for (const auto& [name, shard] : weight_map) {
    if (shards.count(shard)) continue;
    const std::string shard_path = (fs::path(dir) / shard).string();
    if (!fs::exists(shard_path, ec)) {
      fail(shard_path, ": shard listed in ", index_path, " not found");
    }
    auto file = std::make_shared<SafetensorsFile>(shard_path);
    merge_file(store.tensors_, *file);
    store.files_.push_back(file);
    shards.emplace(shard, std::move(file));
  }
  for (const auto& [name, shard] : weight_map) {
    if (!shards.at(shard)->tensors().count(name)) {
      fail(index_path, ": tensor '", name, "' is mapped to ", shard,
           " but that shard does not contain it");
    }
  }
  return store;
}

const TensorView& TensorStore::get(const std::string& name) const {
  auto it = tensors_.find(name);
  if (it == tensors_.end()) fail(where_, ": tensor '", name, "' not found");
  return it->second;
}

const TensorView& TensorStore::get(const std::string& name,
                                   const std::vector<int64_t>& shape) const {
  const TensorView& v = get(name);
  if (v.shape != shape) {
    fail(v.file, ": tensor '", name, "' has shape ", shape_string(v.shape), ", expected ",
         shape_string(shape));
  }
  return v;
}

const TensorView& TensorStore::get(const std::string& name, const std::vector<int64_t>& shape,
                                   DType dtype) const {
  const TensorView& v = get(name, shape);
  if (v.dtype != dtype) {
    fail(v.file, ": tensor '", name, "' has dtype ", dtype_name(v.dtype), ", expected ",
         dtype_name(dtype));
  }
  return v;
}

void write_safetensors_streaming(const std::string& path, const std::vector<TensorSpec>& tensors,
                                 const TensorFill& fill,
                                 const std::map<std::string, std::string>& metadata) {
  std::vector<uint64_t> nbytes(tensors.size());
  std::set<std::string> names;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const TensorSpec& t = tensors[i];
    if (t.name == "__metadata__") fail(path, ": '__metadata__' cannot be a tensor name");
    if (!names.insert(t.name).second) fail(path, ": tensor '", t.name, "' is written twice");
    if (is_block_dtype(t.dtype))
      fail(path, ": tensor '", t.name, "' is ", dtype_name(t.dtype),
           ", a block type safetensors has no spelling for");
    uint64_t n = dtype_size(t.dtype);
    for (int64_t d : t.shape) {
      if (d < 0) fail(path, ": tensor '", t.name, "' has negative dimension ", d);
      if (__builtin_mul_overflow(n, static_cast<uint64_t>(d), &n)) {
        fail(path, ": tensor '", t.name, "' shape ", shape_string(t.shape), " is too large");
      }
    }
    nbytes[i] = n;
  }

  // Wider elements first, stable within a width: every tensor starts aligned to its element size
  // because the data section itself starts 8-aligned and all earlier sizes are multiples of it.
  std::vector<size_t> order(tensors.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return dtype_size(tensors[a].dtype) > dtype_size(tensors[b].dtype);
  });
  std::vector<std::pair<uint64_t, uint64_t>> offsets(tensors.size());
  uint64_t pos = 0;
  size_t max_bytes = 0;
  for (size_t i : order) {
    offsets[i] = {pos, pos + nbytes[i]};
    pos += nbytes[i];
    max_bytes = std::max<size_t>(max_bytes, nbytes[i]);
  }

  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  if (!metadata.empty()) {
    auto& m = header["__metadata__"] = nlohmann::ordered_json::object();
    for (const auto& [k, v] : metadata) m[k] = v;
  }
  for (size_t i = 0; i < tensors.size(); ++i) {
    header[tensors[i].name] = {{"dtype", dtype_name(tensors[i].dtype)},
                               {"shape", tensors[i].shape},
                               {"data_offsets", {offsets[i].first, offsets[i].second}}};
  }
  std::string text;
  try {
    text = header.dump();
  } catch (const nlohmann::json::exception& e) {
    fail(path, ": cannot encode the header (", e.what(), ")");
  }
  text.append((8 - text.size() % 8) % 8, ' ');

  AtomicFile out(path);
  unsigned char len_le[8];
  for (int i = 0; i < 8; ++i) len_le[i] = static_cast<unsigned char>(text.size() >> (8 * i));
  out.write(len_le, 8);
  out.write(text.data(), text.size());

  // One reusable buffer, sized for the largest tensor: a model's memory cost while writing is its
  // largest tensor, not the whole model.
  std::unique_ptr<unsigned char[]> buffer(max_bytes ? new unsigned char[max_bytes] : nullptr);
  for (size_t i : order) {
    if (nbytes[i] == 0) continue;
    fill(i, buffer.get());
    out.write(buffer.get(), nbytes[i]);
  }
  out.commit();
}

void write_safetensors(const std::string& path, const std::vector<TensorToWrite>& tensors,
                       const std::map<std::string, std::string>& metadata) {
  std::vector<TensorSpec> specs;
  specs.reserve(tensors.size());
  for (const TensorToWrite& t : tensors) {
    specs.push_back(TensorSpec{t.name, t.dtype, t.shape});
    bool empty = false;
    for (int64_t d : t.shape) empty = empty || d == 0;
    if (t.data == nullptr && !empty) fail(path, ": tensor '", t.name, "' has no data");
  }
  write_safetensors_streaming(
      path, specs,
      [&](size_t i, void* dst) {
        const TensorToWrite& t = tensors[i];
        size_t n = dtype_size(t.dtype);
        for (int64_t d : t.shape) n *= static_cast<size_t>(d);
        std::memcpy(dst, t.data, n);
      },
      metadata);
}

}  // namespace eagle2

// The safetensors reader and writer: round trips, and one crafted file per structural defect with
// the exact one-line message a user sees.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/mapped_file.h"
#include "io/safetensors.h"
#include "support/errors.h"
#include "support/shared_data.h"

namespace eagle2 {
namespace {

using test::error_of;

namespace fs = std::filesystem;

// Rewrites in place and then sets the length: on ext4, opening a non-empty file with O_TRUNC costs
// milliseconds (it flushes), which would dominate the fuzz loop.
void write_bytes(const std::string& path, const std::string& bytes) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  ASSERT_GE(fd, 0) << path;
  ASSERT_EQ(::pwrite(fd, bytes.data(), bytes.size(), 0), static_cast<ssize_t>(bytes.size()));
  ASSERT_EQ(::ftruncate(fd, static_cast<off_t>(bytes.size())), 0);
  ::close(fd);
}

std::string u64_le(uint64_t v) {
  std::string s(8, '\0');
  for (int i = 0; i < 8; ++i) s[i] = static_cast<char>(v >> (8 * i));
  return s;
}

// A file made of an explicit header text and data section.
std::string crafted(const std::string& header, size_t data_bytes) {
  return u64_le(header.size()) + header + std::string(data_bytes, '\x11');
}

// Runs `f` and returns the Error's message; fails the test if nothing or something else is thrown.
class SafetensorsErrors : public ::testing::Test {
 protected:
  std::string dir = test::temp_dir("safetensors_errors");
  std::string path = dir + "/bad.safetensors";

  // The message from opening a file holding `header` and `data_bytes` bytes of data.
  std::string open_error(const std::string& header, size_t data_bytes) {
    write_bytes(path, crafted(header, data_bytes));
    return error_of([&] { SafetensorsFile f(path); });
  }
};

TEST(Safetensors, RoundTripAllDtypes) {
  const std::string dir = test::temp_dir("safetensors_roundtrip");
  const std::string path = dir + "/model.safetensors";
  const std::vector<float> f32 = {1.5f, -2.25f, 3.0f, 0.0f, 1e-8f, -7.0f};
  const std::vector<uint16_t> f16 = {f32_to_f16(1.0f), f32_to_f16(-0.5f), f32_to_f16(65504.0f)};
  const std::vector<uint16_t> bf16 = {f32_to_bf16(3.0f), f32_to_bf16(-1e20f), f32_to_bf16(0.1f),
                                      f32_to_bf16(2.0f), f32_to_bf16(4.0f)};
  const float scalar = 42.0f;
  // Deliberately odd sizes with the 2-byte tensors first: the writer must still align the F32s.
  write_safetensors(path,
                    {{"h", DType::F16, {3}, f16.data()},
                     {"a.weight", DType::F32, {2, 3}, f32.data()},
                     {"b", DType::BF16, {5, 1}, bf16.data()},
                     {"empty", DType::F32, {0, 4}, nullptr},
                     {"scalar", DType::F32, {}, &scalar}},
                    {{"format", "pt"}});

  const std::string bytes = test::read_file(path);
  uint64_t header_len = 0;
  std::memcpy(&header_len, bytes.data(), 8);
  EXPECT_EQ(header_len % 8, 0u);
  EXPECT_EQ(bytes[8 + header_len - 1] == ' ' || bytes[8 + header_len - 1] == '}', true);

  SafetensorsFile f(path);
  ASSERT_EQ(f.tensors().size(), 5u);
  const TensorView& a = f.tensors().at("a.weight");
  EXPECT_EQ(a.dtype, DType::F32);
  EXPECT_EQ(a.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(a.file, path);
  EXPECT_EQ(std::memcmp(a.data, f32.data(), 24), 0);
  const TensorView& h = f.tensors().at("h");
  EXPECT_EQ(h.dtype, DType::F16);
  EXPECT_EQ(h.shape, (std::vector<int64_t>{3}));
  EXPECT_EQ(std::memcmp(h.data, f16.data(), 6), 0);
  const TensorView& b = f.tensors().at("b");
  EXPECT_EQ(b.dtype, DType::BF16);
  EXPECT_EQ(b.shape, (std::vector<int64_t>{5, 1}));
  EXPECT_EQ(std::memcmp(b.data, bf16.data(), 10), 0);
  EXPECT_EQ(f.tensors().at("empty").numel(), 0);
  const TensorView& s = f.tensors().at("scalar");
  EXPECT_TRUE(s.shape.empty());
  EXPECT_EQ(*static_cast<const float*>(s.data), 42.0f);
  for (const auto& [name, v] : f.tensors()) {
    EXPECT_EQ(reinterpret_cast<uintptr_t>(v.data) % dtype_size(v.dtype), 0u) << name;
  }

  // Through the store: a folder with a single model.safetensors.
  TensorStore store = TensorStore::open_dir(dir);
  EXPECT_EQ(store.where(), dir);
  EXPECT_TRUE(store.has("b"));
  EXPECT_FALSE(store.has("c"));
  EXPECT_EQ(store.get("a.weight", {2, 3}, DType::F32).data, store.get("a.weight").data);
  EXPECT_EQ(error_of([&] { store.get("missing"); }), dir + ": tensor 'missing' not found");
  EXPECT_EQ(error_of([&] {
              store.get("a.weight", {3, 2});
            }),
            path + ": tensor 'a.weight' has shape [2, 3], expected [3, 2]");
  EXPECT_EQ(error_of([&] {
              store.get("b", {5, 1}, DType::F16);
            }),
            path + ": tensor 'b' has dtype BF16, expected F16");
}

TEST(Safetensors, StreamingWriterFillsInDataOrder) {
  const std::string path = test::temp_dir("safetensors_stream") + "/s.safetensors";
  std::vector<size_t> calls;
  write_safetensors_streaming(
      path, {{"x", DType::BF16, {3}}, {"y", DType::F32, {2}}, {"z", DType::F16, {0}}},
      [&](size_t i, void* dst) {
        calls.push_back(i);
        if (i == 0) {
          const uint16_t v[3] = {1, 2, 3};
          std::memcpy(dst, v, 6);
        } else {
          const float v[2] = {5.0f, 6.0f};
          std::memcpy(dst, v, 8);
        }
      });
  EXPECT_EQ(calls, (std::vector<size_t>{1, 0}));  // F32 first; the empty tensor needs no call
  SafetensorsFile f(path);
  EXPECT_EQ(static_cast<const float*>(f.tensors().at("y").data)[1], 6.0f);
  EXPECT_EQ(static_cast<const uint16_t*>(f.tensors().at("x").data)[2], 3);
  EXPECT_FALSE(fs::exists(path + ".tmp"));
}

TEST(Safetensors, ShardedRoundTrip) {
  const std::string dir = test::temp_dir("safetensors_sharded");
  const std::vector<float> a = {1, 2, 3, 4};
  const std::vector<uint16_t> b = {f32_to_bf16(5.0f), f32_to_bf16(6.0f)};
  const std::vector<uint16_t> c = {f32_to_f16(7.0f)};
  write_safetensors(
      dir + "/model-00001-of-00002.safetensors",
      {{"layer.a", DType::F32, {2, 2}, a.data()}, {"layer.b", DType::BF16, {2}, b.data()}});
  write_safetensors(dir + "/model-00002-of-00002.safetensors",
                    {{"head.c", DType::F16, {1, 1}, c.data()}});
  write_bytes(dir + "/model.safetensors.index.json", R"({
    "metadata": {"total_size": 22},
    "weight_map": {"layer.a": "model-00001-of-00002.safetensors",
                   "layer.b": "model-00001-of-00002.safetensors",
                   "head.c": "model-00002-of-00002.safetensors"}})");
  TensorStore store = TensorStore::open_dir(dir);
  EXPECT_EQ(store.tensors().size(), 3u);
  EXPECT_EQ(static_cast<const float*>(store.get("layer.a", {2, 2}).data)[3], 4.0f);
  EXPECT_EQ(bf16_to_f32(static_cast<const uint16_t*>(store.get("layer.b", {2}).data)[1]), 6.0f);
  EXPECT_EQ(f16_to_f32(static_cast<const uint16_t*>(store.get("head.c", {1, 1}).data)[0]), 7.0f);
  EXPECT_EQ(store.get("head.c").file, dir + "/model-00002-of-00002.safetensors");
  EXPECT_EQ(error_of([&] { store.get("nope"); }), dir + ": tensor 'nope' not found");

  // A copy of the store keeps the mapped files alive.
  TensorStore copy = store;
  store = TensorStore();
  EXPECT_EQ(static_cast<const float*>(copy.get("layer.a").data)[0], 1.0f);
}

TEST(Safetensors, OpenFilesMergesAndRefusesDuplicates) {
  const std::string dir = test::temp_dir("safetensors_files");
  const float v = 1.0f;
  write_safetensors(dir + "/a.safetensors", {{"x", DType::F32, {1}, &v}});
  write_safetensors(dir + "/b.safetensors", {{"y", DType::F32, {1}, &v}});
  write_safetensors(dir + "/c.safetensors", {{"x", DType::F32, {1}, &v}});
  TensorStore s = TensorStore::open_files({dir + "/a.safetensors", dir + "/b.safetensors"});
  EXPECT_TRUE(s.has("x"));
  EXPECT_TRUE(s.has("y"));
  EXPECT_EQ(s.where(), dir + "/a.safetensors, " + dir + "/b.safetensors");
  EXPECT_EQ(error_of([&] {
              TensorStore::open_files({dir + "/a.safetensors", dir + "/c.safetensors"});
            }),
            dir + "/c.safetensors: tensor 'x' is also in " + dir + "/a.safetensors");
}

TEST(MappedFile, EmptyFileAndErrors) {
  const std::string dir = test::temp_dir("mapped_file");
  write_bytes(dir + "/empty", "");
  MappedFile empty(dir + "/empty");
  EXPECT_EQ(empty.size(), 0u);
  EXPECT_EQ(empty.path(), dir + "/empty");
  write_bytes(dir + "/abc", "abc");
  MappedFile abc(dir + "/abc");
  ASSERT_EQ(abc.size(), 3u);
  EXPECT_EQ(std::memcmp(abc.data(), "abc", 3), 0);
  EXPECT_EQ(error_of([&] { MappedFile m(dir + "/missing"); }),
            dir + "/missing: cannot open: No such file or directory");
  EXPECT_EQ(error_of([&] { MappedFile m(dir); }), dir + ": not a regular file");
}

// The huge-page copy (the default for weights) must hold exactly the file's bytes, including a
// size that is not a whole number of pages, and be as empty as the mapping for an empty file.
TEST(MappedFile, HugePageCopyHoldsTheSameBytes) {
  const std::string dir = test::temp_dir("mapped_file_copy");
  std::string bytes(3 * 4096 + 17, '\0');
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>((i * 131) % 251);
  write_bytes(dir + "/w", bytes);
  MappedFile mapped(dir + "/w", Residency::kMapInPlace),
      copied(dir + "/w", Residency::kHugePageCopy);
  EXPECT_EQ(copied.residency(), Residency::kHugePageCopy);
  ASSERT_EQ(copied.size(), bytes.size());
  EXPECT_EQ(std::memcmp(copied.data(), mapped.data(), bytes.size()), 0);
  write_bytes(dir + "/empty", "");
  EXPECT_EQ(MappedFile(dir + "/empty", Residency::kHugePageCopy).size(), 0u);
  EXPECT_EQ(error_of([&] { MappedFile m(dir + "/missing", Residency::kHugePageCopy); }),
            dir + "/missing: cannot open: No such file or directory");
}

TEST(MappedFile, WeightResidencyFromEnvironment) {
  const char* old = std::getenv("EAGLE2_WEIGHTS");
  const std::string saved = old ? old : "";
  ::unsetenv("EAGLE2_WEIGHTS");
  EXPECT_EQ(weight_residency(), Residency::kHugePageCopy);
  ::setenv("EAGLE2_WEIGHTS", "mmap", 1);
  EXPECT_EQ(weight_residency(), Residency::kMapInPlace);
  ::setenv("EAGLE2_WEIGHTS", "hugepages", 1);
  EXPECT_EQ(weight_residency(), Residency::kHugePageCopy);
  ::setenv("EAGLE2_WEIGHTS", "ram", 1);
  EXPECT_EQ(
      error_of([] { weight_residency(); }),
      "EAGLE2_WEIGHTS=ram: expected 'hugepages' (the default: weights copied into huge pages) "
      "or 'mmap' (used in place)");
  if (old)
    ::setenv("EAGLE2_WEIGHTS", saved.c_str(), 1);
  else
    ::unsetenv("EAGLE2_WEIGHTS");
}

TEST_F(SafetensorsErrors, FileStructure) {
  EXPECT_EQ(error_of([&] { SafetensorsFile f(dir + "/none.safetensors"); }),
            dir + "/none.safetensors: cannot open: No such file or directory");
  write_bytes(path, "");
  EXPECT_EQ(error_of([&] { SafetensorsFile f(path); }),
            path + ": file is 0 bytes, too short for a safetensors header (needs at least 8)");
  write_bytes(path, std::string("\x05\0\0\0\0", 5));
  EXPECT_EQ(error_of([&] { SafetensorsFile f(path); }),
            path + ": file is 5 bytes, too short for a safetensors header (needs at least 8)");
  write_bytes(path, u64_le(1000) + "{}          ");
  EXPECT_EQ(error_of([&] { SafetensorsFile f(path); }),
            path + ": header length 1000 exceeds file size 20");
  write_bytes(path, u64_le(UINT64_MAX) + "{}");
  EXPECT_EQ(error_of([&] { SafetensorsFile f(path); }),
            path + ": header length 18446744073709551615 exceeds file size 10");
  EXPECT_EQ(open_error(R"({"a": })", 0),
            path + ": header is not valid JSON (parse error at byte 7)");
  EXPECT_EQ(open_error("", 0), path + ": header is not valid JSON (parse error at byte 1)");
  EXPECT_EQ(open_error("{\"\xff\": 1}", 0),
            path + ": header is not valid JSON (parse error at byte 3)");
  EXPECT_EQ(open_error("[1, 2]", 0), path + ": header is not a JSON object");
  EXPECT_EQ(open_error(R"({"__metadata__": [1]})", 0),
            path + ": header \"__metadata__\" is not an object");
  // An empty header is a valid file without tensors.
  write_bytes(path, crafted("{}", 0));
  EXPECT_TRUE(SafetensorsFile(path).tensors().empty());
}

TEST_F(SafetensorsErrors, TensorEntries) {
  const std::string t = path + ": tensor 'x': ";
  EXPECT_EQ(open_error(R"({"x": 5})", 0), t + "entry is not an object");
  EXPECT_EQ(open_error(R"({"x": {"shape": [1], "data_offsets": [0, 4]}})", 4),
            t + "missing \"dtype\"");
  EXPECT_EQ(open_error(R"({"x": {"dtype": "F32", "data_offsets": [0, 4]}})", 4),
            t + "missing \"shape\"");
  EXPECT_EQ(open_error(R"({"x": {"dtype": "F32", "shape": [1]}})", 4),
            t + "missing \"data_offsets\"");
  EXPECT_EQ(open_error(R"({"x": {"dtype": 32, "shape": [1], "data_offsets": [0, 4]}})", 4),
            t + "\"dtype\" is not a string");
  EXPECT_EQ(open_error(R"({"x": {"dtype": "I32", "shape": [1], "data_offsets": [0, 4]}})", 4),
            t + "unsupported dtype 'I32' (supported: F32, F16, BF16, and I64 and BOOL for index "
                "tensors)");
  // ggml's block types have no safetensors spelling (and no per-element size).
  EXPECT_EQ(open_error(R"({"x": {"dtype": "Q8_0", "shape": [32], "data_offsets": [0, 64]}})", 64),
            t + "unsupported dtype 'Q8_0' (supported: F32, F16, BF16, and I64 and BOOL for index "
                "tensors)");
  EXPECT_EQ(open_error(R"({"x": {"dtype": "F32", "shape": 1, "data_offsets": [0, 4]}})", 4),
            t + "\"shape\" is not a list of integers");
  EXPECT_EQ(open_error(R"({"x": {"dtype": "F32", "shape": ["1"], "data_offsets": [0, 4]}})", 4),
            t + "\"shape\" is not a list of integers");
  EXPECT_EQ(open_error(R"({"x": {"dtype": "F32", "shape": [1.5], "data_offsets": [0, 4]}})", 4),
            t + "\"shape\" is not a list of integers");
  EXPECT_EQ(open_error(R"({"x": {"dtype": "F32", "shape": [2, -3], "data_offsets": [0, 4]}})", 4),
            t + "negative dimension -3 in shape");
  EXPECT_EQ(
      open_error(
          R"({"x": {"dtype": "F32", "shape": [18446744073709551615], "data_offsets": [0, 4]}})", 4),
      t + "dimension 18446744073709551615 in shape is too large");
  const std::string bad_offsets =
      t + "\"data_offsets\" is not a list [begin, end] of two non-negative integers";
  EXPECT_EQ(open_error(R"({"x": {"dtype": "F32", "shape": [1], "data_offsets": [0]}})", 4),
            bad_offsets);
  EXPECT_EQ(open_error(R"({"x": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4, 8]}})", 8),
            bad_offsets);
  EXPECT_EQ(open_error(R"({"x": {"dtype": "F32", "shape": [1], "data_offsets": [-1, 3]}})", 4),
            bad_offsets);
  EXPECT_EQ(open_error(R"({"x": {"dtype": "F32", "shape": [1], "data_offsets": [0, "4"]}})", 4),
            bad_offsets);
  EXPECT_EQ(open_error(R"({"x": {"dtype": "F32", "shape": [1], "data_offsets": {"b": 0}}})", 4),
            bad_offsets);
  EXPECT_EQ(open_error(R"({"x": {"dtype": "F32", "shape": [1], "data_offsets": [8, 4]}})", 8),
            t + "data_offsets [8, 4) have begin > end");
}

TEST_F(SafetensorsErrors, DataSection) {
  EXPECT_EQ(open_error(R"({"x": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]}})", 20),
            path +
                ": tensor 'x' data [0, 24) extends past the end of the data section (size 20): "
                "file truncated?");
  EXPECT_EQ(
      open_error(
          R"({"x": {"dtype": "F32", "shape": [1], "data_offsets": [18446744073709551611, 18446744073709551615]}})",
          4),
      path +
          ": tensor 'x' data [18446744073709551611, 18446744073709551615) extends past the "
          "end of the data section (size 4): file truncated?");
  EXPECT_EQ(
      open_error(R"({"x": {"dtype": "BF16", "shape": [2, 3], "data_offsets": [0, 24]}})", 24),
      path + ": tensor 'x': data_offsets [0, 24) hold 24 bytes, but shape [2, 3] of BF16 needs 12");
  EXPECT_EQ(
      open_error(
          R"({"x": {"dtype": "F32", "shape": [4294967296, 4294967296, 4], "data_offsets": [0, 4]}})",
          4),
      path + ": tensor 'x': shape [4294967296, 4294967296, 4] is too large");
  EXPECT_EQ(
      open_error(
          R"({"x": {"dtype": "F32", "shape": [4611686018427387904, 4], "data_offsets": [0, 4]}})",
          4),
      path + ": tensor 'x': shape [4611686018427387904, 4] is too large");
  // Zero elements, but a numel() computed in order would overflow before reaching the zero.
  EXPECT_EQ(
      open_error(
          R"({"x": {"dtype": "F32", "shape": [1099511627776, 1099511627776, 0], "data_offsets": [0, 0]}})",
          0),
      path + ": tensor 'x': shape [1099511627776, 1099511627776, 0] is too large");
  EXPECT_EQ(open_error(R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
                           "b": {"dtype": "F16", "shape": [4], "data_offsets": [4, 12]}})",
                       12),
            path + ": tensors 'a' [0, 8) and 'b' [4, 12) overlap");
  // Touching ranges, empty tensors anywhere and unused bytes are all fine.
  write_bytes(path, crafted(R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
                                "b": {"dtype": "F16", "shape": [0, 9], "data_offsets": [4, 4]},
                                "c": {"dtype": "F16", "shape": [2], "data_offsets": [8, 12]}})",
                            16));
  EXPECT_EQ(SafetensorsFile(path).tensors().size(), 3u);
}

TEST_F(SafetensorsErrors, HostileJson) {
  // Deep nesting must not overflow the stack (the parser and the destructor are iterative).
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  EXPECT_EQ(
      open_error(R"({"x": {"dtype": "F32", "shape": )" + deep + R"(, "data_offsets": [0, 4]}})", 4),
      path + ": tensor 'x': \"shape\" is not a list of integers");
  EXPECT_EQ(open_error(std::string(100000, '['), 0),
            path + ": header is not valid JSON (parse error at byte 100001)");
}

TEST_F(SafetensorsErrors, Sharded) {
  const std::string missing = dir + "/no_such_dir";
  EXPECT_EQ(error_of([&] { TensorStore::open_dir(missing); }),
            missing + ": model directory not found");
  write_bytes(dir + "/plain_file", "x");
  EXPECT_EQ(error_of([&] { TensorStore::open_dir(dir + "/plain_file"); }),
            dir + "/plain_file: not a directory");
  const std::string m = dir + "/model";
  fs::create_directories(m);
  EXPECT_EQ(error_of([&] { TensorStore::open_dir(m); }),
            m + ": no model.safetensors or model.safetensors.index.json found");

  const std::string index = m + "/model.safetensors.index.json";
  auto index_error = [&](const std::string& text) {
    write_bytes(index, text);
    return error_of([&] { TensorStore::open_dir(m); });
  };
  EXPECT_EQ(index_error(R"({"weight_map": {"a": "s1.safetensors",})"),
            index + ": index is not valid JSON (parse error at byte 39)");
  EXPECT_EQ(index_error("[]"), index + ": not a JSON object");
  EXPECT_EQ(index_error(R"({"metadata": {}})"), index + ": missing \"weight_map\" object");
  EXPECT_EQ(index_error(R"({"weight_map": ["a"]})"), index + ": missing \"weight_map\" object");
  EXPECT_EQ(index_error(R"({"weight_map": {}})"), index + ": \"weight_map\" is empty");
  EXPECT_EQ(index_error(R"({"weight_map": {"a": 1}})"),
            index + ": weight_map entry 'a' is not a string");
  EXPECT_EQ(index_error(R"({"weight_map": {"a": "s1.safetensors"}})"),
            m + "/s1.safetensors: shard listed in " + index + " not found");

  const float v = 1.0f;
  write_safetensors(m + "/s1.safetensors", {{"a", DType::F32, {1}, &v}});
  EXPECT_EQ(index_error(R"({"weight_map": {"a": "s1.safetensors", "b": "s1.safetensors"}})"),
            index + ": tensor 'b' is mapped to s1.safetensors but that shard does not contain it");
  write_bytes(m + "/s2.safetensors", "\x01");
  EXPECT_EQ(index_error(R"({"weight_map": {"a": "s1.safetensors", "b": "s2.safetensors"}})"),
            m + "/s2.safetensors: file is 1 bytes, too short for a safetensors header (needs at "
                "least 8)");
  write_safetensors(m + "/s2.safetensors", {{"a", DType::F32, {1}, &v}});
  EXPECT_EQ(index_error(R"({"weight_map": {"a": "s1.safetensors", "b": "s2.safetensors"}})"),
            m + "/s2.safetensors: tensor 'a' is also in " + m + "/s1.safetensors");
  write_bytes(index, R"({"weight_map": {"a": "s1.safetensors"}})");
  EXPECT_TRUE(TensorStore::open_dir(m).has("a"));
}

TEST_F(SafetensorsErrors, Writer) {
  const float v = 1.0f;
  EXPECT_EQ(error_of([&] {
              write_safetensors(path, {{"a", DType::F32, {1}, &v}, {"a", DType::F32, {1}, &v}});
            }),
            path + ": tensor 'a' is written twice");
  EXPECT_EQ(error_of([&] {
              write_safetensors(path, {{"__metadata__", DType::F32, {1}, &v}});
            }),
            path + ": '__metadata__' cannot be a tensor name");
  EXPECT_EQ(error_of([&] {
              write_safetensors(path, {{"a", DType::F32, {2, -1}, &v}});
            }),
            path + ": tensor 'a' has negative dimension -1");
  EXPECT_EQ(error_of([&] {
              write_safetensors(path, {{"a", DType::F32, {1}, nullptr}});
            }),
            path + ": tensor 'a' has no data");
  EXPECT_EQ(error_of([&] {
              write_safetensors(path, {{"\xff", DType::F32, {1}, &v}});
            }).substr(0, path.size() + 28),
            path + ": cannot encode the header (");
  const std::string nodir = dir + "/no/such/dir/x.safetensors";
  EXPECT_EQ(error_of([&] {
              write_safetensors(nodir, {{"a", DType::F32, {1}, &v}});
            }),
            nodir + ".tmp: cannot create: No such file or directory");
  // A failing fill leaves neither the file nor the temporary behind.
  const std::string p2 = dir + "/partial.safetensors";
  EXPECT_EQ(error_of([&] {
              write_safetensors_streaming(p2, {{"a", DType::F32, {1}}},
                                          [](size_t, void*) { fail("fill failed"); });
            }),
            "fill failed");
  EXPECT_FALSE(fs::exists(p2));
  EXPECT_FALSE(fs::exists(p2 + ".tmp"));
}

// Reads every byte of every tensor, so that a view pointing outside the mapping is caught by
// AddressSanitizer (or crashes) here rather than in a kernel.
uint64_t touch_all(const SafetensorsFile& f) {
  uint64_t sum = 0;
  for (const auto& [name, v] : f.tensors()) {
    const auto* p = static_cast<const unsigned char*>(v.data);
    for (size_t i = 0; i < v.nbytes(); ++i) sum += p[i];
  }
  return sum;
}

TEST(SafetensorsFuzz, TruncationsAndCorruptHeadersOnlyThrowError) {
  const std::string dir = test::temp_dir("safetensors_fuzz");
  const std::string good = dir + "/good.safetensors";
  const std::vector<float> a(12, 0.5f);
  const std::vector<uint16_t> b(7, 0x3c00);
  write_safetensors(good,
                    {{"model.a", DType::F32, {3, 4}, a.data()},
                     {"model.b", DType::F16, {7}, b.data()},
                     {"model.c", DType::BF16, {2, 0}, nullptr}},
                    {{"format", "pt"}});
  const std::string bytes = test::read_file(good);
  const std::string path = dir + "/fuzz.safetensors";

  // Every proper prefix is missing data, so every one must be refused.
  for (size_t len = 0; len < bytes.size(); ++len) {
    write_bytes(path, bytes.substr(0, len));
    try {
      SafetensorsFile f(path);
      ADD_FAILURE() << "a file truncated to " << len << " bytes loaded";
    } catch (const Error&) {
    }
  }

  uint64_t header_len = 0;
  std::memcpy(&header_len, bytes.data(), 8);
  std::mt19937_64 rng(12345);
  int loaded = 0, refused = 0;
  const int iterations = test::scaled(20000);
  for (int it = 0; it < iterations; ++it) {
    std::string m = bytes;
    const int flips = 1 + static_cast<int>(rng() % 3);
    for (int k = 0; k < flips; ++k) {
      // Mostly the JSON, sometimes the length prefix.
      const size_t pos = rng() % 8 == 0 ? rng() % 8 : 8 + rng() % header_len;
      if (m[pos] >= '0' && m[pos] <= '9' && rng() % 2 == 0) {
        // Digit for digit keeps the JSON valid, reaching the shape and offset checks.
        m[pos] = static_cast<char>('0' + rng() % 10);
      } else {
        m[pos] = static_cast<char>(m[pos] ^ (1 + rng() % 255));
      }
    }
    write_bytes(path, m);
    try {
      SafetensorsFile f(path);
      touch_all(f);
      ++loaded;
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()).rfind(path + ": ", 0), 0u) << e.what();
      ++refused;
    }
  }
  EXPECT_GT(refused, 0);
  EXPECT_EQ(loaded + refused, iterations);
}

TEST(Safetensors, RealStories260K) {
  EAGLE2_SHARED_FILE(path, "data/models/stories260K-hf/model.safetensors");
  SafetensorsFile f(path);
  EXPECT_EQ(f.tensors().size(), 48u);  // 5 layers * 9 + embed + norm + lm_head
  TensorStore s = TensorStore::open_dir(fs::path(path).parent_path().string());
  EXPECT_EQ(s.get("model.embed_tokens.weight", {512, 64}, DType::F32).file, path);
  s.get("lm_head.weight", {512, 64}, DType::F32);
  s.get("model.norm.weight", {64}, DType::F32);
  s.get("model.layers.0.self_attn.q_proj.weight", {64, 64}, DType::F32);
  s.get("model.layers.4.self_attn.k_proj.weight", {32, 64}, DType::F32);
  s.get("model.layers.2.mlp.down_proj.weight", {64, 172}, DType::F32);
  s.get("model.layers.3.mlp.gate_proj.weight", {172, 64}, DType::F32);
  const TensorView& norm = s.get("model.layers.0.input_layernorm.weight", {64});
  const float* w = static_cast<const float*>(norm.data);
  for (int i = 0; i < 64; ++i) EXPECT_TRUE(std::isfinite(w[i]));
  EXPECT_EQ(
      error_of([&] {
        s.get("model.layers.0.mlp.up_proj.weight", {64, 172});
      }),
      path +
          ": tensor 'model.layers.0.mlp.up_proj.weight' has shape [172, 64], expected [64, 172]");
}

}  // namespace
}  // namespace eagle2

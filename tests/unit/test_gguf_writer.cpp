// The GGUF writer (io/gguf_writer.h) through the project's reader (io/gguf.h): every value type,
// scalar and string arrays, nested arrays copied from a read file, tensor infos and data placed
// at the alignment; what the reader would refuse is refused before writing; a failed write leaves
// no file.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>

#include "io/gguf.h"
#include "io/gguf_writer.h"
#include "support/errors.h"
#include "support/shared_data.h"

namespace eagle2 {
namespace {

// Every scalar type at an extreme of its range, a string with a NUL and UTF-8, and arrays.
void add_every_type(GgufWriter& w) {
  w.add_u8("t.u8", 255);
  w.add_i8("t.i8", -128);
  w.add_u16("t.u16", 65535);
  w.add_i16("t.i16", -32768);
  w.add_u32("t.u32", 4294967295u);
  w.add_i32("t.i32", -2147483647 - 1);
  w.add_u64("t.u64", 18446744073709551615ull);
  w.add_i64("t.i64", -9223372036854775807ll - 1);
  w.add_f32("t.f32", -1.5e-7f);
  w.add_f64("t.f64", 3.141592653589793);
  w.add_bool("t.bool", true);
  w.add_string("t.string", std::string("a\0b \xE2\x96\x81", 7));
  w.add_string("t.empty", "");
  w.add_f32_array("t.f32s", {0.5f, -2.0f, 1e30f});
  w.add_i32_array("t.i32s", {-1, 0, 2147483647});
  w.add_string_array("t.strings", {"<unk>", "", "\xE2\x96\x81the"});
  const uint16_t u16s[] = {1, 65535};
  w.add_raw_array("t.u16s", GgufType::kUint16, u16s, 2);
  const unsigned char bools[] = {0, 1, 1};
  w.add_raw_array("t.bools", GgufType::kBool, bools, 3);
  w.add_i32_array("t.none", {});
}

std::string write(
    const GgufWriter& w, const std::string& name,
    const GgufWriter::Fill& fill = [](size_t, unsigned char*) {}) {
  // A folder per file: temp_dir empties the folder it returns.
  const std::string path = test::temp_dir("gguf-writer-" + name) + "/m.gguf";
  w.write(path, fill);
  return path;
}

TEST(GgufWriter, EveryValueTypeReadsBack) {
  GgufWriter w;
  add_every_type(w);
  const GgufFile g(write(w, "types"));
  EXPECT_EQ(g.version(), 3u);
  EXPECT_EQ(g.metadata().size(), 19u);
  EXPECT_EQ(g.find("t.u8")->as_int("k"), 255);
  EXPECT_EQ(g.find("t.i8")->as_int("k"), -128);
  EXPECT_EQ(g.find("t.u16")->as_int("k"), 65535);
  EXPECT_EQ(g.find("t.i16")->as_int("k"), -32768);
  EXPECT_EQ(g.find("t.u32")->as_int("k"), 4294967295ll);
  EXPECT_EQ(g.find("t.i32")->as_int("k"), -2147483648ll);
  EXPECT_EQ(g.find("t.u64")->type, GgufType::kUint64);
  EXPECT_EQ(g.find("t.u64")->bits, 18446744073709551615ull);
  EXPECT_EQ(g.find("t.i64")->as_int("k"), -9223372036854775807ll - 1);
  EXPECT_EQ(g.find("t.f32")->as_float("k"), -1.5e-7f);
  EXPECT_EQ(g.find("t.f64")->as_float("k"), 3.141592653589793);
  EXPECT_TRUE(g.boolean_or("t.bool", false));
  EXPECT_EQ(g.string("t.string"), std::string_view("a\0b \xE2\x96\x81", 7));
  EXPECT_EQ(g.string("t.empty"), "");
  const GgufValue* f = g.array("t.f32s", GgufType::kFloat32, true);
  ASSERT_EQ(f->count, 3u);
  EXPECT_EQ(gguf_f32_at(*f, 0), 0.5f);
  EXPECT_EQ(gguf_f32_at(*f, 2), 1e30f);
  const GgufValue* i = g.array("t.i32s", GgufType::kInt32, true);
  EXPECT_EQ(gguf_i32_at(*i, 0), -1);
  EXPECT_EQ(gguf_i32_at(*i, 2), 2147483647);
  const GgufValue* s = g.array("t.strings", GgufType::kString, true);
  ASSERT_EQ(s->strings.size(), 3u);
  EXPECT_EQ(s->strings[0], "<unk>");
  EXPECT_EQ(s->strings[1], "");
  EXPECT_EQ(s->strings[2], "\xE2\x96\x81the");
  const GgufValue* u = g.array("t.u16s", GgufType::kUint16, true);
  EXPECT_EQ(u->raw[2] | (u->raw[3] << 8), 65535);
  EXPECT_EQ(g.array("t.bools", GgufType::kBool, true)->raw[1], 1);
  EXPECT_EQ(g.array("t.none", GgufType::kInt32, true)->count, 0u);
  // The keys come back in the order they were added.
  EXPECT_EQ(g.metadata().front().key, "t.u8");
  EXPECT_EQ(g.metadata().back().key, "t.none");
}

// add_value copies what the reader read, nested arrays included, byte for byte: a copy of a copy
// is the same file.
TEST(GgufWriter, CopiedMetadataIsTheSameBytes) {
  GgufWriter w;
  add_every_type(w);
  const std::string first = write(w, "first");
  const GgufFile g(first);
  // A nested array (an array of arrays of int32) exists only as a read value: build one by
  // copying the flat one into a two-level value.
  GgufValue nested;
  nested.type = GgufType::kArray;
  nested.element_type = GgufType::kArray;
  nested.count = 2;
  nested.arrays = {*g.find("t.i32s"), *g.find("t.i32s")};
  GgufWriter copy;
  for (const GgufKv& kv : g.metadata()) copy.add_value(kv.key, kv.value);
  const std::string second = write(copy, "second");
  EXPECT_EQ(test::read_file(first), test::read_file(second));

  GgufWriter with_nested;
  with_nested.add_value("t.nested", nested);
  const GgufFile n(write(with_nested, "nested"));
  const GgufValue* v = n.find("t.nested");
  ASSERT_EQ(v->arrays.size(), 2u);
  EXPECT_EQ(gguf_i32_at(v->arrays[1], 2), 2147483647);
}

// Tensor infos as ggml writes them, data at the alignment (32 by default, general.alignment
// otherwise), each tensor's bytes exactly what fill wrote, padding zero.
TEST(GgufWriter, TensorDataIsPlacedAtTheAlignment) {
  for (const uint64_t alignment : {uint64_t{32}, uint64_t{64}, uint64_t{1}}) {
    GgufWriter w(alignment);
    w.add_string("general.architecture", "llama");
    EXPECT_EQ(w.add_tensor("a", {3}, 0), 0u);                  // F32, 12 bytes
    EXPECT_EQ(w.add_tensor("b", {32, 2}, 8), 1u);              // Q8_0, 2 blocks of 34
    EXPECT_EQ(w.add_tensor("c.weight", {4, 1, 1, 2}, 1), 2u);  // F16, 16 bytes
    EXPECT_EQ(w.tensor_bytes(1), 68u);
    const std::string path =
        write(w, "tensors-" + std::to_string(alignment), [&](size_t i, unsigned char* dst) {
          EXPECT_EQ(reinterpret_cast<uintptr_t>(dst) % 64, 0u);
          std::memset(dst, static_cast<int>(0x10 + i), w.tensor_bytes(i));
        });
    const GgufFile g(path);
    EXPECT_EQ(g.alignment(), alignment);
    EXPECT_EQ(g.data_offset() % alignment, 0u);
    ASSERT_EQ(g.tensors().size(), 3u);
    const std::vector<int64_t> dims_c = {4, 1, 1, 2};
    EXPECT_EQ(g.tensors()[2].dims, dims_c);
    EXPECT_EQ(g.tensors()[1].type, 8u);
    uint64_t expected_offset = 0;
    for (size_t i = 0; i < 3; ++i) {
      const GgufTensorInfo& t = g.tensors()[i];
      EXPECT_EQ(t.offset, expected_offset);
      EXPECT_EQ(t.offset % alignment, 0u);
      const unsigned char* d = g.tensor_data(t);
      for (uint64_t b = 0; b < t.bytes; ++b) ASSERT_EQ(d[b], 0x10 + i) << t.name;
      expected_offset = (t.offset + t.bytes + alignment - 1) / alignment * alignment;
    }
    // The padding between tensors is zeros.
    if (alignment == 32) {
      EXPECT_EQ(g.tensor_data(g.tensors()[0])[12], 0);
    }
    // As ggml does, the last tensor is padded too.
    EXPECT_EQ(
        std::filesystem::file_size(path),
        g.data_offset() + (g.tensors()[2].offset + 16 + alignment - 1) / alignment * alignment);
  }
}

TEST(GgufWriter, WhatTheReaderRefusesIsRefusedHere) {
  GgufWriter w;
  w.add_u32("k", 1);
  EXPECT_EQ(test::error_of([&] { w.add_u32("k", 2); }),
            "GGUF writer: metadata key 'k' added twice");
  EXPECT_EQ(test::error_of([&] { w.add_string("", "x"); }), "GGUF writer: empty metadata key");
  EXPECT_EQ(test::error_of([&] { GgufWriter bad(48); }),
            "GGUF writer: alignment 48 is not a power of two below 2^32");
  EXPECT_EQ(test::error_of([&] { w.add_tensor(std::string(64, 'x'), {1}, 0); }),
            "GGUF writer: tensor '" + std::string(64, 'x') + "' name must be 1 to 63 bytes");
  w.add_tensor("t", {32}, 0);
  EXPECT_EQ(test::error_of([&] { w.add_tensor("t", {32}, 0); }),
            "GGUF writer: tensor 't' added twice");
  EXPECT_EQ(test::error_of([&] {
              w.add_tensor("u", {1, 1, 1, 1, 1}, 0);
            }),
            "GGUF writer: tensor 'u' has 5 dimensions (1 to 4 allowed)");
  EXPECT_EQ(
      test::error_of([&] {
        w.add_tensor("v", {48, 2}, 2);
      }),
      "GGUF writer: tensor 'v' row of 48 elements is not a whole number of Q4_0 blocks of 32");
  EXPECT_EQ(test::error_of([&] { w.add_tensor("w", {1}, 4); }),
            "GGUF writer: tensor 'w' has unknown ggml type 4");
  EXPECT_EQ(test::error_of([&] {
              w.add_tensor("x", {int64_t{1} << 40, int64_t{1} << 40}, 0);
            }),
            "GGUF writer: tensor 'x' element count overflows 64 bits");
  const unsigned char two = 2;
  EXPECT_EQ(test::error_of([&] { w.add_raw_array("b", GgufType::kBool, &two, 1); }),
            "GGUF writer: b[0] is a bool holding 2");
  EXPECT_EQ(test::error_of([&] { w.add_raw_array("s", GgufType::kString, nullptr, 0); }),
            "GGUF writer: s: an array of string is not an array of scalars");
}

// A fill that throws (a tensor that cannot be quantized, a full disk) leaves neither the file nor
// its temporary behind.
TEST(GgufWriter, AFailedWriteLeavesNoFile) {
  GgufWriter w;
  w.add_tensor("a", {8}, 0);
  w.add_tensor("b", {8}, 0);
  const std::string path = test::temp_dir("gguf-writer-fail") + "/m.gguf";
  EXPECT_EQ(test::error_of([&] {
              w.write(path, [](size_t i, unsigned char* dst) {
                if (i == 1) fail("tensor b: no");
                std::memset(dst, 0, 32);
              });
            }),
            "tensor b: no");
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
  EXPECT_EQ(test::error_of([&] { w.write(path + ".d/none/m.gguf", {}); }),
            path + ".d/none/m.gguf.tmp: cannot create: No such file or directory");
}

}  // namespace
}  // namespace eagle2

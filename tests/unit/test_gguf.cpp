// The GGUF reader: the shared model and vocabulary files parse (header, metadata, tensor infos),
// every metadata type reads back, and hostile files end in one clean Error naming the fault.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <functional>
#include <random>
#include <set>

#include "core/error.h"
#include "io/gguf.h"
#include "support/errors.h"
#include "support/gguf_writer.h"
#include "support/shared_data.h"

namespace eagle2 {
namespace {

namespace fs = std::filesystem;

std::string write_temp(const std::string& name, const std::string& bytes) {
  static const std::string dir = test::temp_dir("gguf");
  const std::string path = dir + "/" + name;
  test::write_file(path, bytes);
  return path;
}

TEST(Gguf, SharedModelFilesParse) {
  EAGLE2_SHARED_FILE(stories_path, "data/gguf/stories260K-f32.gguf");
  const GgufFile stories(stories_path);
  EXPECT_EQ(stories.version(), 3u);
  EXPECT_EQ(stories.string("general.architecture"), "llama");
  EXPECT_EQ(stories.integer_or("llama.block_count", 0), 5);
  ASSERT_EQ(stories.tensors().size(), 48u);
  EXPECT_EQ(stories.tensors()[0].name, "output.weight");
  EXPECT_EQ(stories.tensors()[0].dims, (std::vector<int64_t>{64, 512}));
  EXPECT_EQ(stories.tensors()[1].offset, 131072u);
  EXPECT_EQ(stories.alignment(), 32u);
  EXPECT_EQ(stories.data_offset() % 32, 0u);

  // Every quantization of code-lm: the tensor types differ, the layout rules hold for all.
  std::set<uint32_t> types;
  for (const char* q : {"bf16", "q4_0", "q4_k_m", "q8_0"}) {
    EAGLE2_SHARED_FILE(path, std::string("data/gguf/code-lm-") + q + ".gguf");
    const GgufFile f(path);
    EXPECT_EQ(f.string("tokenizer.ggml.model"), "llama") << q;
    ASSERT_FALSE(f.tensors().empty());
    const GgufTensorInfo& last = f.tensors().back();
    EXPECT_LE(f.data_offset() + last.offset + last.bytes, fs::file_size(path)) << q;
    for (const auto& t : f.tensors()) types.insert(t.type);
  }
  // F32, Q4_0, Q8_0, Q4_K, Q6_K and BF16 all appear.
  for (uint32_t t : {0u, 2u, 8u, 12u, 14u, 30u}) EXPECT_TRUE(types.count(t)) << ggml_type_name(t);

  EAGLE2_SHARED_FILE(q4k, "data/gguf/code-lm-q4_k_m.gguf");
  const GgufFile f(q4k);
  for (const auto& t : f.tensors()) {
    if (t.name == "token_embd.weight") {
      EXPECT_EQ(t.type, 14u);  // Q6_K: 256 elements in 210 bytes
      EXPECT_EQ(t.bytes, 512u * 4096 / 256 * 210);
    }
  }
}

TEST(Gguf, SharedVocabularyFilesParse) {
  for (const char* name : {"llama-spm", "phi-3", "gpt-2", "starcoder", "deepseek-coder"}) {
    EAGLE2_SHARED_FILE(path, std::string("data/gguf_vocab/ggml-vocab-") + name + ".gguf");
    const GgufFile f(path);
    EXPECT_TRUE(f.tensors().empty()) << name;
    const GgufValue* tokens = f.array("tokenizer.ggml.tokens", GgufType::kString, true);
    EXPECT_GT(tokens->strings.size(), 30000u) << name;
  }
}

TEST(Gguf, EveryMetadataTypeReadsBack) {
  test::GgufWriter w(2);  // version 2 has the same layout as 3
  const std::vector<std::pair<uint32_t, uint64_t>> ints = {
      {0, 0xAB},       {1, 0x80},       {2, 0xBEEF},      {3, 0x8001},
      {4, 0xDEADBEEF}, {5, 0x80000000}, {10, ~0ull >> 1}, {11, ~0ull}};
  for (const auto& [type, bits] : ints) {
    w.key("int" + std::to_string(type), type);
    static const int size[] = {1, 1, 2, 2, 4, 4, 0, 0, 0, 0, 8, 8};
    for (int b = 0; b < size[type]; ++b) w.u8(static_cast<uint8_t>(bits >> (8 * b)));
  }
  w.key("f32", 6);
  w.f32(1.5f);
  w.key("f64", 12);
  const double d = -2.25;
  uint64_t dbits;
  std::memcpy(&dbits, &d, 8);
  w.u64(dbits);
  w.kv_bool("yes", true);
  w.kv_string("name", "h\xC3\xA9llo");
  w.kv_strings("list", {"a", "", "ccc"});
  w.kv_f32s("floats", {0.5f, -1.0f});
  w.kv_i32s("ints", {-7, 9});
  w.key("nested", 9);  // [[1, 2], []] as arrays of uint16
  w.u32(9);
  w.u64(2);
  w.u32(2);
  w.u64(2);
  w.u8(1), w.u8(0), w.u8(2), w.u8(0);
  w.u32(2);
  w.u64(0);
  w.tensor("t", {32, 2}, 8, 2 * 34);  // Q8_0: two blocks
  const GgufFile f(write_temp("types.gguf", w.bytes()));

  EXPECT_EQ(f.version(), 2u);
  EXPECT_EQ(f.find("int0")->as_int("int0"), 0xAB);
  EXPECT_EQ(f.find("int1")->as_int("int1"), -128);
  EXPECT_EQ(f.find("int2")->as_int("int2"), 0xBEEF);
  EXPECT_EQ(f.find("int3")->as_int("int3"), -32767);
  EXPECT_EQ(f.find("int4")->as_int("int4"), 0xDEADBEEF);
  EXPECT_EQ(f.find("int5")->as_int("int5"), INT32_MIN);
  EXPECT_EQ(f.find("int10")->as_int("int10"), INT64_MAX);
  EXPECT_EQ(f.find("int11")->as_int("int11"), -1);
  EXPECT_EQ(f.find("f32")->as_float("f32"), 1.5);
  EXPECT_EQ(f.find("f64")->as_float("f64"), -2.25);
  EXPECT_TRUE(f.boolean_or("yes", false));
  EXPECT_FALSE(f.boolean_or("absent", false));
  EXPECT_EQ(f.string("name"), "h\xC3\xA9llo");
  EXPECT_EQ(f.array("list", GgufType::kString, true)->strings,
            (std::vector<std::string_view>{"a", "", "ccc"}));
  const GgufValue* floats = f.array("floats", GgufType::kFloat32, true);
  EXPECT_EQ(gguf_f32_at(*floats, 1), -1.0f);
  EXPECT_EQ(gguf_i32_at(*f.array("ints", GgufType::kInt32, true), 0), -7);
  const GgufValue* nested = f.array("nested", GgufType::kArray, true);
  ASSERT_EQ(nested->arrays.size(), 2u);
  EXPECT_EQ(nested->arrays[0].count, 2u);
  EXPECT_EQ(nested->arrays[0].element_type, GgufType::kUint16);
  EXPECT_EQ(nested->arrays[1].count, 0u);
  ASSERT_EQ(f.tensors().size(), 1u);
  EXPECT_EQ(f.tensors()[0].bytes, 68u);

  EXPECT_EQ(test::error_of([&] { f.string("f32"); }),
            f.path() + ": GGUF: f32 is float32, expected string");
  EXPECT_EQ(test::error_of([&] { f.array("list", GgufType::kInt32, true); }),
            f.path() + ": GGUF: list is an array of string, expected an array of int32");
  EXPECT_EQ(test::error_of([&] { f.string("missing"); }), f.path() + ": GGUF: no missing");
}

// The Error for `bytes` written to a file, minus the "<path>: GGUF: " prefix.
std::string fault(const std::string& bytes) {
  const std::string path = write_temp("fault.gguf", bytes);
  const std::string msg = test::error_of([&] { GgufFile f(path); });
  const std::string prefix = path + ": GGUF: ";
  EXPECT_EQ(msg.rfind(prefix, 0), 0u) << msg;
  return msg.substr(std::min(msg.size(), prefix.size()));
}

std::string header(uint32_t version, uint64_t n_tensors, uint64_t n_kv) {
  std::string h = "GGUF";
  h.append(reinterpret_cast<const char*>(&version), 4);
  h.append(reinterpret_cast<const char*>(&n_tensors), 8);
  h.append(reinterpret_cast<const char*>(&n_kv), 8);
  return h;
}

TEST(Gguf, HostileHeadersGiveOneClearError) {
  EXPECT_EQ(fault("GGML" + header(3, 0, 0).substr(4)), "not a GGUF file (no GGUF magic)");
  EXPECT_EQ(fault("GG"), "truncated: the magic needs 4 bytes at offset 0, 2 left");
  EXPECT_EQ(fault(header(1, 0, 0)), "version 1 is not supported (2 and 3 are)");
  EXPECT_EQ(fault(header(0x03000000, 0, 0)), "big-endian files are not supported");
  EXPECT_EQ(fault(header(3, 0, 0).substr(0, 12)),
            "truncated: the tensor count needs 8 bytes at offset 8, 4 left");
  EXPECT_EQ(fault(header(3, 0, uint64_t{1} << 60)),
            "metadata count 1152921504606846976 cannot fit in the 0 bytes left");
  EXPECT_EQ(fault(header(3, ~0ull, 0)),
            "tensor count 18446744073709551615 cannot fit in the 0 bytes left");

  auto one_kv = [](const std::function<void(test::GgufWriter&)>& add, uint64_t n_tensors = 0) {
    test::GgufWriter w;
    add(w);
    std::string b = w.bytes();
    std::memcpy(&b[8], &n_tensors, 8);
    return b;
  };
  std::string absurd = one_kv([](test::GgufWriter& w) { w.kv_string("k", "v"); });
  const uint64_t huge = uint64_t{1} << 62;
  std::memcpy(&absurd[24 + 8 + 1 + 4], &huge, 8);  // the value string's length
  EXPECT_EQ(fault(absurd), "truncated: k needs 4611686018427387904 bytes at offset 45, 1 left");
  EXPECT_EQ(fault(one_kv([](test::GgufWriter& w) {
              w.key("k", 13);
              w.u8(0);
            })),
            "k has unknown value type 13");
  EXPECT_EQ(fault(one_kv([](test::GgufWriter& w) {
              w.key("", 4);
              w.u32(1);
            })),
            "metadata #0 has an empty key");
  EXPECT_EQ(fault(one_kv([](test::GgufWriter& w) {
              w.kv_u32("k", 1);
              w.kv_u32("k", 2);
            })),
            "metadata key 'k' appears twice");
  EXPECT_EQ(fault(one_kv([](test::GgufWriter& w) {
              w.key("b", 7);
              w.u8(2);
            })),
            "b is a bool holding 2");
  EXPECT_EQ(fault(one_kv([](test::GgufWriter& w) {
              w.key("a", 9);
              w.u32(4);
              w.u64(~0ull / 2);
            })),
            "a count 9223372036854775807 cannot fit in the 0 bytes left");
  EXPECT_EQ(fault(one_kv([](test::GgufWriter& w) {
              w.key("deep", 9);
              for (int i = 0; i < 9; ++i) w.u32(9), w.u64(1);
              w.u32(0), w.u64(0);
            })),
            "deep[0][0][0][0][0][0][0][0] nests arrays deeper than 8");
  EXPECT_EQ(fault(one_kv([](test::GgufWriter& w) { w.kv_u32("general.alignment", 24); })),
            "general.alignment 24 is not a power of two");
  EXPECT_EQ(fault(one_kv([](test::GgufWriter& w) { w.kv_string("general.alignment", "x"); })),
            "general.alignment is string, expected uint32");

  auto tensors = [](const std::function<void(test::GgufWriter&)>& add) {
    test::GgufWriter w;
    add(w);
    return w.bytes();
  };
  EXPECT_EQ(fault(tensors([](test::GgufWriter& w) { w.tensor("t", {}, 0, 0); })),
            "tensor 't' has 0 dimensions (1 to 4 allowed)");
  EXPECT_EQ(fault(tensors([](test::GgufWriter& w) {
              w.tensor("t", {1, 1, 1, 1, 1}, 0, 4);
            })),
            "tensor 't' has 5 dimensions (1 to 4 allowed)");
  EXPECT_EQ(fault(tensors([](test::GgufWriter& w) { w.tensor("t", {4}, 4, 16); })),
            "tensor 't' has ggml type 4, which this reader does not know");
  EXPECT_EQ(fault(tensors([](test::GgufWriter& w) { w.tensor("t", {33}, 2, 18); })),
            "tensor 't' row of 33 elements is not a whole number of Q4_0 blocks of 32");
  // The same size check for every block type, the ones eagle2 now runs included.
  EXPECT_EQ(fault(tensors([](test::GgufWriter& w) {
              w.tensor("t", {128, 2}, 13, 176);
            })),
            "tensor 't' row of 128 elements is not a whole number of Q5_K blocks of 256");
  EXPECT_EQ(fault(tensors([](test::GgufWriter& w) { w.tensor("t", {48}, 20, 36); })),
            "tensor 't' row of 48 elements is not a whole number of IQ4_NL blocks of 32");
  EXPECT_EQ(fault(tensors([](test::GgufWriter& w) {
              w.tensor("t", {1ull << 32, 1ull << 32}, 0, 0);
            })),
            "tensor 't' element count overflows 64 bits");
  EXPECT_EQ(fault(tensors([](test::GgufWriter& w) {
              w.tensor("t", {1ull << 40, 1ull << 23}, 0, 0);
            })),
            "tensor 't' has more than 2^63 elements");
  EXPECT_EQ(fault(tensors([](test::GgufWriter& w) {
              w.tensor("t", {1ull << 31, 1ull << 31}, 28, 0);
            })),
            "tensor 't' size overflows 64 bits");
  EXPECT_EQ(fault(tensors([](test::GgufWriter& w) {
              w.tensor("t", {4}, 0, 16);
              w.tensor("t", {4}, 0, 16);
            })),
            "tensor 't' appears twice");
  EXPECT_EQ(fault(tensors([](test::GgufWriter& w) { w.tensor(std::string(64, 'n'), {4}, 0, 16); })),
            "tensor #0 name is 64 bytes long, more than the 63 allowed");
  // Data past the end of the file: a tensor info claiming more bytes than the writer wrote.
  EXPECT_EQ(fault(tensors([](test::GgufWriter& w) {
              w.tensor("t", {1024}, 0, 16);
            })).rfind("tensor 't' data ends at byte ", 0),
            0u);
  // Offsets out of order: the second tensor claims the first one's place.
  std::string swapped = tensors([](test::GgufWriter& w) {
    w.tensor("a", {8}, 0, 32);
    w.tensor("b", {8}, 0, 32);
  });
  const size_t at = swapped.rfind('b') + 1 + 4 + 8 + 4;  // name, n_dims, dim, type
  std::memset(&swapped[at], 0, 8);
  EXPECT_EQ(fault(swapped), "tensor 'b' has data offset 0, expected 32");
}

// Seeded mutants of a valid file (bytes changed, or cut short) each either parse or end in one
// eagle2::Error: never a crash, a hang, another exception, or (under ASan) a bad read.
TEST(Gguf, MutatedFilesFailCleanly) {
  test::GgufWriter w;
  w.kv_string("general.architecture", "llama");
  w.kv_u32("general.alignment", 32);
  w.kv_strings("tokenizer.ggml.tokens", {"<unk>", "a", "b"});
  w.kv_f32s("tokenizer.ggml.scores", {0, -1, -2});
  w.tensor("w", {32, 2}, 8, 68);
  w.tensor("n", {8}, 0, 32);
  const std::string good = w.bytes();
  std::mt19937 gen(11);
  int parsed = 0, refused = 0;
  for (int i = 0; i < 300; ++i) {
    std::string bad = good;
    if (i % 3 == 0) {
      bad.resize(gen() % good.size());
    } else {
      const int flips = 1 + static_cast<int>(gen() % 4);
      for (int k = 0; k < flips; ++k) {
        // Mostly the header and metadata, where the counts and lengths live.
        bad[gen() % std::min<size_t>(bad.size(), 400)] = static_cast<char>(gen());
      }
    }
    const std::string path = write_temp("mutant.gguf", bad);
    try {
      GgufFile f(path);
      ++parsed;
    } catch (const Error& e) {
      ++refused;
      EXPECT_EQ(std::string(e.what()).rfind(path + ": ", 0), 0u) << e.what();
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(parsed + refused, 300);
  EXPECT_GT(refused, 100);
}

}  // namespace
}  // namespace eagle2

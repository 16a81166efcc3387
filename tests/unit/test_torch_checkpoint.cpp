// The torch.save checkpoint reader: the real PyTorch-written head against its safetensors twin,
// crafted archives (a tiny stored-zip writer and hand-assembled pickles) for every defect with the
// exact one-line message, and fuzzing that may only ever produce eagle2::Error.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "core/error.h"
#include "io/safetensors.h"
#include "io/torch_checkpoint.h"
#include "support/errors.h"
#include "support/shared_data.h"

namespace eagle2 {
namespace {

// ---------------------------------------------------------------------------------------------
// Byte helpers

std::string le(uint64_t v, int n) {
  std::string s(static_cast<size_t>(n), '\0');
  for (int i = 0; i < n; ++i) s[static_cast<size_t>(i)] = static_cast<char>(v >> (8 * i));
  return s;
}

uint64_t get_le(const std::string& s, size_t at, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i)
    v = (v << 8) | static_cast<unsigned char>(s[at + static_cast<size_t>(i)]);
  return v;
}

std::string f32_bytes(const std::vector<float>& v) {
  std::string s(v.size() * 4, '\0');
  std::memcpy(s.data(), v.data(), s.size());
  return s;
}

std::string u16_bytes(const std::vector<uint16_t>& v) {
  std::string s(v.size() * 2, '\0');
  std::memcpy(s.data(), v.data(), s.size());
  return s;
}

std::vector<float> f32_of(const TensorView& t) {
  std::vector<float> v(static_cast<size_t>(t.numel()));
  std::memcpy(v.data(), t.data, v.size() * 4);
  return v;
}

// Rewrites in place, then sets the length: cheaper than O_TRUNC in the fuzz loops.
void write_bytes(const std::string& path, const std::string& bytes) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  ASSERT_GE(fd, 0) << path;
  ASSERT_EQ(::pwrite(fd, bytes.data(), bytes.size(), 0), static_cast<ssize_t>(bytes.size()));
  ASSERT_EQ(::ftruncate(fd, static_cast<off_t>(bytes.size())), 0);
  ::close(fd);
}

// The Error's message; a test failure if nothing, or something other than Error, is thrown.
std::string error_of(const std::string& path) {
  return test::error_of([&] { TorchCheckpoint ckpt(path); });
}

// Loads or throws Error; anything else (another exception type) is a failure. Crashes and hangs
// are what the sanitizer build and the test timeout catch.
void load_or_error(const std::string& path, const std::string& what) {
  try {
    TorchCheckpoint ckpt(path);
    for (const auto& [name, t] : ckpt.tensors()) {
      // Touch every byte so that a view outside the mapping shows up under ASan.
      volatile unsigned char sink = 0;
      const auto* p = static_cast<const unsigned char*>(t.data);
      for (size_t i = 0; i < t.nbytes(); ++i) sink = sink ^ p[i];
      (void)sink;
    }
  } catch (const Error&) {
  } catch (const std::exception& e) {
    ADD_FAILURE() << what << ": threw a non-Error exception: " << e.what();
  }
}

// ---------------------------------------------------------------------------------------------
// A minimal zip writer: stored entries only, like torch.save, optionally in zip64 form.

struct ZipItem {
  std::string name;
  std::string data;
  uint16_t method = 0;
  uint16_t flags = 0;
};

struct ZipOptions {
  bool zip64 = false;  // saturate the 32-bit fields and put the real values in zip64 records
  size_t align = 64;   // pad the local extra field so data starts at a multiple (1: no padding)
  size_t phase = 0;    // ... plus this many bytes, to misalign on purpose
};

std::string make_zip(const std::vector<ZipItem>& items, const ZipOptions& opt = {}) {
  std::string out, central;
  for (const ZipItem& it : items) {
    const uint64_t lho = out.size();
    std::string extra;
    if (opt.align > 1) {
      const size_t before = lho + 30 + it.name.size() + 4;
      const size_t pad = (opt.align + opt.phase - before % opt.align) % opt.align;
      extra = "FB" + le(pad, 2) + std::string(pad, 'Z');
    }
    out += le(0x04034b50, 4) + le(opt.zip64 ? 45 : 20, 2) + le(it.flags, 2) + le(it.method, 2) +
           le(0, 4) /* time, date */ + le(0, 4) /* crc: not checked by the reader */ +
           le(it.data.size(), 4) + le(it.data.size(), 4) + le(it.name.size(), 2) +
           le(extra.size(), 2) + it.name + extra + it.data;

    std::string cextra;
    uint64_t small_size = it.data.size(), small_lho = lho;
    if (opt.zip64) {
      cextra = le(1, 2) + le(24, 2) + le(it.data.size(), 8) + le(it.data.size(), 8) + le(lho, 8);
      small_size = 0xffffffffu;
      small_lho = 0xffffffffu;
    }
    central += le(0x02014b50, 4) + le(opt.zip64 ? 45 : 20, 2) + le(opt.zip64 ? 45 : 20, 2) +
               le(it.flags, 2) + le(it.method, 2) + le(0, 4) + le(0, 4) + le(small_size, 4) +
               le(small_size, 4) + le(it.name.size(), 2) + le(cextra.size(), 2) + le(0, 2) +
               le(0, 2) + le(0, 2) + le(0, 4) + le(small_lho, 4) + it.name + cextra;
  }
  const uint64_t cd_offset = out.size();
  out += central;
  const uint64_t n = items.size();
  if (opt.zip64) {
    const uint64_t rec = out.size();
    out += le(0x06064b50, 4) + le(44, 8) + le(45, 2) + le(45, 2) + le(0, 4) + le(0, 4) + le(n, 8) +
           le(n, 8) + le(central.size(), 8) + le(cd_offset, 8);
    out += le(0x07064b50, 4) + le(0, 4) + le(rec, 8) + le(1, 4);
    out += le(0x06054b50, 4) + le(0, 2) + le(0, 2) + le(0xffff, 2) + le(0xffff, 2) +
           le(0xffffffffu, 4) + le(0xffffffffu, 4) + le(0, 2);
  } else {
    out += le(0x06054b50, 4) + le(0, 2) + le(0, 2) + le(n, 2) + le(n, 2) + le(central.size(), 4) +
           le(cd_offset, 4) + le(0, 2);
  }
  return out;
}

// Reads back the entries of a plain (non-zip64) archive such as the real test file; trusted input.
std::vector<ZipItem> read_zip_items(const std::string& zip) {
  const size_t eocd = zip.rfind(std::string("PK\x05\x06", 4));
  const uint64_t count = get_le(zip, eocd + 10, 2);
  size_t pos = get_le(zip, eocd + 16, 4);
  std::vector<ZipItem> items;
  for (uint64_t i = 0; i < count; ++i) {
    const size_t name_len = get_le(zip, pos + 28, 2);
    const size_t size = get_le(zip, pos + 24, 4);
    const size_t lho = get_le(zip, pos + 42, 4);
    ZipItem it;
    it.name = zip.substr(pos + 46, name_len);
    const size_t start = lho + 30 + get_le(zip, lho + 26, 2) + get_le(zip, lho + 28, 2);
    it.data = zip.substr(start, size);
    items.push_back(it);
    pos += 46 + name_len + get_le(zip, pos + 30, 2) + get_le(zip, pos + 32, 2);
  }
  return items;
}

// ---------------------------------------------------------------------------------------------
// Hand-assembled pickles (protocol 2, the opcodes torch.save emits)

struct Pickle {
  std::string b = "\x80\x02";

  Pickle& raw(const std::string& s) {
    b += s;
    return *this;
  }
  Pickle& op(unsigned char c) {
    b += static_cast<char>(c);
    return *this;
  }
  Pickle& str(const std::string& s) { return op('X').raw(le(s.size(), 4) + s); }
  Pickle& integer(int64_t v) {
    if (v >= 0 && v < 256) return op('K').raw(le(static_cast<uint64_t>(v), 1));
    if (v >= 0 && v < 65536) return op('M').raw(le(static_cast<uint64_t>(v), 2));
    return op(0x8a).raw(le(8, 1) + le(static_cast<uint64_t>(v), 8));  // LONG1, 8 bytes
  }
  Pickle& global(const std::string& module, const std::string& name) {
    return op('c').raw(module + "\n" + name + "\n");
  }
  Pickle& ints(const std::vector<int64_t>& v) {
    op('(');
    for (int64_t x : v) integer(x);
    return op('t');
  }
  Pickle& stop() { return op('.'); }
};

struct Spec {
  std::string key;
  std::string storage_type = "FloatStorage";
  std::string storage_key = "0";
  int64_t numel = 6;
  int64_t offset = 0;
  std::vector<int64_t> shape{2, 3};
  std::vector<int64_t> stride{3, 1};
  bool as_parameter = false;  // wrap in torch._utils._rebuild_parameter
};

// Pushes one rebuilt tensor, as torch.save writes it.
void push_tensor(Pickle& p, const Spec& s) {
  if (s.as_parameter) p.global("torch._utils", "_rebuild_parameter").op('(');
  p.global("torch._utils", "_rebuild_tensor_v2").op('(');
  p.op('(').str("storage").global("torch", s.storage_type).str(s.storage_key).str("cpu");
  p.integer(s.numel).op('t').op('Q');
  p.integer(s.offset).ints(s.shape).ints(s.stride).op(0x89);
  p.global("collections", "OrderedDict").op(')').op('R');
  p.op('t').op('R');
  if (s.as_parameter)
    p.op(0x89).global("collections", "OrderedDict").op(')').op('R').op('t').op('R');
}

std::string state_dict_pickle(const std::vector<Spec>& specs) {
  Pickle p;
  p.op('}').op('(');
  for (const Spec& s : specs) {
    p.str(s.key);
    push_tensor(p, s);
  }
  return p.op('u').stop().b;
}

// An archive holding `pkl` as data.pkl plus the given storages.
std::string checkpoint(const std::string& pkl,
                       const std::vector<std::pair<std::string, std::string>>& storages,
                       const ZipOptions& opt = {}) {
  std::vector<ZipItem> items{{"archive/data.pkl", pkl}, {"archive/byteorder", "little"}};
  for (const auto& [key, bytes] : storages) items.push_back({"archive/data/" + key, bytes});
  items.push_back({"archive/version", "3\n"});
  return make_zip(items, opt);
}

const std::vector<float> kSix{0, 1, 2, 3, 4, 5};

class TorchCheckpointTest : public ::testing::Test {
 protected:
  void SetUp() override { path_ = test::temp_dir("torch_checkpoint") + "/model.bin"; }
  // Writes the archive and returns the Error message of loading it.
  std::string error_for(const std::string& bytes) {
    write_bytes(path_, bytes);
    return error_of(path_);
  }
  std::string path_;
};

// ---------------------------------------------------------------------------------------------
// The real file

TEST(TorchCheckpointReal, MatchesSafetensorsTwin) {
  EAGLE2_SHARED_FILE(bin, "data/models/stories260K-eagle-head/pytorch_model.bin");
  EAGLE2_SHARED_FILE(st, "data/models/stories260K-eagle-head/model.safetensors");
  TorchCheckpoint ckpt(bin);
  SafetensorsFile twin(st);
  EXPECT_EQ(ckpt.path(), bin);

  const std::map<std::string, std::vector<int64_t>> expected{
      {"embed_tokens.weight", {512, 64}},
      {"fc.weight", {64, 128}},
      {"fc.bias", {64}},
      {"layers.0.self_attn.q_proj.weight", {64, 64}},
      {"layers.0.self_attn.k_proj.weight", {32, 64}},
      {"layers.0.self_attn.v_proj.weight", {32, 64}},
      {"layers.0.self_attn.o_proj.weight", {64, 64}},
      {"layers.0.mlp.gate_proj.weight", {172, 64}},
      {"layers.0.mlp.up_proj.weight", {172, 64}},
      {"layers.0.mlp.down_proj.weight", {64, 172}},
      {"layers.0.post_attention_layernorm.weight", {64}},
  };
  ASSERT_EQ(ckpt.tensors().size(), expected.size());
  ASSERT_EQ(twin.tensors().size(), expected.size());
  for (const auto& [name, shape] : expected) {
    SCOPED_TRACE(name);
    ASSERT_EQ(ckpt.tensors().count(name), 1u);
    ASSERT_EQ(twin.tensors().count(name), 1u);
    const TensorView& a = ckpt.tensors().at(name);
    const TensorView& b = twin.tensors().at(name);
    EXPECT_EQ(a.name, name);
    EXPECT_EQ(a.file, bin);
    EXPECT_EQ(a.shape, shape);
    EXPECT_EQ(a.shape, b.shape);
    EXPECT_EQ(a.dtype, b.dtype);
    ASSERT_EQ(a.nbytes(), b.nbytes());
    EXPECT_EQ(std::memcmp(a.data, b.data, a.nbytes()), 0);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(a.data) % dtype_size(a.dtype), 0u);
  }
}

TEST(TorchCheckpointReal, ViewsSurviveAMove) {
  EAGLE2_SHARED_FILE(bin, "data/models/stories260K-eagle-head/pytorch_model.bin");
  TorchCheckpoint a(bin);
  const std::vector<float> before = f32_of(a.tensors().at("fc.bias"));
  TorchCheckpoint b(std::move(a));
  EXPECT_EQ(f32_of(b.tensors().at("fc.bias")), before);
}

// ---------------------------------------------------------------------------------------------
// Crafted archives that load

TEST_F(TorchCheckpointTest, ContiguousTensorIsAViewWithTheRightValues) {
  write_bytes(path_, checkpoint(state_dict_pickle({{.key = "w"}}), {{"0", f32_bytes(kSix)}}));
  TorchCheckpoint ckpt(path_);
  ASSERT_EQ(ckpt.tensors().size(), 1u);
  const TensorView& w = ckpt.tensors().at("w");
  EXPECT_EQ(w.dtype, DType::F32);
  EXPECT_EQ(w.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(f32_of(w), kSix);
}

TEST_F(TorchCheckpointTest, Zip64ArchiveLoads) {
  ZipOptions opt;
  opt.zip64 = true;
  write_bytes(path_, checkpoint(state_dict_pickle({{.key = "w"}}), {{"0", f32_bytes(kSix)}}, opt));
  TorchCheckpoint ckpt(path_);
  EXPECT_EQ(f32_of(ckpt.tensors().at("w")), kSix);
}

TEST_F(TorchCheckpointTest, MisalignedStorageIsCopiedAligned) {
  ZipOptions opt;
  opt.phase = 1;
  const std::string bytes =
      checkpoint(state_dict_pickle({{.key = "w"}}), {{"0", f32_bytes(kSix)}}, opt);
  ASSERT_NE(bytes.find(f32_bytes(kSix)) % 4, 0u);
  write_bytes(path_, bytes);
  TorchCheckpoint ckpt(path_);
  const TensorView& w = ckpt.tensors().at("w");
  EXPECT_EQ(reinterpret_cast<uintptr_t>(w.data) % 4, 0u);
  EXPECT_EQ(f32_of(w), kSix);
}

TEST_F(TorchCheckpointTest, TransposedTensorIsCopiedContiguous) {
  // A 2x3 storage read as its 3x2 transpose.
  write_bytes(path_,
              checkpoint(state_dict_pickle({{.key = "t", .shape = {3, 2}, .stride = {1, 3}}}),
                         {{"0", f32_bytes(kSix)}}));
  TorchCheckpoint ckpt(path_);
  const TensorView& t = ckpt.tensors().at("t");
  EXPECT_EQ(t.shape, (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(f32_of(t), (std::vector<float>{0, 3, 1, 4, 2, 5}));
}

TEST_F(TorchCheckpointTest, SlicesAndSharedStorage) {
  // Two views of one storage: a column (offset 1, stride 3) and a contiguous row (offset 3).
  write_bytes(
      path_,
      checkpoint(state_dict_pickle({{.key = "col", .offset = 1, .shape = {2}, .stride = {3}},
                                    {.key = "row", .offset = 3, .shape = {3}, .stride = {1}}}),
                 {{"0", f32_bytes(kSix)}}));
  TorchCheckpoint ckpt(path_);
  EXPECT_EQ(f32_of(ckpt.tensors().at("col")), (std::vector<float>{1, 4}));
  EXPECT_EQ(f32_of(ckpt.tensors().at("row")), (std::vector<float>{3, 4, 5}));
}

TEST_F(TorchCheckpointTest, SizeOneDimensionsIgnoreTheirStride) {
  // Any stride is legal on a size-1 dimension: [1, 6] with a huge first stride is still a view,
  // and a transposed [3, 1, 2] with a huge middle stride copies without overflowing.
  const int64_t huge = int64_t{1} << 62;
  write_bytes(
      path_,
      checkpoint(state_dict_pickle({{.key = "a", .shape = {1, 6}, .stride = {huge, 1}},
                                    {.key = "b", .shape = {3, 1, 2}, .stride = {1, huge, 3}}}),
                 {{"0", f32_bytes(kSix)}}));
  TorchCheckpoint ckpt(path_);
  EXPECT_EQ(f32_of(ckpt.tensors().at("a")), kSix);
  EXPECT_EQ(f32_of(ckpt.tensors().at("b")), (std::vector<float>{0, 3, 1, 4, 2, 5}));
}

TEST_F(TorchCheckpointTest, HalfAndBFloat16Storages) {
  const std::vector<uint16_t> h{f32_to_f16(1.5f), f32_to_f16(-2.0f), f32_to_f16(0.25f), 0x7c00};
  const std::vector<uint16_t> bf{f32_to_bf16(3.0f), f32_to_bf16(-0.5f), f32_to_bf16(1e10f), 0};
  write_bytes(path_, checkpoint(state_dict_pickle({{.key = "h",
                                                    .storage_type = "HalfStorage",
                                                    .storage_key = "0",
                                                    .numel = 4,
                                                    .shape = {2, 2},
                                                    .stride = {2, 1}},
                                                   {.key = "bt",
                                                    .storage_type = "BFloat16Storage",
                                                    .storage_key = "1",
                                                    .numel = 4,
                                                    .shape = {2, 2},
                                                    .stride = {1, 2}}}),
                                {{"0", u16_bytes(h)}, {"1", u16_bytes(bf)}}));
  TorchCheckpoint ckpt(path_);
  const TensorView& th = ckpt.tensors().at("h");
  const TensorView& tb = ckpt.tensors().at("bt");
  EXPECT_EQ(th.dtype, DType::F16);
  EXPECT_EQ(tb.dtype, DType::BF16);
  EXPECT_EQ(std::memcmp(th.data, h.data(), 8), 0);
  const std::vector<uint16_t> bf_t{bf[0], bf[2], bf[1], bf[3]};  // transposed
  EXPECT_EQ(std::memcmp(tb.data, bf_t.data(), 8), 0);
}

TEST_F(TorchCheckpointTest, ParametersOrderedDictAndMetadataState) {
  // model.state_dict() is an OrderedDict whose `_metadata` attribute is pickled as BUILD state;
  // parameters saved directly go through _rebuild_parameter.
  Pickle p;
  p.global("collections", "OrderedDict").op(')').op('R').op('q').raw(le(0, 1));
  p.op('(').str("w");
  push_tensor(p, {.key = "w", .as_parameter = true});
  p.op('u');
  p.op('}').str("_metadata").global("collections", "OrderedDict").op(')').op('R');
  p.str("").op('}').str("version").integer(1).op('s').op('s').op('s').op('b');
  p.stop();
  write_bytes(path_, checkpoint(p.b, {{"0", f32_bytes(kSix)}}));
  TorchCheckpoint ckpt(path_);
  ASSERT_EQ(ckpt.tensors().size(), 1u);
  EXPECT_EQ(f32_of(ckpt.tensors().at("w")), kSix);
}

TEST_F(TorchCheckpointTest, EmptyStateDict) {
  write_bytes(path_, checkpoint(Pickle().op('}').stop().b, {}));
  EXPECT_TRUE(TorchCheckpoint(path_).tensors().empty());
}

// ---------------------------------------------------------------------------------------------
// Zip defects

TEST_F(TorchCheckpointTest, NotAZip) {
  EXPECT_EQ(error_for(std::string(100, 'x')),
            path_ + ": not a zip archive (no end of central directory record)");
  EXPECT_EQ(error_for(""),
            path_ + ": not a zip archive (0 bytes, no end of central directory record)");
  // A whole archive cut before its end record.
  const std::string good = checkpoint(state_dict_pickle({{.key = "w"}}), {{"0", f32_bytes(kSix)}});
  EXPECT_EQ(error_for(good.substr(0, good.size() - 1)),
            path_ + ": not a zip archive (no end of central directory record)");
}

TEST_F(TorchCheckpointTest, CompressedEntry) {
  EXPECT_EQ(error_for(make_zip({{"archive/data.pkl", "x", 8, 0}})),
            path_ +
                ": zip entry 'archive/data.pkl' is compressed (method 8); only stored entries are "
                "supported");
}

TEST_F(TorchCheckpointTest, EncryptedEntry) {
  EXPECT_EQ(
      error_for(make_zip({{"archive/data.pkl", "x", 0, 1}})),
      path_ + ": zip entry 'archive/data.pkl' is encrypted; encrypted entries are not supported");
}

TEST_F(TorchCheckpointTest, EntryPastTheEnd) {
  std::string z = make_zip({{"archive/data.pkl", "abc"}});
  const size_t cd = z.rfind(std::string("PK\x01\x02", 4));
  z.replace(cd + 20, 8, le(1000, 4) + le(1000, 4));  // sizes
  EXPECT_EQ(error_for(z), path_ +
                              ": zip entry 'archive/data.pkl' (1000 bytes at offset 64) runs past "
                              "the end of the file (" +
                              std::to_string(z.size()) + " bytes)");
  z = make_zip({{"archive/data.pkl", "abc"}});
  z.replace(cd + 42, 4, le(0x7fffffff, 4));  // local header offset
  EXPECT_EQ(error_for(z),
            path_ + ": zip entry 'archive/data.pkl' has no local header at offset 2147483647");
}

TEST_F(TorchCheckpointTest, CentralDirectoryOutsideTheFile) {
  std::string z = make_zip({{"archive/data.pkl", "abc"}});
  z.replace(z.size() - 6, 4, le(0xfffffff0u, 4));  // EOCD central directory offset
  EXPECT_EQ(error_for(z).rfind(path_ + ": zip central directory (", 0), 0u);
}

TEST_F(TorchCheckpointTest, Zip64RecordsAreChecked) {
  ZipOptions opt;
  opt.zip64 = true;
  const std::string z = make_zip({{"archive/data.pkl", "."}}, opt);
  const size_t locator = z.size() - 22 - 20;
  std::string bad = z;
  bad.replace(locator, 4, "PK\x99\x99");  // no locator, yet the end record is saturated
  EXPECT_EQ(error_for(bad), path_ +
                                ": zip end of central directory record needs zip64, but there is "
                                "no zip64 locator");
  bad = z;
  bad.replace(locator + 8, 8, le(1u << 30, 8));
  EXPECT_EQ(error_for(bad), path_ +
                                ": zip64 end of central directory record (offset 1073741824) lies "
                                "outside the file");
  bad = z;
  bad.replace(z.rfind(std::string("PK\x01\x02", 4)) + 30, 2, le(0, 2));  // drop the extra field
  EXPECT_EQ(error_for(bad),
            path_ + ": zip entry 'archive/data.pkl' needs a zip64 extra field but has none");
}

TEST_F(TorchCheckpointTest, MissingDataPkl) {
  EXPECT_EQ(error_for(make_zip({{"archive/version", "3\n"}, {"archive/data/0", "abcd"}})),
            path_ + ": zip archive has no entry 'archive/data.pkl'; not a torch.save checkpoint");
  EXPECT_EQ(
      error_for(make_zip({{"data.pkl", "."}})),
      path_ +
          ": zip entry 'data.pkl' is not inside an archive folder; not a torch.save checkpoint");
  EXPECT_EQ(error_for(make_zip({})), path_ + ": zip archive is empty; not a torch.save checkpoint");
}

TEST_F(TorchCheckpointTest, ArchivePrefixComesFromTheFirstEntry) {
  write_bytes(path_, make_zip({{"my_model/data.pkl", state_dict_pickle({{.key = "w"}})},
                               {"my_model/data/0", f32_bytes(kSix)}}));
  EXPECT_EQ(f32_of(TorchCheckpoint(path_).tensors().at("w")), kSix);
}

TEST_F(TorchCheckpointTest, BigEndianByteorder) {
  EXPECT_EQ(error_for(make_zip(
                {{"archive/data.pkl", Pickle().op('}').stop().b}, {"archive/byteorder", "big"}})),
            path_ + ": byteorder is 'big'; only little-endian checkpoints are supported");
}

TEST_F(TorchCheckpointTest, DuplicateEntries) {
  EXPECT_EQ(error_for(make_zip({{"archive/data.pkl", "."}, {"archive/data.pkl", "."}})),
            path_ + ": zip archive has two entries named 'archive/data.pkl'");
}

// ---------------------------------------------------------------------------------------------
// Pickle defects

TEST_F(TorchCheckpointTest, UnsupportedOpcodes) {
  EXPECT_EQ(error_for(checkpoint(Pickle().op('}').op('0').stop().b, {})),
            path_ + ": unsupported pickle opcode 0x30 ('POP') at byte 3");
  EXPECT_EQ(error_for(checkpoint(Pickle().op(0x93).stop().b, {})),
            path_ + ": unsupported pickle opcode 0x93 ('STACK_GLOBAL') at byte 2");
  EXPECT_EQ(error_for(checkpoint(Pickle().op(0xff).stop().b, {})),
            path_ + ": unsupported pickle opcode 0xff at byte 2");
  EXPECT_EQ(error_for(checkpoint("\x80\x01}.", {})),
            path_ + ": data.pkl: PROTO at byte 0: unsupported pickle protocol 1");
}

TEST_F(TorchCheckpointTest, DisallowedGlobals) {
  EXPECT_EQ(error_for(checkpoint(Pickle().global("os", "system").stop().b, {})),
            path_ + ": pickle global 'os.system' is not allowed");
  EXPECT_EQ(
      error_for(checkpoint(state_dict_pickle({{.key = "ids", .storage_type = "LongStorage"}}), {})),
      path_ +
          ": pickle global 'torch.LongStorage' is not allowed (only float32, float16 and bfloat16 "
          "tensors are supported)");
  EXPECT_EQ(
      error_for(checkpoint(Pickle().global("torch", "FloatStorage").op(')').op('R').stop().b, {})),
      path_ + ": data.pkl: REDUCE at byte 23: pickle global 'torch.FloatStorage' cannot be called");
  // Control bytes from the file are escaped so the message stays one line.
  EXPECT_EQ(error_for(checkpoint(Pickle().global("os\x01", "system").stop().b, {})),
            path_ + ": pickle global 'os\\x01.system' is not allowed");
}

TEST_F(TorchCheckpointTest, StorageProblems) {
  const std::string pkl =
      state_dict_pickle({{.key = "w", .numel = 10, .shape = {2, 5}, .stride = {5, 1}}});
  EXPECT_EQ(error_for(checkpoint(pkl, {{"0", f32_bytes(kSix)}})),
            path_ +
                ": truncated storage: zip entry 'archive/data/0' holds 24 bytes, the pickle "
                "declares 10 elements of 4 bytes");
  EXPECT_EQ(error_for(checkpoint(pkl, {{"1", f32_bytes(kSix)}})),
            path_ + ": storage '0' has no zip entry 'archive/data/0'");
  EXPECT_EQ(error_for(checkpoint(state_dict_pickle({{.key = "w", .numel = -1}}),
                                 {{"0", f32_bytes(kSix)}})),
            path_ +
                ": truncated storage: zip entry 'archive/data/0' holds 24 bytes, the pickle "
                "declares -1 elements of 4 bytes");
}

TEST_F(TorchCheckpointTest, ViewOutsideItsStorage) {
  const std::string six = f32_bytes(kSix);
  EXPECT_EQ(error_for(checkpoint(state_dict_pickle({{.key = "w", .offset = 1}}), {{"0", six}})),
            path_ +
                ": tensor 'w' (storage offset 1, shape [2, 3], stride [3, 1]) reaches element 6 of "
                "storage '0', "
                "which holds 6 elements");
  EXPECT_EQ(error_for(checkpoint(state_dict_pickle({{.key = "w", .shape = {3, 3}}}), {{"0", six}})),
            path_ +
                ": tensor 'w' (storage offset 0, shape [3, 3], stride [3, 1]) reaches element 8 of "
                "storage '0', "
                "which holds 6 elements");
  EXPECT_EQ(
      error_for(checkpoint(state_dict_pickle({{.key = "w", .shape = {2, 3}, .stride = {1, 4}}}),
                           {{"0", six}})),
      path_ +
          ": tensor 'w' (storage offset 0, shape [2, 3], stride [1, 4]) reaches element 9 of "
          "storage '0', "
          "which holds 6 elements");
  EXPECT_EQ(error_for(checkpoint(state_dict_pickle({{.key = "w", .offset = -1}}), {{"0", six}})),
            path_ +
                ": tensor 'w' has a negative storage offset (storage offset -1, shape [2, 3], "
                "stride [3, 1])");
  EXPECT_EQ(
      error_for(checkpoint(state_dict_pickle({{.key = "w", .shape = {2, -3}}}), {{"0", six}})),
      path_ +
          ": tensor 'w' has a negative size or stride (storage offset 0, shape [2, -3], stride [3, "
          "1])");
  const int64_t big = int64_t{1} << 40;
  EXPECT_EQ(
      error_for(checkpoint(state_dict_pickle({{.key = "w", .shape = {big, big}, .stride = {0, 0}}}),
                           {{"0", six}})),
      path_ +
          ": tensor 'w' is too large (storage offset 0, shape [1099511627776, 1099511627776], "
          "stride [0, 0])");
  // A stride-0 broadcast of one element would need a huge copy from a tiny file.
  EXPECT_EQ(error_for(checkpoint(
                state_dict_pickle({{.key = "w", .shape = {int64_t{1} << 30}, .stride = {0}}}),
                {{"0", six}})),
            path_ +
                ": tensor 'w' (storage offset 0, shape [1073741824], stride [0]) needs a copy of "
                "4294967296 bytes, "
                "more than the whole file holds; refusing");
}

TEST_F(TorchCheckpointTest, WrongTopLevelShapes) {
  EXPECT_EQ(error_for(checkpoint(Pickle().op(']').stop().b, {})),
            path_ + ": data.pkl holds a list, expected a dict of name -> tensor");
  EXPECT_EQ(error_for(checkpoint(Pickle().op('}').str("a").integer(1).op('s').stop().b, {})),
            path_ + ": state dict entry 'a' is a int, expected a tensor");
  EXPECT_EQ(error_for(checkpoint(Pickle().op('}').integer(1).integer(1).op('s').stop().b, {})),
            path_ + ": state dict has a key that is a int, expected a str");
  EXPECT_EQ(error_for(checkpoint(state_dict_pickle({{.key = "w"}, {.key = "w"}}),
                                 {{"0", f32_bytes(kSix)}})),
            path_ + ": state dict has two entries named 'w'");
}

TEST_F(TorchCheckpointTest, MalformedPickles) {
  EXPECT_EQ(error_for(checkpoint(Pickle().op('}').op('X').raw(le(16, 4) + "ab").b, {})),
            path_ + ": data.pkl is truncated (BINUNICODE at byte 3 needs 16 more bytes)");
  EXPECT_EQ(error_for(checkpoint(Pickle().op('}').b, {})),
            path_ + ": data.pkl ends at byte 3 without a STOP opcode");
  EXPECT_EQ(error_for(checkpoint(Pickle().op('}').op('h').raw(le(7, 1)).stop().b, {})),
            path_ + ": data.pkl: BINGET at byte 3: memo key 7 is not defined");
  EXPECT_EQ(error_for(checkpoint(Pickle().op('s').stop().b, {})),
            path_ + ": data.pkl: SETITEM at byte 2: stack underflow");
  EXPECT_EQ(error_for(checkpoint(Pickle().op('t').stop().b, {})),
            path_ + ": data.pkl: TUPLE at byte 2: no MARK on the stack");
  EXPECT_EQ(error_for(checkpoint(Pickle().op('}').op('}').stop().b, {})),
            path_ +
                ": data.pkl: STOP at byte 4: stack holds 2 items and 0 MARKs, expected exactly one "
                "object");
  // Popping across a MARK is an underflow, as in Python.
  EXPECT_EQ(error_for(checkpoint(Pickle().op('}').op('(').integer(1).op('s').stop().b, {})),
            path_ + ": data.pkl: SETITEM at byte 6: stack underflow");
  EXPECT_EQ(error_for(checkpoint(Pickle().op(']').integer(1).integer(2).op('s').stop().b, {})),
            path_ + ": data.pkl: SETITEM at byte 7: target is a list, not a dict");
  EXPECT_EQ(
      error_for(checkpoint(Pickle().op(0x8a).raw(le(9, 1) + std::string(9, '\x01')).stop().b, {})),
      path_ + ": data.pkl: LONG1 at byte 2: integer of 9 bytes is too large");
  EXPECT_EQ(
      error_for(checkpoint(
          Pickle().global("torch._utils", "_rebuild_tensor_v2").op(')').op('R').stop().b, {})),
      path_ + ": data.pkl: REDUCE at byte 36: _rebuild_tensor_v2 expects 6 or 7 arguments, got 0");
  EXPECT_EQ(error_for(checkpoint(Pickle().op('(').str("x").op('t').op('Q').stop().b, {})),
            path_ +
                ": data.pkl: BINPERSID at byte 10: persistent id is not ('storage', storage_type, "
                "key, location, numel)");
}

TEST_F(TorchCheckpointTest, HostileStructuresStayCheap) {
  // A list that contains itself, and a tuple nested 200k deep: no leak, no deep recursion.
  EXPECT_EQ(error_for(checkpoint(
                Pickle().op(']').op('q').raw(le(0, 1)).op('h').raw(le(0, 1)).op('a').stop().b, {})),
            path_ + ": data.pkl holds a list, expected a dict of name -> tensor");
  Pickle deep;
  deep.op('N').raw(std::string(200000, '\x85'));
  EXPECT_EQ(error_for(checkpoint(deep.stop().b, {})),
            path_ + ": data.pkl holds a tuple, expected a dict of name -> tensor");
  // A frame length beyond the data.
  EXPECT_EQ(error_for(checkpoint(Pickle().op(0x95).raw(le(1000, 8)).stop().b, {})),
            path_ + ": data.pkl is truncated (FRAME at byte 2 needs 1000 more bytes)");
}

// ---------------------------------------------------------------------------------------------
// Fuzzing: only eagle2::Error, never a crash (the sanitizer build checks memory) or a hang.

TEST(TorchCheckpointFuzz, TruncatedAndCorruptedRealFile) {
  EAGLE2_SHARED_FILE(bin, "data/models/stories260K-eagle-head/pytorch_model.bin");
  const std::string good = test::read_file(bin);
  ASSERT_GT(good.size(), 4096u);
  const std::string path = test::temp_dir("torch_checkpoint_fuzz") + "/model.bin";
  std::mt19937_64 rng(12345);

  // Every cut is missing the end record; cover both ends densely and the middle sparsely.
  for (size_t len = 0; len < 200; ++len) {
    write_bytes(path, good.substr(0, len));
    EXPECT_FALSE(error_of(path).empty()) << "length " << len;
    write_bytes(path, good.substr(0, good.size() - 1 - len));
    EXPECT_FALSE(error_of(path).empty()) << "length " << good.size() - 1 - len;
  }
  for (int i = 0; i < test::scaled(100); ++i) {
    const size_t len = rng() % good.size();
    write_bytes(path, good.substr(0, len));
    EXPECT_FALSE(error_of(path).empty()) << "length " << len;
  }

  // Byte flips where the structure lives: data.pkl at the front, the central directory at the back.
  for (int i = 0; i < test::scaled(1500); ++i) {
    std::string bad = good;
    const int flips = 1 + static_cast<int>(rng() % 4);
    for (int f = 0; f < flips; ++f) {
      const size_t region = rng() % 10;
      size_t at;
      if (region < 5) {
        at = rng() % 2048;
      } else if (region < 9) {
        at = good.size() - 1 - rng() % 2048;
      } else {
        at = rng() % good.size();
      }
      bad[at] = static_cast<char>(
          rng() % 4 == 0 ? static_cast<unsigned char>(bad[at]) ^ (1u << (rng() % 8)) : rng());
    }
    write_bytes(path, bad);
    load_or_error(path, "flip iteration " + std::to_string(i));
  }
}

TEST(TorchCheckpointFuzz, MutatedPickleOfTheRealFile) {
  EAGLE2_SHARED_FILE(bin, "data/models/stories260K-eagle-head/pytorch_model.bin");
  std::vector<ZipItem> items = read_zip_items(test::read_file(bin));
  size_t pkl_index = items.size();
  for (size_t i = 0; i < items.size(); ++i) {
    if (items[i].name.size() >= 9 &&
        items[i].name.compare(items[i].name.size() - 9, 9, "/data.pkl") == 0)
      pkl_index = i;
  }
  ASSERT_LT(pkl_index, items.size());
  const std::string pkl = items[pkl_index].data;
  const std::string path = test::temp_dir("torch_checkpoint_pickle_fuzz") + "/model.bin";

  // Rewritten by our writer, the untouched pickle loads: the loop below fuzzes only the pickle.
  write_bytes(path, make_zip(items));
  ASSERT_EQ(TorchCheckpoint(path).tensors().size(), 11u);

  // Every strict prefix lacks its STOP.
  for (size_t len = 0; len < pkl.size(); ++len) {
    items[pkl_index].data = pkl.substr(0, len);
    write_bytes(path, make_zip(items));
    EXPECT_FALSE(error_of(path).empty()) << "pickle length " << len;
  }
  // Random flips, and random bytes spliced in or cut out.
  std::mt19937_64 rng(777);
  for (int i = 0; i < test::scaled(2000); ++i) {
    std::string bad = pkl;
    const int edits = 1 + static_cast<int>(rng() % 3);
    for (int e = 0; e < edits && !bad.empty(); ++e) {
      const size_t at = rng() % bad.size();
      switch (rng() % 4) {
        case 0:
          bad[at] = static_cast<char>(rng());
          break;
        case 1:
          bad[at] = static_cast<char>(static_cast<unsigned char>(bad[at]) ^ (1u << (rng() % 8)));
          break;
        case 2:
          bad.insert(at, 1, static_cast<char>(rng()));
          break;
        default:
          bad.erase(at, 1 + rng() % 8);
          break;
      }
    }
    items[pkl_index].data = bad;
    write_bytes(path, make_zip(items));
    load_or_error(path, "pickle edit iteration " + std::to_string(i));
  }
}

}  // namespace
}  // namespace eagle2

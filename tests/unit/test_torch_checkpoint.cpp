// The torch.save checkpoint reader on archives that load: the real PyTorch-written head against
// its safetensors twin, and crafted archives (support/torch_archive_builders.h) for every layout
// the reader accepts: zip64, misaligned and strided storages, half types, parameters, metadata.
// Malformed and hostile archives, and fuzzing, are in test_torch_checkpoint_hostile.cpp.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "io/safetensors.h"
#include "io/torch_checkpoint.h"
#include "support/shared_data.h"
#include "support/torch_archive_builders.h"

namespace eagle2 {
namespace {

using namespace test::torch_archive;

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

// An EAGLE-3 head's d2t (int64) and t2d (bool), as torch.save writes them; a misaligned long
// storage is copied aligned, and a strided bool view contiguous.
TEST_F(TorchCheckpointTest, LongAndBoolStorages) {
  const std::vector<int64_t> ids{5, -1, 0, INT64_MAX};
  std::string id_bytes(32, '\0');
  std::memcpy(id_bytes.data(), ids.data(), 32);
  const std::string flags("\1\0\0\1\1\0", 6);
  ZipOptions opt;
  opt.phase = 3;
  write_bytes(path_, checkpoint(state_dict_pickle({{.key = "d2t",
                                                    .storage_type = "LongStorage",
                                                    .storage_key = "0",
                                                    .numel = 4,
                                                    .shape = {4},
                                                    .stride = {1}},
                                                   {.key = "t2d",
                                                    .storage_type = "BoolStorage",
                                                    .storage_key = "1",
                                                    .numel = 6,
                                                    .shape = {3, 2},
                                                    .stride = {1, 3}}}),
                                {{"0", id_bytes}, {"1", flags}}, opt));
  TorchCheckpoint ckpt(path_);
  const TensorView& d2t = ckpt.tensors().at("d2t");
  const TensorView& t2d = ckpt.tensors().at("t2d");
  EXPECT_EQ(d2t.dtype, DType::I64);
  EXPECT_EQ(t2d.dtype, DType::BOOL);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(d2t.data) % 8, 0u);
  EXPECT_EQ(std::memcmp(d2t.data, ids.data(), 32), 0);
  // Element (i, j) is storage[i + 3 j]: the [2, 3] storage 1 0 0 / 1 1 0 transposed.
  EXPECT_EQ(std::memcmp(t2d.data, "\1\1\0\1\0\0", 6), 0);
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

}  // namespace
}  // namespace eagle2

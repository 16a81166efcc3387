// Index tensors in safetensors files: I64 and BOOL, as an EAGLE-3 head stores its draft-to-target
// map (d2t) and target-to-draft flags (t2d). They round-trip as stored and are refused wherever a
// weight matrix is needed.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "core/error.h"
#include "io/safetensors.h"
#include "model/checkpoint_checks.h"
#include "support/errors.h"
#include "support/shared_data.h"

namespace eagle2 {
namespace {

using test::error_of;

// I64 and BOOL (an EAGLE-3 head's d2t and t2d): written and read as stored, aligned whatever
// comes before them, and refused wherever a weight is needed.
TEST(Safetensors, IndexTensorsRoundTripAndAreNoWeights) {
  const std::string path = test::temp_dir("safetensors_index") + "/model.safetensors";
  const std::vector<unsigned char> flags = {1, 0, 0, 1, 1};
  const std::vector<int64_t> ids = {-3, 0, 7, INT64_MAX, INT64_MIN};
  const std::vector<uint16_t> bf16 = {f32_to_bf16(1.0f)};
  // The odd-sized BOOL tensor first: the writer puts the 8-byte elements first so both align.
  write_safetensors(path, {{"t2d", DType::BOOL, {5}, flags.data()},
                           {"w", DType::BF16, {1, 1}, bf16.data()},
                           {"d2t", DType::I64, {5}, ids.data()}});
  SafetensorsFile f(path);
  const TensorView& t2d = f.tensors().at("t2d");
  const TensorView& d2t = f.tensors().at("d2t");
  EXPECT_EQ(t2d.dtype, DType::BOOL);
  EXPECT_EQ(t2d.nbytes(), 5u);
  EXPECT_EQ(std::memcmp(t2d.data, flags.data(), 5), 0);
  EXPECT_EQ(d2t.dtype, DType::I64);
  EXPECT_EQ(d2t.shape, (std::vector<int64_t>{5}));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(d2t.data) % 8, 0u);
  EXPECT_EQ(std::memcmp(d2t.data, ids.data(), 40), 0);
  EXPECT_EQ(error_of([&] { as_matrix(d2t); }),
            path +
                ": tensor 'd2t' has dtype I64, expected floating-point weights (F32, F16, BF16 "
                "or a quantized type)");
  EXPECT_EQ(error_of([&] { to_f32(t2d); }),
            path +
                ": tensor 't2d' has dtype BOOL, expected floating-point weights (F32, F16, "
                "BF16 or a quantized type)");
  EXPECT_EQ(error_of([&] { require_finite(d2t, path, "d2t"); }),
            path +
                ": tensor 'd2t' has dtype I64, expected floating-point weights (F32, F16, BF16 "
                "or a quantized type)");
  float out = 0;
  EXPECT_EQ(error_of([&] { convert_to_f32(DType::I64, d2t.data, &out, 1); }),
            "convert: I64 holds integers, not floats");
  // A byte-sized tensor's data may start anywhere: an unpadded header leaves it at an odd offset.
  const std::string odd = test::temp_dir("safetensors_index_odd") + "/m.safetensors";
  {
    std::string header = R"({"t": {"dtype": "BOOL", "shape": [3], "data_offsets": [0, 3]}})";
    std::string bytes(8, '\0');
    for (int i = 0; i < 8; ++i) bytes[i] = static_cast<char>(header.size() >> (8 * i));
    test::write_file(odd, bytes + header + std::string("\1\0\1", 3));
  }
  SafetensorsFile g(odd);
  EXPECT_EQ(std::memcmp(g.tensors().at("t").data, "\1\0\1", 3), 0);
  // Safetensors has no spelling for ggml's block types: the writer refuses them.
  EXPECT_EQ(error_of([&] {
              write_safetensors(odd, {{"q", DType::Q8_0, {32}, flags.data()}});
            }),
            odd + ": tensor 'q' is Q8_0, a block type safetensors has no spelling for");
}

}  // namespace
}  // namespace eagle2

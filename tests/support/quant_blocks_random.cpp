#include "support/quant_blocks_random.h"

#include <cstring>

namespace eagle2::test {

std::vector<unsigned char> random_blocks(DType dt, int64_t rows, int64_t cols, std::mt19937& rng) {
  std::vector<unsigned char> data(dtype_bytes(dt, cols) * static_cast<size_t>(rows));
  std::uniform_int_distribution<int> byte(0, 255);
  for (auto& b : data) b = static_cast<unsigned char>(byte(rng));
  std::uniform_real_distribution<float> scale(-0.02f, 0.02f), positive(0.0f, 0.02f);
  const size_t bb = dtype_block_bytes(dt);
  for (size_t at = 0; at < data.size(); at += bb) {
    auto put = [&](size_t off, float v) {
      const uint16_t h = f32_to_f16(v);
      std::memcpy(data.data() + at + off, &h, 2);
    };
    switch (dt) {
      case DType::Q8_0:
      case DType::Q4_0:
      case DType::Q5_0:
      case DType::IQ4_NL:
        put(0, scale(rng));
        break;
      case DType::Q4_1:  // d, then a min that may be either sign
      case DType::Q5_1:
        put(0, scale(rng));
        put(2, scale(rng));
        break;
      case DType::Q4_K:
      case DType::Q5_K:
        put(0, positive(rng));
        put(2, positive(rng));
        break;
      case DType::IQ4_XS:
        put(0, positive(rng));
        break;
      case DType::Q3_K:
        put(108, positive(rng));
        break;
      case DType::Q2_K:
        put(80, positive(rng));
        put(82, positive(rng));
        break;
      case DType::Q6_K:
        put(208, positive(rng));
        break;
      default:
        break;
    }
  }
  return data;
}

}  // namespace eagle2::test

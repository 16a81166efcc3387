#include "core/quant_blocks.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "core/error.h"
#include "core/quant_codes.h"

namespace eagle2 {

void q4_k_scale_min(const uint8_t* q, int j, int* scale, int* min) {
  if (j < 4) {
    *scale = q[j] & 63;
    *min = q[j + 4] & 63;
  } else {
    *scale = (q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4);
    *min = (q[j + 4] >> 4) | ((q[j] >> 6) << 4);
  }
}

namespace {

void dequantize_q8_0(const BlockQ8_0* b, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, y += 32) {
    const float d = f16_to_f32(b[i].d);
    for (int j = 0; j < 32; ++j) y[j] = d * static_cast<float>(b[i].qs[j]);
  }
}

void dequantize_q4_0(const BlockQ4_0* b, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, y += 32) {
    const float d = f16_to_f32(b[i].d);
    for (int j = 0; j < 16; ++j) {
      y[j] = d * static_cast<float>((b[i].qs[j] & 0xF) - 8);
      y[j + 16] = d * static_cast<float>((b[i].qs[j] >> 4) - 8);
    }
  }
}

void dequantize_q4_k(const BlockQ4_K* b, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i) {
    const float d = f16_to_f32(b[i].d), dmin = f16_to_f32(b[i].dmin);
    const uint8_t* q = b[i].qs;
    for (int chunk = 0; chunk < 4; ++chunk, q += 32) {
      int sc, m;
      q4_k_scale_min(b[i].scales, 2 * chunk, &sc, &m);
      const float d1 = d * static_cast<float>(sc), m1 = dmin * static_cast<float>(m);
      q4_k_scale_min(b[i].scales, 2 * chunk + 1, &sc, &m);
      const float d2 = d * static_cast<float>(sc), m2 = dmin * static_cast<float>(m);
      for (int l = 0; l < 32; ++l) *y++ = d1 * static_cast<float>(q[l] & 0xF) - m1;
      for (int l = 0; l < 32; ++l) *y++ = d2 * static_cast<float>(q[l] >> 4) - m2;
    }
  }
}

void dequantize_q6_k(const BlockQ6_K* b, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i) {
    const float d = f16_to_f32(b[i].d);
    const uint8_t* ql = b[i].ql;
    const uint8_t* qh = b[i].qh;
    const int8_t* sc = b[i].scales;
    for (int half = 0; half < 2; ++half, y += 128, ql += 64, qh += 32, sc += 8) {
      for (int l = 0; l < 32; ++l) {
        const int is = l / 16;
        const int q1 = ((ql[l] & 0xF) | (((qh[l] >> 0) & 3) << 4)) - 32;
        const int q2 = ((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32;
        const int q3 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
        const int q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
        y[l] = d * static_cast<float>(sc[is]) * static_cast<float>(q1);
        y[l + 32] = d * static_cast<float>(sc[is + 2]) * static_cast<float>(q2);
        y[l + 64] = d * static_cast<float>(sc[is + 4]) * static_cast<float>(q3);
        y[l + 96] = d * static_cast<float>(sc[is + 6]) * static_cast<float>(q4);
      }
    }
  }
}

void quantize_q8_0(const float* x, BlockQ8_0* b, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, x += 32) {
    float amax = 0.0f;
    for (int j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(x[j]));
    const float d = amax / 127.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    b[i].d = f32_to_f16(d);
    for (int j = 0; j < 32; ++j) b[i].qs[j] = static_cast<int8_t>(std::round(x[j] * id));
  }
}

void quantize_q4_0(const float* x, BlockQ4_0* b, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, x += 32) {
    // The signed value of largest magnitude maps to -8, so the full range -8..7 is used.
    float amax = 0.0f, max = 0.0f;
    for (int j = 0; j < 32; ++j)
      if (amax < std::fabs(x[j])) {
        amax = std::fabs(x[j]);
        max = x[j];
      }
    const float d = max / -8.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    b[i].d = f32_to_f16(d);
    for (int j = 0; j < 16; ++j) {
      const int lo = std::min(15, static_cast<int>(static_cast<int8_t>(x[j] * id + 8.5f)));
      const int hi = std::min(15, static_cast<int>(static_cast<int8_t>(x[j + 16] * id + 8.5f)));
      b[i].qs[j] = static_cast<uint8_t>(lo | (hi << 4));
    }
  }
}

}  // namespace

void dequantize_blocks(DType t, const void* src, float* dst, int64_t n) {
  const int64_t nb = n / dtype_block_elements(t);
  if (nb * dtype_block_elements(t) != n)
    fail("dequantize: ", n, " elements are not whole ", dtype_name(t), " blocks");
  switch (t) {
    case DType::Q8_0:
      return dequantize_q8_0(static_cast<const BlockQ8_0*>(src), dst, nb);
    case DType::Q4_0:
      return dequantize_q4_0(static_cast<const BlockQ4_0*>(src), dst, nb);
    case DType::Q4_K:
      return dequantize_q4_k(static_cast<const BlockQ4_K*>(src), dst, nb);
    case DType::Q6_K:
      return dequantize_q6_k(static_cast<const BlockQ6_K*>(src), dst, nb);
    case DType::Q4_1:
    case DType::Q5_0:
    case DType::Q5_1:
    case DType::IQ4_NL:
    case DType::Q5_K:
    case DType::Q3_K:
    case DType::Q2_K:
    case DType::IQ4_XS:
      return dequantize_codes(t, src, dst, nb);
    default:
      fail("dequantize: ", dtype_name(t), " is not a block type");
  }
}

void quantize_blocks(DType t, const float* src, void* dst, int64_t n) {
  const int64_t nb = n / dtype_block_elements(t);
  if (nb * dtype_block_elements(t) != n)
    fail("quantize: ", n, " elements are not whole ", dtype_name(t), " blocks");
  switch (t) {
    case DType::Q8_0:
      return quantize_q8_0(src, static_cast<BlockQ8_0*>(dst), nb);
    case DType::Q4_0:
      return quantize_q4_0(src, static_cast<BlockQ4_0*>(dst), nb);
    default:
      fail("quantize: eagle2 writes Q8_0 and Q4_0, not ", dtype_name(t));
  }
}

namespace {

// The grouped layout's parts (core/tensor.h): per row and block, `head` leading bytes (the f16
// scale of Q8_0/Q4_0, stored sixteen rows together), `dwords` dwords stored dword-major (dword t of
// the sixteen rows in one 64-byte line), then `tail` bytes (Q6_K's f16 d), sixteen rows together.
struct GroupedBlock {
  size_t block_bytes, head, dwords, tail;
  // Offsets of lane `lane`'s parts in the group's block.
  size_t head_at(size_t lane) const { return lane * head; }
  size_t dword_at(size_t t, size_t lane) const { return 16 * head + (16 * t + lane) * 4; }
  size_t tail_at(size_t lane) const { return 16 * (head + 4 * dwords) + lane * tail; }
};
GroupedBlock grouped_block(DType t) {
  switch (t) {
    case DType::Q8_0:
      return {34, 2, 8, 0};
    case DType::Q4_0:
      return {18, 2, 4, 0};
    case DType::Q4_K:
      return {144, 0, 36, 0};
    default:  // Q6_K: ql, qh, scales (208 bytes), then d
      return {210, 0, 52, 2};
  }
}

// Calls span(offset in the row's block, offset in the group's block, bytes) for every part of
// lane `lane`'s block.
template <class Span>
void for_each_span(const GroupedBlock& gb, size_t lane, Span span) {
  if (gb.head != 0) span(0, gb.head_at(lane), gb.head);
  for (size_t t = 0; t < gb.dwords; ++t) span(gb.head + 4 * t, gb.dword_at(t, lane), 4);
  if (gb.tail != 0) span(gb.head + 4 * gb.dwords, gb.tail_at(lane), gb.tail);
}

}  // namespace

void row_blocks(const Matrix& W, int64_t r, void* dst) {
  const size_t row_bytes = dtype_bytes(W.dtype, W.cols);
  if (W.layout == MatrixLayout::kRows) {
    std::memcpy(dst, W.row(r), row_bytes);
    return;
  }
  const GroupedBlock gb = grouped_block(W.dtype);
  const int64_t blocks = W.cols / dtype_block_elements(W.dtype);
  const int64_t g = r / 16;
  const size_t lane = static_cast<size_t>(r % 16);
  const auto* group =
      static_cast<const unsigned char*>(W.data) + static_cast<size_t>(g) * 16 * row_bytes;
  auto* out = static_cast<unsigned char*>(dst);
  for (int64_t i = 0; i < blocks; ++i) {
    const unsigned char* src = group + static_cast<size_t>(i) * 16 * gb.block_bytes;
    unsigned char* blk = out + static_cast<size_t>(i) * gb.block_bytes;
    for_each_span(gb, lane, [&](size_t at_row, size_t at_group, size_t n) {
      std::memcpy(blk + at_row, src + at_group, n);
    });
  }
}

std::vector<float> matrix_to_f32(const Matrix& W) {
  if (!is_float_dtype(W.dtype)) fail("matrix_to_f32: ", dtype_name(W.dtype), " holds integers");
  const auto cols = static_cast<size_t>(W.cols);
  std::vector<float> out(static_cast<size_t>(W.rows) * cols);
  std::vector<unsigned char> row(W.layout == MatrixLayout::kRows ? 0
                                                                 : dtype_bytes(W.dtype, W.cols));
  for (int64_t r = 0; r < W.rows; ++r) {
    const void* src = W.row(r);
    if (!row.empty()) {
      row_blocks(W, r, row.data());
      src = row.data();
    }
    convert_to_f32(W.dtype, src, &out[static_cast<size_t>(r) * cols], cols);
  }
  return out;
}

bool can_group_rows16(const Matrix& W) {
  const bool grouped_type = W.dtype == DType::Q8_0 || W.dtype == DType::Q4_0 ||
                            W.dtype == DType::Q4_K || W.dtype == DType::Q6_K;
  return grouped_type && W.layout == MatrixLayout::kRows && W.rows > 0 && W.rows % 16 == 0 &&
         W.cols % dtype_block_elements(W.dtype) == 0;
}

void group_rows16(Matrix& W, void* writable) {
  if (!can_group_rows16(W))
    fail("group_rows16: a ", dtype_name(W.dtype), " [", W.rows, ", ", W.cols,
         "] matrix cannot be grouped");
  if (writable != W.data) fail("group_rows16: the writable pointer is not the matrix's data");
  const GroupedBlock gb = grouped_block(W.dtype);
  const size_t row_bytes = dtype_bytes(W.dtype, W.cols);
  const int64_t blocks = W.cols / dtype_block_elements(W.dtype);
  std::vector<unsigned char> group(16 * row_bytes);
  auto* base = static_cast<unsigned char*>(writable);
  for (int64_t g = 0; g < W.rows / 16; ++g) {
    unsigned char* rows = base + static_cast<size_t>(g) * 16 * row_bytes;
    std::memcpy(group.data(), rows, group.size());  // the sixteen rows as they were
    for (int64_t i = 0; i < blocks; ++i) {
      unsigned char* dst = rows + static_cast<size_t>(i) * 16 * gb.block_bytes;
      for (size_t lane = 0; lane < 16; ++lane) {
        const unsigned char* blk =
            group.data() + lane * row_bytes + static_cast<size_t>(i) * gb.block_bytes;
        for_each_span(gb, lane, [&](size_t at_row, size_t at_group, size_t n) {
          std::memcpy(dst + at_group, blk + at_row, n);
        });
      }
    }
  }
  W.layout = MatrixLayout::kRowGroups16;
}

}  // namespace eagle2

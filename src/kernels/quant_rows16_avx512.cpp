// AVX-512 VNNI kernel for Q8_0/Q4_0 weights that puts sixteen weight rows in the sixteen int32
// lanes of a register, so that vpdpbusd's lane sums are already each row's exact block sum: no
// horizontal reduction per (activation row, weight row, block) as in quant_tiles.h, and one
// broadcast activation dword feeds sixteen rows. The order of quant_matmul.h is kept exactly: per
// block an exact int32 sum per row, one f32 term (dw * dx) * float(s) per row, added into
// accumulator i % 8 (one register per i % 8, lanes = rows), then the fixed pairwise total — so
// this gives the reference's bits and needs no test of its own beyond the every-path tests.
//
// Per block of sixteen rows the weights are transposed in registers from the file's row layout:
// each row's 32-byte (Q8_0) or 16-byte (Q4_0) run of codes is cut into dwords (4 consecutive
// elements), and vector t gets dword t of rows 0..15. The scales come in one gather.
#include <algorithm>
#include <cstdint>
#include <cstring>

#include "core/quant_blocks.h"
#include "kernels/avx512_sums.h"  // also <immintrin.h>, with GCC 12's false warnings silenced
#include "kernels/avx512_transpose.h"
#include "kernels/quant_internal.h"

namespace eagle2::detail {
namespace {

inline __m128i load128(const char* p) {
  return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
}
inline __m256i load256(const char* p) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
}

// Q8_0: w[t] (t = 0..7) = dword t of the block's codes for rows 0..15, sign bit flipped (w + 128,
// unsigned for vpdpbusd). qs: row 0's codes; rb: bytes between rows.
inline void weights_q8_0(const char* qs, size_t rb, __m512i w[8]) {
  // a[k] = [row k | row k + 4] and a[k + 4] = [row k + 8 | row k + 12], each 8 dwords: after the
  // in-lane transposes, lanes 0/2 of the first group's k-th output hold dword k of rows 0-3 / 4-7
  // and lanes 1/3 dword k + 4; the second group likewise for rows 8-15.
  __m512i a[8];
  for (int k = 0; k < 4; ++k) {
    a[k] = _mm512_inserti64x4(_mm512_castsi256_si512(load256(qs + k * rb)),
                              load256(qs + (k + 4) * rb), 1);
    a[k + 4] = _mm512_inserti64x4(_mm512_castsi256_si512(load256(qs + (k + 8) * rb)),
                                  load256(qs + (k + 12) * rb), 1);
  }
  transpose4(a[0], a[1], a[2], a[3]);
  transpose4(a[4], a[5], a[6], a[7]);
  const __m512i flip = _mm512_set1_epi8(static_cast<char>(0x80));
  for (int k = 0; k < 4; ++k) {
    w[k] = _mm512_xor_si512(_mm512_shuffle_i32x4(a[k], a[k + 4], 0x88), flip);      // lanes 0, 2
    w[k + 4] = _mm512_xor_si512(_mm512_shuffle_i32x4(a[k], a[k + 4], 0xDD), flip);  // lanes 1, 3
  }
}

// Q4_0: w[t] (t = 0..3) = low nibbles of dword t (elements 4t..4t+3), w[t + 4] = high nibbles
// (elements 16 + 4t..), for rows 0..15.
inline void weights_q4_0(const char* qs, size_t rb, __m512i w[8]) {
  // a[k] = [row k | row k + 4 | row k + 8 | row k + 12], 4 dwords each: the in-lane transposes
  // leave dword t of rows 0..15 in order in a[t].
  __m512i a[4];
  for (int k = 0; k < 4; ++k) {
    const __m256i lo = _mm256_inserti128_si256(_mm256_castsi128_si256(load128(qs + k * rb)),
                                               load128(qs + (k + 4) * rb), 1);
    const __m256i hi = _mm256_inserti128_si256(_mm256_castsi128_si256(load128(qs + (k + 8) * rb)),
                                               load128(qs + (k + 12) * rb), 1);
    a[k] = _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1);
  }
  transpose4(a[0], a[1], a[2], a[3]);
  const __m512i m4 = _mm512_set1_epi8(0x0F);
  for (int t = 0; t < 4; ++t) {
    w[t] = _mm512_and_si512(a[t], m4);
    w[t + 4] = _mm512_and_si512(_mm512_srli_epi16(a[t], 4), m4);
  }
}

// Where a tile's sixteen rows come from: the file's row layout, transposed per block in registers,
// or MatrixLayout::kRowGroups16, where block i of the group is already [16 scales | dword-major
// codes] and loads as whole vectors.
template <DType DT>
struct RowLayoutSource {
  static constexpr size_t kBlock = DT == DType::Q8_0 ? sizeof(BlockQ8_0) : sizeof(BlockQ4_0);
  const char* w;  // row 0 of the sixteen
  size_t rb;      // bytes per row
  __m512i row_offsets;
  RowLayoutSource(const char* w_, size_t rb_)
      : w(w_),
        rb(rb_),
        row_offsets(_mm512_mullo_epi32(
            _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
            _mm512_set1_epi32(static_cast<int>(rb_)))) {}
  void load(int64_t i, __m512* dw, __m512i wv[8]) const {
    const char* blk = w + static_cast<size_t>(i) * kBlock;
    // The sixteen f16 scales: the low half of a dword read at each block's start (its high half
    // is the block's first codes, so the read stays inside the block).
    const __m512i d32 = _mm512_i32gather_epi32(row_offsets, blk, 1);
    *dw = _mm512_cvtph_ps(_mm512_cvtepi32_epi16(d32));
    if constexpr (DT == DType::Q8_0)
      weights_q8_0(blk + 2, rb, wv);
    else
      weights_q4_0(blk + 2, rb, wv);
  }
};

template <DType DT>
struct GroupedSource {
  static constexpr size_t kGroupBlock =
      16 * (DT == DType::Q8_0 ? sizeof(BlockQ8_0) : sizeof(BlockQ4_0));
  const char* group;  // the group's first byte
  void load(int64_t i, __m512* dw, __m512i wv[8]) const {
    const char* gb = group + static_cast<size_t>(i) * kGroupBlock;
    *dw = _mm512_cvtph_ps(load256(gb));
    auto code = [&](int t) { return _mm512_loadu_si512(gb + 32 + t * 64); };
    if constexpr (DT == DType::Q8_0) {
      const __m512i flip = _mm512_set1_epi8(static_cast<char>(0x80));
      for (int t = 0; t < 8; ++t) wv[t] = _mm512_xor_si512(code(t), flip);
    } else {
      const __m512i m4 = _mm512_set1_epi8(0x0F);
      for (int t = 0; t < 4; ++t) {
        const __m512i a = code(t);
        wv[t] = _mm512_and_si512(a, m4);
        wv[t + 4] = _mm512_and_si512(_mm512_srli_epi16(a, 4), m4);
      }
    }
  }
};

// The fixed pairwise total of the eight accumulators (quant_matmul.h), stored.
inline void store_total(const __m512* acc, float* y) {
  _mm512_storeu_ps(
      y,
      _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(acc[0], acc[1]), _mm512_add_ps(acc[2], acc[3])),
                    _mm512_add_ps(_mm512_add_ps(acc[4], acc[5]), _mm512_add_ps(acc[6], acc[7]))));
}

inline __m512i broadcast32(const int8_t* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return _mm512_set1_epi32(v);
}

// Block i's term for activation rows m .. m + R - 1, added into acc[r][j] (j = i % 8). Always
// inlined with a constant j, so that the accumulators stay in registers.
template <DType DT, int R, class Source>
__attribute__((always_inline)) inline void block_terms(const QuantRowsView& x, int64_t m,
                                                       const Source& src, int64_t i, int j,
                                                       __m512 (&acc)[R][8]) {
  constexpr int kShift = DT == DType::Q8_0 ? 7 : 3;  // the offset's factor: 128 or 8
  const int64_t K = x.cols, nscale = K / 32;
  __m512 dw;
  __m512i wv[8];
  src.load(i, &dw, wv);
  for (int r = 0; r < R; ++r) {
    const int8_t* xq = x.qs + (m + r) * K + i * 32;
    // The activation dwords: broadcast from memory, or with one row (which waits on the weights)
    // read once into general registers and moved across, which measured faster there.
    __m512i xv[8];
    if constexpr (R == 1) {
      int32_t xd[8];
      std::memcpy(xd, xq, 32);
      for (int t = 0; t < 8; ++t) xv[t] = _mm512_set1_epi32(xd[t]);
    } else {
      for (int t = 0; t < 8; ++t) xv[t] = broadcast32(xq + 4 * t);
    }
    // Two chains (even and odd dwords) for latency; their int32 sum is exact in any order.
    __m512i s0 = _mm512_setzero_si512(), s1 = _mm512_setzero_si512();
    if constexpr (DT == DType::Q8_0) {
      for (int t = 0; t < 8; t += 2) {
        s0 = _mm512_dpbusd_epi32(s0, wv[t], xv[t]);
        s1 = _mm512_dpbusd_epi32(s1, wv[t + 1], xv[t + 1]);
      }
    } else {
      for (int t = 0; t < 4; ++t) {
        s0 = _mm512_dpbusd_epi32(s0, wv[t], xv[t]);          // elements 4t..
        s1 = _mm512_dpbusd_epi32(s1, wv[t + 4], xv[t + 4]);  // 16 + 4t..
      }
    }
    const int32_t offset = x.sums[(m + r) * nscale + i] * (1 << kShift);
    const __m512i s = _mm512_sub_epi32(_mm512_add_epi32(s0, s1), _mm512_set1_epi32(offset));
    const __m512 dx = _mm512_set1_ps(x.scale[(m + r) * nscale + i]);
    const __m512 term = _mm512_mul_ps(_mm512_mul_ps(dw, dx), _mm512_cvtepi32_ps(s));
    acc[r][j] = _mm512_add_ps(acc[r][j], term);
  }
}

// Sixteen weight rows (from `src`) x one activation row m. Kept rolled, with the accumulators in
// memory and the activation dwords moved across from general registers: with a single row the
// kernel waits on the weights, and this form measured 15 % faster than tile16's at M = 1.
template <DType DT, class Source>
void tile16_one_row(const QuantRowsView& x, int64_t m, const Source& src, int64_t blocks, float* y,
                    int64_t ldy) {
  __m512 acc[1][8];
  for (int j = 0; j < 8; ++j) acc[0][j] = _mm512_setzero_ps();
  for (int64_t i0 = 0; i0 < blocks; i0 += 8) {
    const int nb = static_cast<int>(std::min<int64_t>(8, blocks - i0));
    for (int j = 0; j < nb; ++j) block_terms<DT, 1>(x, m, src, i0 + j, j, acc);
  }
  store_total(acc[0], y + m * ldy);
}

// Sixteen weight rows (from `src`) x R activation rows m .. m + R - 1, R >= 2: unrolled, so that
// the accumulators stay in registers (measured 12-15 % faster than the rolled form at M = 8, 16).
template <DType DT, int R, class Source>
void tile16(const QuantRowsView& x, int64_t m, const Source& src, int64_t blocks, float* y,
            int64_t ldy) {
  __m512 acc[R][8];
  for (int r = 0; r < R; ++r)
    for (int j = 0; j < 8; ++j) acc[r][j] = _mm512_setzero_ps();
  int64_t i0 = 0;
  for (; i0 + 8 <= blocks; i0 += 8) {
#pragma GCC unroll 8
    for (int j = 0; j < 8; ++j) block_terms<DT, R>(x, m, src, i0 + j, j, acc);
  }
  // The last blocks (fewer than 8) with constant j as well, each behind its own test.
#pragma GCC unroll 8
  for (int j = 0; j < 7; ++j)
    if (i0 + j < blocks) block_terms<DT, R>(x, m, src, i0 + j, j, acc);
  for (int r = 0; r < R; ++r) store_total(acc[r], y + (m + r) * ldy);
}

template <DType DT, class Source>
void rows_of_group(const QuantRowsView& x, const Source& src, int64_t blocks, float* y, int64_t ldy,
                   int64_t m0, int64_t m1) {
  int64_t m = m0;
  for (; m + 2 <= m1; m += 2) tile16<DT, 2>(x, m, src, blocks, y, ldy);
  if (m < m1) tile16_one_row<DT>(x, m, src, blocks, y, ldy);
}

template <DType DT>
int64_t range16(const QuantRowsView& x, const void* w, float* y, int64_t ldy, int64_t m0,
                int64_t m1, int64_t n0, int64_t n1) {
  const int64_t blocks = x.cols / 32;
  const size_t rb = dtype_bytes(DT, x.cols);
  const char* wc = static_cast<const char*>(w);
  int64_t n = n0;
  for (; n + 16 <= n1; n += 16)
    rows_of_group<DT>(x, RowLayoutSource<DT>(wc + static_cast<size_t>(n) * rb, rb), blocks, y + n,
                      ldy, m0, m1);
  return n;
}

template <DType DT>
void grouped_range(const QuantRowsView& x, const void* w, float* y, int64_t ldy, int64_t m0,
                   int64_t m1, int64_t n0, int64_t n1) {
  const int64_t blocks = x.cols / 32;
  const size_t rb = dtype_bytes(DT, x.cols);
  const char* wc = static_cast<const char*>(w);
  for (int64_t n = n0; n < n1; n += 16)
    rows_of_group<DT>(x, GroupedSource<DT>{wc + static_cast<size_t>(n) * rb}, blocks, y + n, ldy,
                      m0, m1);
}

}  // namespace

int64_t quant_rows16_range_avx512(DType dt, const QuantRowsView& x, const void* w, float* y,
                                  int64_t ldy, int64_t m0, int64_t m1, int64_t n0, int64_t n1) {
  // Gather offsets are int32: rows longer than 128 MiB take the other kernel.
  if (dtype_bytes(dt, x.cols) * 15 > size_t{1} << 31) return n0;
  switch (dt) {
    case DType::Q8_0:
      return range16<DType::Q8_0>(x, w, y, ldy, m0, m1, n0, n1);
    case DType::Q4_0:
      return range16<DType::Q4_0>(x, w, y, ldy, m0, m1, n0, n1);
    default:
      return n0;
  }
}

void quant_grouped16_range_avx512(DType dt, const QuantRowsView& x, const void* w, float* y,
                                  int64_t ldy, int64_t m0, int64_t m1, int64_t n0, int64_t n1) {
  if (dt == DType::Q8_0)
    grouped_range<DType::Q8_0>(x, w, y, ldy, m0, m1, n0, n1);
  else
    grouped_range<DType::Q4_0>(x, w, y, ldy, m0, m1, n0, n1);
}

}  // namespace eagle2::detail

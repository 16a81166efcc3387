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
//
// Several activation rows (a verification batch, a prompt) share each loaded block: up to
// kRowChunk rows, whose accumulators sit in L1 (two rows: in registers). Per row and block that
// leaves the eight vpdpbusd and four vector operations (int-to-float, two multiplies, the add)
// that the reference's per-block float step needs; the offset correction is folded into the
// integer sum's start value. Measured (1 thread, 512 x 2048 grouped, thread CPU per row,
// 2026-12-07, 2-core Intel Xeon model 207): 8-16 rows Q8_0 8.4-8.6 -> 6.3-6.7 us, Q4_0 8.8-8.9 ->
// 6.5-6.6 us, against a bound of about 5.1 us for this order (3.4 us of vpdpbusd plus the float
// step's four operations per eight at the same rate; docs/QUANTIZATION.md, "Verify cost").
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "core/quant_blocks.h"
#include "kernels/avx512_sums.h"  // also <immintrin.h>, with GCC 12's false warnings silenced
#include "kernels/avx512_transpose.h"
#include "kernels/quant_internal.h"

namespace eagle2::detail {
namespace {

// Blocks ahead that the one-row and many-row tiles prefetch (a block of sixteen weight rows:
// 544 bytes Q8_0, 288 Q4_0). The hardware prefetcher alone left the verification forwards of
// a 1.1B-shape file waiting on memory: 1 thread, 32000 x 2048 grouped Q8_0 (weights from memory),
// ms a row: M = 4 2.4-2.5 -> 1.9-2.0, M = 8 1.4-1.5 -> 1.0-1.1, M = 1 7.2-8.3 -> 5.5-7.1; 2 or 8
// ahead measured no better. Not in the two-row tile, where it measured no gain.
constexpr int kAhead = 4;

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
  void prefetch(int64_t) const {}  // sixteen row streams: left to the hardware
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
  void prefetch(int64_t i) const {
    const char* gb = group + static_cast<size_t>(i) * kGroupBlock;
    for (size_t o = 0; o < kGroupBlock; o += 64) _mm_prefetch(gb + o, _MM_HINT_T0);
  }
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

// Block i's term for activation row m, added into acc[j] (j = i % 8). Always inlined with a
// constant j, so that the accumulators' addresses are fixed.
template <DType DT, class Source>
__attribute__((always_inline)) inline void one_row_term(const QuantRowsView& x, int64_t m,
                                                        const Source& src, int64_t i, int j,
                                                        __m512 (&acc)[8]) {
  constexpr int kShift = DT == DType::Q8_0 ? 7 : 3;  // the offset's factor: 128 or 8
  const int64_t K = x.cols, nscale = K / 32;
  __m512 dw;
  __m512i wv[8];
  src.load(i, &dw, wv);
  // The activation dwords read once into general registers and moved across: the single row
  // waits on the weights, and this measured faster there than broadcasts from memory.
  int32_t xd[8];
  std::memcpy(xd, x.qs + m * K + i * 32, 32);
  // Two chains (even and odd dwords) for latency; their int32 sum is exact in any order.
  __m512i s0 = _mm512_setzero_si512(), s1 = _mm512_setzero_si512();
  for (int t = 0; t < 8; t += 2) {
    s0 = _mm512_dpbusd_epi32(s0, wv[t], _mm512_set1_epi32(xd[t]));
    s1 = _mm512_dpbusd_epi32(s1, wv[t + 1], _mm512_set1_epi32(xd[t + 1]));
  }
  const int32_t offset = x.sums[m * nscale + i] * (1 << kShift);
  const __m512i s = _mm512_sub_epi32(_mm512_add_epi32(s0, s1), _mm512_set1_epi32(offset));
  const __m512 dx = _mm512_set1_ps(x.scale[m * nscale + i]);
  const __m512 term = _mm512_mul_ps(_mm512_mul_ps(dw, dx), _mm512_cvtepi32_ps(s));
  acc[j] = _mm512_add_ps(acc[j], term);
}

// Sixteen weight rows (from `src`) x one activation row m (plain decoding). Kept rolled, with the
// accumulators in memory and the activation dwords moved across from general registers: with a
// single row the kernel waits on the weights, and this form measured 15 % faster than an
// unrolled one at M = 1.
template <DType DT, class Source>
void tile16_one_row(const QuantRowsView& x, int64_t m, const Source& src, int64_t blocks, float* y,
                    int64_t ldy) {
  __m512 acc[8];
  for (int j = 0; j < 8; ++j) acc[j] = _mm512_setzero_ps();
  for (int64_t i0 = 0; i0 < blocks; i0 += 8) {
    const int nb = static_cast<int>(std::min<int64_t>(8, blocks - i0));
    for (int j = 0; j < nb; ++j) {
      if (i0 + j + kAhead < blocks) src.prefetch(i0 + j + kAhead);
      one_row_term<DT>(x, m, src, i0 + j, j, acc);
    }
  }
  store_total(acc, y + m * ldy);
}

// Activation rows that share one loaded block of sixteen weight rows. Their accumulators (8
// vectors a row) live in L1, not in registers: the old two-row tile kept its sixteen in
// registers and so reloaded and unpacked every block once per pair of rows.
constexpr int kRowChunk = 12;

// The start value of each (row, block) integer sum: minus the offset the unsigned weight codes
// carry (128 for Q8_0's flipped sign bit, 8 for Q4_0's nibbles) times the row's block activation
// sum. Starting the vpdpbusd chain there (a broadcast load, no vector arithmetic) ends it at the
// exact block sum of quant_matmul.h; integer addition is exact in any order. off[(m - m0) *
// blocks + i].
template <DType DT>
void start_values(const QuantRowsView& x, int64_t m0, int64_t m1, int64_t blocks,
                  std::vector<int32_t>* off) {
  constexpr int32_t kOffset = DT == DType::Q8_0 ? 128 : 8;
  off->resize(static_cast<size_t>((m1 - m0) * blocks));
  for (int64_t m = m0; m < m1; ++m) {
    const int32_t* sums = x.sums + m * blocks;
    int32_t* o = off->data() + (m - m0) * blocks;
    for (int64_t i = 0; i < blocks; ++i) o[i] = -kOffset * sums[i];
  }
}

// Block i's terms for activation rows m .. m + R - 1 (start values at off + r * blocks), added
// into acc[r][i % 8]. Per row and block: eight vpdpbusd with broadcast activation dwords, then
// the reference's float step (dw * dx) * float(s), added into the accumulator: four vector
// operations (and one add of the two chains), the broadcasts being loads. Two chains (even and
// odd dwords) because one chain of eight measured 10-15 % slower (its latency).
template <DType DT, int R>
__attribute__((always_inline)) inline void rows_terms(const QuantRowsView& x, int64_t m,
                                                      const int32_t* off, int64_t blocks, int64_t i,
                                                      int j, __m512 dw, const __m512i wv[8],
                                                      __m512 (*acc)[8]) {
  const int64_t K = x.cols;
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r) {
    const int8_t* xq = x.qs + (m + r) * K + i * 32;
    __m512i s0 = _mm512_set1_epi32(off[r * blocks + i]), s1 = _mm512_setzero_si512();
    for (int t = 0; t < 8; t += 2) {
      s0 = _mm512_dpbusd_epi32(s0, wv[t], broadcast32(xq + 4 * t));
      s1 = _mm512_dpbusd_epi32(s1, wv[t + 1], broadcast32(xq + 4 * t + 4));
    }
    const __m512i s = _mm512_add_epi32(s0, s1);
    const __m512 p = _mm512_mul_ps(dw, _mm512_set1_ps(x.scale[(m + r) * blocks + i]));
    acc[r][j] = _mm512_add_ps(acc[r][j], _mm512_mul_ps(p, _mm512_cvtepi32_ps(s)));
  }
}

// Sixteen weight rows (from `src`) x R activation rows m .. m + R - 1, 2 <= R <= kRowChunk: each
// block is loaded and unpacked once for all R rows.
template <DType DT, int R, class Source>
void tile16(const QuantRowsView& x, int64_t m, const int32_t* off, const Source& src,
            int64_t blocks, float* y, int64_t ldy) {
  alignas(64) __m512 acc[R][8];
  for (int r = 0; r < R; ++r)
    for (int j = 0; j < 8; ++j) acc[r][j] = _mm512_setzero_ps();
  for (int64_t i = 0; i < blocks; ++i) {
    __m512 dw;
    __m512i wv[8];
    if (i + kAhead < blocks) src.prefetch(i + kAhead);
    src.load(i, &dw, wv);
    rows_terms<DT, R>(x, m, off, blocks, i, static_cast<int>(i % 8), dw, wv, acc);
  }
  for (int r = 0; r < R; ++r) store_total(acc[r], y + (m + r) * ldy);
}

// Two activation rows: their sixteen accumulators fit in registers, with the block loop unrolled
// by eight so that every accumulator index is a constant. On weights streamed from memory this
// measured ~15 % faster than tile16<DT, 2> (1 thread, 2048 x 5632 grouped Q8_0: 222 against 262
// us a row), in cache the same.
template <DType DT, class Source>
void tile16_pair(const QuantRowsView& x, int64_t m, const int32_t* off, const Source& src,
                 int64_t blocks, float* y, int64_t ldy) {
  __m512 acc[2][8];
  for (int r = 0; r < 2; ++r)
    for (int j = 0; j < 8; ++j) acc[r][j] = _mm512_setzero_ps();
  auto block = [&](int64_t i, int j) __attribute__((always_inline)) {
    __m512 dw;
    __m512i wv[8];
    src.load(i, &dw, wv);
    rows_terms<DT, 2>(x, m, off, blocks, i, j, dw, wv, acc);
  };
  int64_t i0 = 0;
  for (; i0 + 8 <= blocks; i0 += 8) {
#pragma GCC unroll 8
    for (int j = 0; j < 8; ++j) block(i0 + j, j);
  }
  // The last blocks (fewer than 8) with constant j as well, each behind its own test.
#pragma GCC unroll 8
  for (int j = 0; j < 7; ++j)
    if (i0 + j < blocks) block(i0 + j, j);
  for (int r = 0; r < 2; ++r) store_total(acc[r], y + (m + r) * ldy);
}

// tile16<DT, rows> for a run-time rows in 2 .. kRowChunk.
template <DType DT, class Source, int R = kRowChunk>
void tile16_rows(const QuantRowsView& x, int64_t m, int64_t rows, const int32_t* off,
                 const Source& src, int64_t blocks, float* y, int64_t ldy) {
  if constexpr (R > 2) {
    if (rows < R) return tile16_rows<DT, Source, R - 1>(x, m, rows, off, src, blocks, y, ldy);
    tile16<DT, R>(x, m, off, src, blocks, y, ldy);
  } else {
    tile16_pair<DT>(x, m, off, src, blocks, y, ldy);
  }
}

// Rows m0 .. m1 - 1 against one group of sixteen weight rows: one row alone takes the one-row
// tile; more are cut into near-equal chunks of at most kRowChunk (9 rows: 5 + 4, not 8 + 1).
template <DType DT, class Source>
void rows_of_group(const QuantRowsView& x, const int32_t* off, const Source& src, int64_t blocks,
                   float* y, int64_t ldy, int64_t m0, int64_t m1) {
  const int64_t rows = m1 - m0;
  if (rows == 1) return tile16_one_row<DT>(x, m0, src, blocks, y, ldy);
  const int64_t chunks = (rows + kRowChunk - 1) / kRowChunk;
  int64_t m = m0;
  for (int64_t c = 0; c < chunks; ++c) {
    const int64_t n = (m1 - m) / (chunks - c);  // the rest shared evenly
    tile16_rows<DT>(x, m, n, off + (m - m0) * blocks, src, blocks, y, ldy);
    m += n;
  }
}

template <DType DT>
int64_t range16(const QuantRowsView& x, const void* w, float* y, int64_t ldy, int64_t m0,
                int64_t m1, int64_t n0, int64_t n1) {
  const int64_t blocks = x.cols / 32;
  const size_t rb = dtype_bytes(DT, x.cols);
  const char* wc = static_cast<const char*>(w);
  thread_local std::vector<int32_t> off;
  if (m1 - m0 > 1) start_values<DT>(x, m0, m1, blocks, &off);
  int64_t n = n0;
  for (; n + 16 <= n1; n += 16)
    rows_of_group<DT>(x, off.data(), RowLayoutSource<DT>(wc + static_cast<size_t>(n) * rb, rb),
                      blocks, y + n, ldy, m0, m1);
  return n;
}

template <DType DT>
void grouped_range(const QuantRowsView& x, const void* w, float* y, int64_t ldy, int64_t m0,
                   int64_t m1, int64_t n0, int64_t n1) {
  const int64_t blocks = x.cols / 32;
  const size_t rb = dtype_bytes(DT, x.cols);
  const char* wc = static_cast<const char*>(w);
  thread_local std::vector<int32_t> off;
  if (m1 - m0 > 1) start_values<DT>(x, m0, m1, blocks, &off);
  for (int64_t n = n0; n < n1; n += 16)
    rows_of_group<DT>(x, off.data(), GroupedSource<DT>{wc + static_cast<size_t>(n) * rb}, blocks,
                      y + n, ldy, m0, m1);
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

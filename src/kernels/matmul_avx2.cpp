// AVX2 matmul micro-kernels (compiled with -mavx2 -mfma -mf16c; reached only after cpu_supports()).
//
// Reduction order of one output y[m, n] (the batch-invariance contract): a single 8-lane
// accumulator starts at zero and takes one FMA per 8 consecutive k (bf16 widened by a shift, f16 by
// vcvtph2ps, both exact); the last K % 8 elements are copied into zero-padded 8-float buffers and
// take one more FMA; then the fixed horizontal sum hsum(). Tiles of R rows x C columns run R*C such
// accumulators side by side, so every tile shape gives the same bits for a given (m, n), and each
// weight vector is loaded once per tile and used for all R rows.
//
// Activations stay f32 (no bf16 dot-product instructions).
//
// Nothing here may call an inline function from a shared header (see matmul_internal.h).
#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "kernels/matmul_internal.h"

namespace eagle2::detail {
namespace {

template <DType DT>
inline __m256 widen(__m128i h) {
  if constexpr (DT == DType::F16) {
    return _mm256_cvtph_ps(h);
  } else {
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
  }
}

template <DType DT>
inline __m256 load_w(const char* row, int64_t k) {
  if constexpr (DT == DType::F32) {
    return _mm256_loadu_ps(reinterpret_cast<const float*>(row) + k);
  } else {
    return widen<DT>(_mm_loadu_si128(
        reinterpret_cast<const __m128i*>(reinterpret_cast<const uint16_t*>(row) + k)));
  }
}

// The last n < 8 elements, zero-filled (AVX2 has no masked 16-bit loads).
template <DType DT>
inline __m256 load_w_partial(const char* row, int64_t k, int64_t n) {
  if constexpr (DT == DType::F32) {
    alignas(32) float buf[8] = {};
    std::memcpy(buf, reinterpret_cast<const float*>(row) + k, static_cast<size_t>(n) * 4);
    return _mm256_load_ps(buf);
  } else {
    alignas(16) uint16_t buf[8] = {};
    std::memcpy(buf, reinterpret_cast<const uint16_t*>(row) + k, static_cast<size_t>(n) * 2);
    return widen<DT>(_mm_load_si128(reinterpret_cast<const __m128i*>(buf)));
  }
}

inline __m256 load_x_partial(const float* x, int64_t n) {
  alignas(32) float buf[8] = {};
  std::memcpy(buf, x, static_cast<size_t>(n) * 4);
  return _mm256_load_ps(buf);
}

// Fixed pairwise tree: halves, quarters, ..., so the result never depends on the compiler's choice
// of a reduction sequence.
inline float hsum(__m256 v) {
  const __m128 s4 = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  const __m128 s2 = _mm_add_ps(s4, _mm_movehl_ps(s4, s4));
  const __m128 s1 = _mm_add_ss(s2, _mm_movehdup_ps(s2));
  return _mm_cvtss_f32(s1);
}

constexpr int dsize(DType dt) {
  return dt == DType::F32 ? 4 : 2;
}

// R rows of x (stride ldx) against C rows of w (stride K elements), full K.
template <DType DT, int R, int C>
inline void tile(const float* x, int64_t ldx, const char* w, int64_t K, float* y, int64_t ldy) {
  const int64_t ldw = K * dsize(DT);
  __m256 acc[R][C];
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) acc[r][c] = _mm256_setzero_ps();
  int64_t k = 0;
  for (; k + 8 <= K; k += 8) {
    // Keep whichever operand set is smaller live in registers (16 ymm in all).
    if constexpr (R <= 2) {
      __m256 xv[R];
      for (int r = 0; r < R; ++r) xv[r] = _mm256_loadu_ps(x + r * ldx + k);
      for (int c = 0; c < C; ++c) {
        const __m256 wv = load_w<DT>(w + c * ldw, k);
        for (int r = 0; r < R; ++r) acc[r][c] = _mm256_fmadd_ps(xv[r], wv, acc[r][c]);
      }
    } else {
      __m256 wv[C];
      for (int c = 0; c < C; ++c) wv[c] = load_w<DT>(w + c * ldw, k);
      for (int r = 0; r < R; ++r) {
        const __m256 xv = _mm256_loadu_ps(x + r * ldx + k);
        for (int c = 0; c < C; ++c) acc[r][c] = _mm256_fmadd_ps(xv, wv[c], acc[r][c]);
      }
    }
  }
  if (k < K) {
    __m256 wv[C];
    for (int c = 0; c < C; ++c) wv[c] = load_w_partial<DT>(w + c * ldw, k, K - k);
    for (int r = 0; r < R; ++r) {
      const __m256 xv = load_x_partial(x + r * ldx + k, K - k);
      for (int c = 0; c < C; ++c) acc[r][c] = _mm256_fmadd_ps(xv, wv[c], acc[r][c]);
    }
  }
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) y[r * ldy + c] = hsum(acc[r][c]);
}

// Columns per tile for a group of R rows.
// - kWide: as many columns as 16 ymm registers allow, R*C accumulators plus either the R x vectors
//   (R <= 2) or the C weight vectors and one x vector (R >= 3) of one k step. Several weight rows
//   are read side by side, each weight vector used for all R rows.
// - kOneColumn (3 to 8 rows): one weight row per tile, so consecutive tiles read W in address
//   order. Used for a group that reads W once (at most 8 rows) when a weight row is at most
//   kShortRowBytes. On a Zen 3 (bench_kernels, bf16 768 x 512 and 4096 x 512) the wide tiles took
//   1.25-1.49x as long as one column at 3-6 rows; with 4-8 KB rows (2048 x 2048, 11008 x 4096, 4
//   rows) one column took 1.26-1.43x as long. Probably the prefetchers: a 1 KB row is 16 cache
//   lines, a short stream to follow several of side by side, while long streams prefetch well and
//   the wide tile's independent accumulators and shared x loads then win (inferred, not counted).
//   The limit rests on 4 rows (at 3 KB, 6 rows still ran faster in one column) and on bf16; f32
//   and f16 rows are taken by their bytes. One or two rows keep kWide: one column would make a
//   single FMA chain, and end to end (a head's draft steps, chain drafting) it was slower
//   although bench_kernels with W in L3 did not show it. docs/bench/avx2-onecolumn/ has the runs.
enum class TileShape { kWide, kOneColumn };
constexpr int64_t kShortRowBytes = 2048;

template <int R, TileShape Shape>
constexpr int tile_cols() {
  if constexpr (R == 1) return 8;
  if constexpr (R == 2) return 4;
  if constexpr (Shape == TileShape::kOneColumn) return 1;
  return R <= 4 ? 3 : R <= 6 ? 2 : 1;
}

template <DType DT, int R, int C>
inline void tail_cols(const float* x, int64_t ldx, const char* w, int64_t K, float* y, int64_t ldy,
                      int64_t n_left) {
  if constexpr (C > 0) {
    if (n_left == C) {
      tile<DT, R, C>(x, ldx, w, K, y, ldy);
    } else {
      tail_cols<DT, R, C - 1>(x, ldx, w, K, y, ldy, n_left);
    }
  }
}

template <DType DT, int R, TileShape Shape>
void row_group(const float* x, int64_t ldx, const char* w, int64_t K, float* y, int64_t ldy,
               int64_t n0, int64_t n1) {
  constexpr int C = tile_cols<R, Shape>();
  const int64_t ldw = K * dsize(DT);
  int64_t n = n0;
  for (; n + C <= n1; n += C) tile<DT, R, C>(x, ldx, w + n * ldw, K, y + n, ldy);
  if (n < n1) tail_cols<DT, R, C - 1>(x, ldx, w + n * ldw, K, y + n, ldy, n1 - n);
}

// One group of `rows` (1..8) rows of x over columns [n0, n1).
template <DType DT, TileShape Shape>
void rows_group(int64_t rows, const float* x, int64_t ldx, const char* w, int64_t K, float* y,
                int64_t ldy, int64_t n0, int64_t n1) {
  using Group =
      void (*)(const float*, int64_t, const char*, int64_t, float*, int64_t, int64_t, int64_t);
  static constexpr Group kGroups[8] = {row_group<DT, 1, Shape>, row_group<DT, 2, Shape>,
                                       row_group<DT, 3, Shape>, row_group<DT, 4, Shape>,
                                       row_group<DT, 5, Shape>, row_group<DT, 6, Shape>,
                                       row_group<DT, 7, Shape>, row_group<DT, 8, Shape>};
  kGroups[rows - 1](x, ldx, w, K, y, ldy, n0, n1);
}

template <DType DT>
void range(const float* x, int64_t ldx, const void* w, int64_t K, float* y, int64_t ldy, int64_t m0,
           int64_t m1, int64_t n0, int64_t n1) {
  const char* wb = static_cast<const char*>(w);
  // Up to 8 rows (decoding, a small verify tree, a draft level): one pass over W with all rows,
  // each weight vector widened once for all of them; in 4-row groups the second group would widen
  // and read W again. More rows: 4-row groups, the denser tile, with W from L2 after the first
  // (matmul.cpp sizes it).
  if (m1 <= m0) return;
  if (m1 - m0 <= 8) {
    const bool short_rows = K * dsize(DT) <= kShortRowBytes;
    const auto group =
        short_rows ? rows_group<DT, TileShape::kOneColumn> : rows_group<DT, TileShape::kWide>;
    group(m1 - m0, x + m0 * ldx, ldx, wb, K, y + m0 * ldy, ldy, n0, n1);
    return;
  }
  int64_t m = m0;
  for (; m + 4 <= m1; m += 4)
    row_group<DT, 4, TileShape::kWide>(x + m * ldx, ldx, wb, K, y + m * ldy, ldy, n0, n1);
  if (m < m1)
    rows_group<DT, TileShape::kWide>(m1 - m, x + m * ldx, ldx, wb, K, y + m * ldy, ldy, n0, n1);
}

}  // namespace

void matmul_range_avx2(DType dt, const float* x, int64_t ldx, const void* w, int64_t K, float* y,
                       int64_t ldy, int64_t m0, int64_t m1, int64_t n0, int64_t n1) {
  switch (dt) {
    case DType::F32:
      range<DType::F32>(x, ldx, w, K, y, ldy, m0, m1, n0, n1);
      break;
    case DType::F16:
      range<DType::F16>(x, ldx, w, K, y, ldy, m0, m1, n0, n1);
      break;
    case DType::BF16:
      range<DType::BF16>(x, ldx, w, K, y, ldy, m0, m1, n0, n1);
      break;
    default:
      break;  // block types take the quantized kernels (matmul.cpp dispatches them)
  }
}

float dot_f32_avx2(const float* a, const float* b, int64_t n) {
  float out;
  tile<DType::F32, 1, 1>(a, 0, reinterpret_cast<const char*>(b), n, &out, 0);
  return out;
}

}  // namespace eagle2::detail

// AVX-512 matmul micro-kernels (compiled with -mavx512*; reached only after cpu_supports()).
//
// Reduction order of one output y[m, n] (the batch-invariance contract): a single 16-lane
// accumulator starts at zero and takes one FMA per 16 consecutive k (x and w loaded as 16 floats;
// bf16 widened by a shift, f16 by vcvtph2ps, both exact); the last K % 16 elements are handled by
// one more FMA with zero-filled masked loads; then the fixed horizontal sum hsum(). Tiles of R rows
// x C columns just run R*C such accumulators side by side, so every tile shape (including the
// remainder tiles) produces the same bits for a given (m, n). A tile loads each weight vector
// once and uses it for all R rows, which is the point of batching rows.
//
// bf16 weights take the second kernel below: the activations arrive already rounded to bf16
// (matmul.h) and vdpbf16ps multiplies pairs of them with pairs of weights, exactly, accumulating
// in f32. Its order for one (m, n): one accumulator, one vdpbf16ps per 32 consecutive k (the tail
// zero-filled), then hsum(): again fixed by K alone.
//
// Nothing here may call an inline function from a shared header (see matmul_internal.h), except
// avx512_sums.h, which only AVX-512 files include and which gives each of them its own copy.
#include <cstdint>

#include "kernels/avx512_sums.h"  // also <immintrin.h>, with GCC 12's false warnings silenced
#include "kernels/matmul_internal.h"

namespace eagle2::detail {
namespace {

template <DType DT>
inline __m512 widen(__m256i h) {
  if constexpr (DT == DType::F16) {
    return _mm512_cvtph_ps(h);
  } else {
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
  }
}

template <DType DT>
inline __m512 load_w(const char* row, int64_t k) {
  if constexpr (DT == DType::F32) {
    return _mm512_loadu_ps(reinterpret_cast<const float*>(row) + k);
  } else {
    return widen<DT>(_mm256_loadu_si256(
        reinterpret_cast<const __m256i*>(reinterpret_cast<const uint16_t*>(row) + k)));
  }
}

template <DType DT>
inline __m512 load_w_masked(const char* row, int64_t k, __mmask16 mask) {
  if constexpr (DT == DType::F32) {
    return _mm512_maskz_loadu_ps(mask, reinterpret_cast<const float*>(row) + k);
  } else {
    return widen<DT>(_mm256_maskz_loadu_epi16(mask, reinterpret_cast<const uint16_t*>(row) + k));
  }
}

constexpr int dsize(DType dt) {
  return dt == DType::F32 ? 4 : 2;
}

// R rows of x (stride ldx) against C rows of w (stride K elements), full K.
template <DType DT, int R, int C>
inline void tile(const float* x, int64_t ldx, const char* w, int64_t K, float* y, int64_t ldy) {
  const int64_t ldw = K * dsize(DT);
  __m512 acc[R][C];
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) acc[r][c] = _mm512_setzero_ps();
  int64_t k = 0;
  for (; k + 16 <= K; k += 16) {
    __m512 xv[R];
    for (int r = 0; r < R; ++r) xv[r] = _mm512_loadu_ps(x + r * ldx + k);
    for (int c = 0; c < C; ++c) {
      const __m512 wv = load_w<DT>(w + c * ldw, k);
      for (int r = 0; r < R; ++r) acc[r][c] = _mm512_fmadd_ps(xv[r], wv, acc[r][c]);
    }
  }
  if (k < K) {
    const __mmask16 mask = static_cast<__mmask16>((1u << (K - k)) - 1u);
    __m512 wv[C];
    for (int c = 0; c < C; ++c) wv[c] = load_w_masked<DT>(w + c * ldw, k, mask);
    for (int r = 0; r < R; ++r) {
      const __m512 xv = _mm512_maskz_loadu_ps(mask, x + r * ldx + k);
      for (int c = 0; c < C; ++c) acc[r][c] = _mm512_fmadd_ps(xv, wv[c], acc[r][c]);
    }
  }
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) y[r * ldy + c] = hsum(acc[r][c]);
}

// Columns per tile for a group of R rows: 32 zmm registers hold R*C accumulators, C weight vectors
// and an x vector. Few rows (decode) want many columns for independent FMA chains and many
// concurrent weight streams; four rows x four columns gives 16 chains and reads 8 vectors per 16
// FMAs (about 95% of the FMA peak on Zen 4 with W in L2).
//
// Cutting K into L1-sized chunks (saving the accumulators between chunks, which would be exact)
// was measured and rejected: it breaks the long sequential weight streams the hardware prefetcher
// needs and cost up to 40% for 2-16 rows on a 4096x11008 bf16 matrix.
template <int R>
constexpr int tile_cols() {
  return R <= 3 ? 8 : R <= 4 ? 6 : 2;
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

template <DType DT, int R>
void row_group(const float* x, int64_t ldx, const char* w, int64_t K, float* y, int64_t ldy,
               int64_t n0, int64_t n1) {
  constexpr int C = tile_cols<R>();
  const int64_t ldw = K * dsize(DT);
  int64_t n = n0;
  for (; n + C <= n1; n += C) tile<DT, R, C>(x, ldx, w + n * ldw, K, y + n, ldy);
  if (n < n1) tail_cols<DT, R, C - 1>(x, ldx, w + n * ldw, K, y + n, ldy, n1 - n);
}

template <DType DT>
void range(const float* x, int64_t ldx, const void* w, int64_t K, float* y, int64_t ldy, int64_t m0,
           int64_t m1, int64_t n0, int64_t n1) {
  const char* wb = static_cast<const char*>(w);
  int64_t m = m0;
  for (; m + 4 <= m1; m += 4) row_group<DT, 4>(x + m * ldx, ldx, wb, K, y + m * ldy, ldy, n0, n1);
  switch (m1 - m) {
    case 3:
      row_group<DT, 3>(x + m * ldx, ldx, wb, K, y + m * ldy, ldy, n0, n1);
      break;
    case 2:
      row_group<DT, 2>(x + m * ldx, ldx, wb, K, y + m * ldy, ldy, n0, n1);
      break;
    case 1:
      row_group<DT, 1>(x + m * ldx, ldx, wb, K, y + m * ldy, ldy, n0, n1);
      break;
    default:
      break;
  }
}

// The bf16-dot tile: R rows of bf16 activations against C bf16 weight rows.
template <int R, int C>
inline void tile_bf16dot(const uint16_t* x, int64_t ldx, const uint16_t* w, int64_t K, float* y,
                         int64_t ldy) {
  __m512 acc[R][C];
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) acc[r][c] = _mm512_setzero_ps();
  int64_t k = 0;
  for (; k + 32 <= K; k += 32) {
    __m512bh xv[R];
    for (int r = 0; r < R; ++r) xv[r] = (__m512bh)_mm512_loadu_si512(x + r * ldx + k);
    for (int c = 0; c < C; ++c) {
      const __m512bh wv = (__m512bh)_mm512_loadu_si512(w + c * K + k);
      // The same place four tiles ahead: short rows (K = 512 is 16 cache lines) end before the
      // hardware prefetcher has learned their streams.
      _mm_prefetch(reinterpret_cast<const char*>(w + (4 * C + c) * K + k), _MM_HINT_T0);
      for (int r = 0; r < R; ++r) acc[r][c] = _mm512_dpbf16_ps(acc[r][c], xv[r], wv);
    }
  }
  if (k < K) {
    const __mmask32 mask = static_cast<__mmask32>((uint64_t{1} << (K - k)) - 1u);
    __m512bh wv[C];
    for (int c = 0; c < C; ++c) wv[c] = (__m512bh)_mm512_maskz_loadu_epi16(mask, w + c * K + k);
    for (int r = 0; r < R; ++r) {
      const __m512bh xv = (__m512bh)_mm512_maskz_loadu_epi16(mask, x + r * ldx + k);
      for (int c = 0; c < C; ++c) acc[r][c] = _mm512_dpbf16_ps(acc[r][c], xv, wv[c]);
    }
  }
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) y[r * ldy + c] = hsum(acc[r][c]);
}

template <int R, int C>
inline void tail_cols_bf16dot(const uint16_t* x, int64_t ldx, const uint16_t* w, int64_t K,
                              float* y, int64_t ldy, int64_t n_left) {
  if constexpr (C > 0) {
    if (n_left == C) {
      tile_bf16dot<R, C>(x, ldx, w, K, y, ldy);
    } else {
      tail_cols_bf16dot<R, C - 1>(x, ldx, w, K, y, ldy, n_left);
    }
  }
}

template <int R>
void row_group_bf16dot(const uint16_t* x, int64_t ldx, const uint16_t* w, int64_t K, float* y,
                       int64_t ldy, int64_t n0, int64_t n1) {
  constexpr int C = tile_cols<R>();
  int64_t n = n0;
  for (; n + C <= n1; n += C) tile_bf16dot<R, C>(x, ldx, w + n * K, K, y + n, ldy);
  if (n < n1) tail_cols_bf16dot<R, C - 1>(x, ldx, w + n * K, K, y + n, ldy, n1 - n);
}

}  // namespace

void matmul_range_avx512_bf16dot(const uint16_t* xb, int64_t ldx, const void* w, int64_t K,
                                 float* y, int64_t ldy, int64_t m0, int64_t m1, int64_t n0,
                                 int64_t n1) {
  const auto* wb = static_cast<const uint16_t*>(w);
  int64_t m = m0;
  // 5 to 8 rows (a small verify tree): one pass over W with all rows (two columns per tile, as
  // registers allow), so the weights stream from memory once while the products are computed;
  // in 4-row groups the second group would wait on a second pass. More rows: 4-row groups, the
  // denser tile, with W from L2 after the first.
  const int64_t rows = m1 - m0;
  if (rows >= 5 && rows <= 8) {
    switch (rows) {
      case 5:
        row_group_bf16dot<5>(xb + m * ldx, ldx, wb, K, y + m * ldy, ldy, n0, n1);
        break;
      case 6:
        row_group_bf16dot<6>(xb + m * ldx, ldx, wb, K, y + m * ldy, ldy, n0, n1);
        break;
      case 7:
        row_group_bf16dot<7>(xb + m * ldx, ldx, wb, K, y + m * ldy, ldy, n0, n1);
        break;
      default:
        row_group_bf16dot<8>(xb + m * ldx, ldx, wb, K, y + m * ldy, ldy, n0, n1);
        break;
    }
    return;
  }
  for (; m + 4 <= m1; m += 4)
    row_group_bf16dot<4>(xb + m * ldx, ldx, wb, K, y + m * ldy, ldy, n0, n1);
  switch (m1 - m) {
    case 3:
      row_group_bf16dot<3>(xb + m * ldx, ldx, wb, K, y + m * ldy, ldy, n0, n1);
      break;
    case 2:
      row_group_bf16dot<2>(xb + m * ldx, ldx, wb, K, y + m * ldy, ldy, n0, n1);
      break;
    case 1:
      row_group_bf16dot<1>(xb + m * ldx, ldx, wb, K, y + m * ldy, ldy, n0, n1);
      break;
    default:
      break;
  }
}

void matmul_range_avx512(DType dt, const float* x, int64_t ldx, const void* w, int64_t K, float* y,
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

float dot_f32_avx512(const float* a, const float* b, int64_t n) {
  float out;
  tile<DType::F32, 1, 1>(a, 0, reinterpret_cast<const char*>(b), n, &out, 0);
  return out;
}

}  // namespace eagle2::detail

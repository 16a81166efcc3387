// AVX2 kernel for Q4_K/Q5_K/Q6_K weights and several activation rows (verification batches,
// prompts), the AVX2 twin of quant_kcols16_avx512.cpp: eight weight rows (output columns) sit in
// the eight int32 lanes of a register, so each superblock is transposed and unpacked once per chunk
// of up to kRowChunk activation rows, and the scale multiplies, the float steps and the final
// pairwise total run eight columns at a time, with no horizontal sums (the per-column kernel of
// quant_kmatmul_avx2.cpp redoes a superblock's tail for every row and column).
//
// The order of quant_matmul.h is kept exactly: per superblock an exact int32 s (and mins for
// Q4_K) per (row, column), one f32 term with the reference's operations (mul, mul, [sub], no FMA)
// added into accumulator i % 8, then ((a0 + a1) + (a2 + a3)) + ((a4 + a5) + (a6 + a7)). The
// integer sums:
//   Q4_K s = sum_j sc_j * d_j with d_j the 32 products of sub-block j. maddubs of a code dword
//       (0..15) against an activation dword (-127..127) gives two int16 pair sums per column, each
//       at most 2 * 15 * 127 = 3810, so the eight dwords of a sub-block add up in int16 (16
//       products per half, |sum| <= 30480 < 32767, exact), and one madd with (sc_j, sc_j) per
//       column gives sc_j * d_j in int32: no 32-bit multiply.
//   Q5_K as Q4_K with codes 0..31: a pair is at most 2 * 31 * 127 = 7874, so four dwords add up
//       in int16 (31496) before each madd.
//   Q4_K mins = sum_j m_j * X_j as int16 pairs (m_j, m_j+2) . (X_j, X_j+2), X_j the sub-block's
//       activation sum (|X_j| <= 32 * 127).
//   Q6_K s = sum_g sc_g * d_g - 32 * sum_g sc_g * X_g over the sixteen 16-element groups, d_g over
//       the codes 0..63. A maddubs pair is at most 2 * 63 * 127 = 16002, so only two dwords of a
//       group add up in int16 (|sum| <= 32004); each such half takes one madd with (sc_g, sc_g)
//       (sc_g any int8). The offset sum as int16 pairs (-32 sc_g, -32 sc_g+2) . (X_g, X_g+2)
//       (-32 sc_g is -4064..4096, |X_g| <= 16 * 127).
// Integer addition is associative and nothing overflows, so the totals are the reference's.
#include <immintrin.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "core/quant_blocks.h"
#include "kernels/quant_internal.h"

namespace eagle2::detail {
namespace {

// Activation rows that share one unpacked superblock (their accumulators, 8 vectors a row, stay
// in L1 beside the unpacked weights).
constexpr int64_t kRowChunk = 16;

inline __m256i load256(const char* p) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
}
inline __m128i load128(const char* p) {
  return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
}

// a[k] = [dwords 0-3 of row k | of row k + 4] (k = 0..3) -> w[t] = [dword t of rows 0-3 | of
// rows 4-7] (t = 0..3): a 4 x 4 transpose inside each 128-bit lane.
inline void transpose4_lanes(const __m256i a[4], __m256i w[4]) {
  const __m256i t0 = _mm256_unpacklo_epi32(a[0], a[1]), t1 = _mm256_unpackhi_epi32(a[0], a[1]);
  const __m256i t2 = _mm256_unpacklo_epi32(a[2], a[3]), t3 = _mm256_unpackhi_epi32(a[2], a[3]);
  w[0] = _mm256_unpacklo_epi64(t0, t2);
  w[1] = _mm256_unpackhi_epi64(t0, t2);
  w[2] = _mm256_unpacklo_epi64(t1, t3);
  w[3] = _mm256_unpackhi_epi64(t1, t3);
}

// w[t] (t = 0..3) = dword t of the 16 bytes at p + n * rb, for n = 0..7 in lane n.
inline void transpose8x4(const char* p, size_t rb, __m256i w[4]) {
  __m256i a[4];
  for (int k = 0; k < 4; ++k)
    a[k] = _mm256_inserti128_si256(_mm256_castsi128_si256(load128(p + k * rb)),
                                   load128(p + (k + 4) * rb), 1);
  transpose4_lanes(a, w);
}

// w[t] (t = 0..7) = dword t of the 32 bytes at p + n * rb, for n = 0..7 in lane n.
inline void transpose8x8(const char* p, size_t rb, __m256i w[8]) {
  // lo[k] = [dwords 0-3 of row k | of row k + 4], hi[k] the same for dwords 4-7.
  __m256i lo[4], hi[4];
  for (int k = 0; k < 4; ++k) {
    const __m256i a = load256(p + k * rb), b = load256(p + (k + 4) * rb);
    lo[k] = _mm256_permute2x128_si256(a, b, 0x20);
    hi[k] = _mm256_permute2x128_si256(a, b, 0x31);
  }
  transpose4_lanes(lo, w);
  transpose4_lanes(hi, w + 4);
}

inline int32_t pack16(int32_t lo, int32_t hi) {
  return static_cast<int32_t>((static_cast<uint32_t>(hi) << 16) |
                              (static_cast<uint32_t>(lo) & 0xFFFFu));
}

// One superblock of eight columns, unpacked: codes[8 * j + t] = dword t (elements 4t .. 4t + 3)
// of sub-block j (Q4_K: 32 elements, codes 0..15) or codes[4 * g + u] of group g (Q6_K: 16
// elements, codes 0..63), one column per lane, as unsigned bytes; scale[j] / scale[g] = (sc, sc)
// as int16 per lane; pairs: int16 pairs for the madd against act_pairs()'s (Q4_K mins (m0, m2),
// (m1, m3), (m4, m6), (m5, m7); Q6_K (-32 sc_4k, -32 sc_4k+2), (-32 sc_4k+1, -32 sc_4k+3)); dw
// (and dmin) the f16 scales widened.
struct Unpacked8 {
  __m256i codes[64];
  __m256i scale[16];
  __m256i pairs[8];
  __m256 dw, dmin;
};

// Q5_K is Q4_K's block with a fifth code bit per element (core/quant_codes.h): the same d, dmin
// and twelve scale bytes, then qh[32] at byte 16 and the nibbles at 48; element 64c + l (l < 32)
// takes bit 2c of qh[l], element 64c + 32 + l bit 2c + 1.
constexpr size_t kQ5QhAt = 16, kQ5QsAt = 48;
static_assert(offsetof(BlockQ5_K, qh) == kQ5QhAt && offsetof(BlockQ5_K, qs) == kQ5QsAt);

// Bit j of every byte of v moved to bit 4 (the 16-bit shifts carry bits across bytes only below
// bit 4 or above it, so the mask keeps each byte's own bit).
inline __m256i fifth_bit8(__m256i v, int j) {
  const __m256i m16 = _mm256_set1_epi8(0x10);
  return j <= 4 ? _mm256_and_si256(_mm256_slli_epi16(v, 4 - j), m16)
                : _mm256_and_si256(_mm256_srli_epi16(v, j - 4), m16);
}

template <bool five>
void unpack_q4k(const char* blk, size_t rb, Unpacked8* u) {
  // Bytes 0-15 of each block: [d | dmin], then scales bytes 0-3, 4-7, 8-11 (quant_ktiles.h's
  // q4k_scales_mins gives the packing), one column per lane.
  __m256i h[4];
  transpose8x4(blk, rb, h);
  const __m256i D = h[0], A = h[1], B = h[2], C = h[3];
  // [d0-3 dmin0-3 | d4-7 dmin4-7] as int16 (packus keeps values <= 0xFFFF), then d, dmin apart.
  const __m256i dd = _mm256_permute4x64_epi64(
      _mm256_packus_epi32(_mm256_and_si256(D, _mm256_set1_epi32(0xFFFF)), _mm256_srli_epi32(D, 16)),
      0xD8);
  u->dw = _mm256_cvtph_ps(_mm256_castsi256_si128(dd));
  u->dmin = _mm256_cvtph_ps(_mm256_extracti128_si256(dd, 1));
  const __m256i m63 = _mm256_set1_epi8(0x3F), m15 = _mm256_set1_epi8(0x0F),
                m48 = _mm256_set1_epi8(0x30);
  const __m256i sc03 = _mm256_and_si256(A, m63), mn03 = _mm256_and_si256(B, m63);
  const __m256i sc47 =
      _mm256_or_si256(_mm256_and_si256(C, m15), _mm256_and_si256(_mm256_srli_epi32(A, 2), m48));
  const __m256i mn47 = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi32(C, 4), m15),
                                       _mm256_and_si256(_mm256_srli_epi32(B, 2), m48));
  const __m256i byte0 = _mm256_set1_epi32(0xFF), even16 = _mm256_set1_epi32(0x00FF00FF);
  for (int j = 0; j < 4; ++j) {
    const __m256i s0 = _mm256_and_si256(_mm256_srli_epi32(sc03, 8 * j), byte0);
    const __m256i s4 = _mm256_and_si256(_mm256_srli_epi32(sc47, 8 * j), byte0);
    u->scale[j] = _mm256_or_si256(s0, _mm256_slli_epi32(s0, 16));
    u->scale[4 + j] = _mm256_or_si256(s4, _mm256_slli_epi32(s4, 16));
  }
  u->pairs[0] = _mm256_and_si256(mn03, even16);                        // (m0, m2)
  u->pairs[1] = _mm256_and_si256(_mm256_srli_epi32(mn03, 8), even16);  // (m1, m3)
  u->pairs[2] = _mm256_and_si256(mn47, even16);                        // (m4, m6)
  u->pairs[3] = _mm256_and_si256(_mm256_srli_epi32(mn47, 8), even16);  // (m5, m7)
  // Codes: chunk c (qs bytes 32c ..) holds sub-block 2c in its low nibbles, 2c + 1 in its high.
  const char* qs = blk + (five ? kQ5QsAt : 16);
  __m256i qh[8];
  if constexpr (five) transpose8x8(blk + kQ5QhAt, rb, qh);
  for (int c = 0; c < 4; ++c) {
    __m256i w[8];
    transpose8x8(qs + 32 * c, rb, w);
    for (int t = 0; t < 8; ++t) {
      __m256i lo = _mm256_and_si256(w[t], m15),
              hi = _mm256_and_si256(_mm256_srli_epi16(w[t], 4), m15);
      if constexpr (five) {
        lo = _mm256_or_si256(lo, fifth_bit8(qh[t], 2 * c));
        hi = _mm256_or_si256(hi, fifth_bit8(qh[t], 2 * c + 1));
      }
      u->codes[8 * (2 * c) + t] = lo;
      u->codes[8 * (2 * c + 1) + t] = hi;
    }
  }
}

// Byte offsets of BlockQ6_K's parts (core/quant_blocks.h).
constexpr size_t kQ6QhAt = 128, kQ6ScalesAt = 192, kQ6DAt = 208;
static_assert(offsetof(BlockQ6_K, qh) == kQ6QhAt && offsetof(BlockQ6_K, scales) == kQ6ScalesAt &&
              offsetof(BlockQ6_K, d) == kQ6DAt);

void unpack_q6k(const char* blk, size_t rb, Unpacked8* u) {
  // The sixteen int8 scales (dwords k: sc 4k .. 4k + 3), one column per lane.
  __m256i s[4];
  transpose8x4(blk + kQ6ScalesAt, rb, s);
  const __m256i low16 = _mm256_set1_epi32(0xFFFF), zero = _mm256_setzero_si256();
  for (int k = 0; k < 4; ++k) {
    for (int b = 0; b < 4; ++b) {
      const __m256i v = _mm256_srai_epi32(_mm256_slli_epi32(s[k], 24 - 8 * b), 24);
      u->scale[4 * k + b] = _mm256_or_si256(_mm256_and_si256(v, low16), _mm256_slli_epi32(v, 16));
    }
    // int16 pairs (sc 4k, sc 4k + 2) and (sc 4k + 1, sc 4k + 3), sign-extended, times -32.
    const __m256i even = _mm256_srai_epi16(_mm256_slli_epi16(s[k], 8), 8);
    const __m256i odd = _mm256_srai_epi16(s[k], 8);
    u->pairs[2 * k] = _mm256_sub_epi16(zero, _mm256_slli_epi16(even, 5));
    u->pairs[2 * k + 1] = _mm256_sub_epi16(zero, _mm256_slli_epi16(odd, 5));
  }
  // d: the f16 at byte 208 of each block, set lane by lane (no store-forwarding stall).
  uint16_t d[8];
  for (int n = 0; n < 8; ++n) std::memcpy(&d[n], blk + static_cast<size_t>(n) * rb + kQ6DAt, 2);
  u->dw = _mm256_cvtph_ps(_mm_setr_epi16(static_cast<int16_t>(d[0]), static_cast<int16_t>(d[1]),
                                         static_cast<int16_t>(d[2]), static_cast<int16_t>(d[3]),
                                         static_cast<int16_t>(d[4]), static_cast<int16_t>(d[5]),
                                         static_cast<int16_t>(d[6]), static_cast<int16_t>(d[7])));
  u->dmin = _mm256_setzero_ps();
  // Codes. Element 128h + 32p + l (l < 32): the low (p = 0, 1) or high (p = 2, 3) nibble of
  // ql[64h + 32 (p % 2) + l] with bits 2p, 2p + 1 of qh[32h + l] above it; dword t of part p is
  // dword t % 4 of group 8h + 2p + t / 4. The 16-bit shifts carry bits across bytes; the masks
  // keep only each byte's own.
  const __m256i m15 = _mm256_set1_epi8(0x0F), m48 = _mm256_set1_epi8(0x30);
  for (int hf = 0; hf < 2; ++hf) {
    __m256i lo[16], hi[8];
    transpose8x8(blk + 64 * hf, rb, lo);
    transpose8x8(blk + 64 * hf + 32, rb, lo + 8);
    transpose8x8(blk + kQ6QhAt + 32 * hf, rb, hi);
    for (int t = 0; t < 8; ++t) {
      const __m256i top[4] = {_mm256_slli_epi16(hi[t], 4), _mm256_slli_epi16(hi[t], 2), hi[t],
                              _mm256_srli_epi16(hi[t], 2)};
      const __m256i low[4] = {lo[t], lo[8 + t], _mm256_srli_epi16(lo[t], 4),
                              _mm256_srli_epi16(lo[8 + t], 4)};
      for (int p = 0; p < 4; ++p)
        u->codes[4 * (8 * hf + 2 * p + t / 4) + t % 4] =
            _mm256_or_si256(_mm256_and_si256(low[p], m15), _mm256_and_si256(top[p], m48));
    }
  }
}

// Per activation row and superblock, the dwords madd takes against Unpacked8::pairs:
// Q4_K (X_0, X_2), (X_1, X_3), (X_4, X_6), (X_5, X_7) with X_j the sum of sub-block j's 32 codes;
// Q6_K (X_4k, X_4k+2), (X_4k+1, X_4k+3) for k = 0..3 with X_g the sum of group g's 16.
void act_pairs(DType dt, const QuantRowsView& x, int64_t m, int64_t blocks, int32_t* out) {
  const int32_t* sums = x.sums + m * (x.cols / 16);
  for (int64_t i = 0; i < blocks; ++i, sums += 16, out += 8) {
    if (dt == DType::Q4_K || dt == DType::Q5_K) {
      int32_t X[8];
      for (int j = 0; j < 8; ++j) X[j] = sums[2 * j] + sums[2 * j + 1];
      out[0] = pack16(X[0], X[2]);
      out[1] = pack16(X[1], X[3]);
      out[2] = pack16(X[4], X[6]);
      out[3] = pack16(X[5], X[7]);
      out[4] = out[5] = out[6] = out[7] = 0;
    } else {
      for (int k = 0; k < 4; ++k) {
        out[2 * k] = pack16(sums[4 * k], sums[4 * k + 2]);
        out[2 * k + 1] = pack16(sums[4 * k + 1], sums[4 * k + 3]);
      }
    }
  }
}

inline __m256i bcast(const int8_t* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return _mm256_set1_epi32(v);
}

// Superblock i of R activation rows (codes xq[r], scales dx[r], pairs xp[r]) against the unpacked
// columns: the step-2 terms per column. Each code vector is loaded once for the R rows.
template <DType DT, int R>
__attribute__((always_inline)) inline void terms(const Unpacked8& u, const int8_t* const xq[R],
                                                 const float dx[R], const int32_t* const xp[R],
                                                 __m256 out[R]) {
  // Q4_K: eight sub-blocks of eight code dwords summed in int16 (Q5_K four at a time); Q6_K:
  // sixteen groups of four dwords, summed in int16 two at a time (the top of the file: bounds).
  constexpr bool q4k = DT == DType::Q4_K || DT == DType::Q5_K;  // one layout, Q5_K's codes 0..31
  constexpr int groups = q4k ? 8 : 16, dwords = 64 / groups;
  constexpr int per_madd = DT == DType::Q4_K ? 8 : DT == DType::Q5_K ? 4 : 2;
  __m256i s[R];
  for (int r = 0; r < R; ++r) s[r] = _mm256_setzero_si256();
  for (int g = 0; g < groups; ++g)
    for (int t0 = 0; t0 < dwords; t0 += per_madd) {
      __m256i h[R];  // int16 half sums of group g's dwords t0 .. t0 + per_madd - 1, per column
      for (int r = 0; r < R; ++r) h[r] = _mm256_setzero_si256();
      for (int t = t0; t < t0 + per_madd; ++t) {
        const __m256i c = u.codes[dwords * g + t];
        for (int r = 0; r < R; ++r)
          h[r] =
              _mm256_add_epi16(h[r], _mm256_maddubs_epi16(c, bcast(xq[r] + 4 * (dwords * g + t))));
      }
      for (int r = 0; r < R; ++r)
        s[r] = _mm256_add_epi32(s[r], _mm256_madd_epi16(h[r], u.scale[g]));
    }
  for (int r = 0; r < R; ++r) {
    const __m256 vdx = _mm256_set1_ps(dx[r]);
    if constexpr (q4k) {
      __m256i mins = _mm256_setzero_si256();
      for (int p = 0; p < 4; ++p)
        mins = _mm256_add_epi32(mins, _mm256_madd_epi16(u.pairs[p], _mm256_set1_epi32(xp[r][p])));
      const __m256 t = _mm256_mul_ps(_mm256_mul_ps(u.dw, vdx), _mm256_cvtepi32_ps(s[r]));
      out[r] =
          _mm256_sub_ps(t, _mm256_mul_ps(_mm256_mul_ps(u.dmin, vdx), _mm256_cvtepi32_ps(mins)));
    } else {
      __m256i v = s[r];
      for (int p = 0; p < 8; ++p)
        v = _mm256_add_epi32(v, _mm256_madd_epi16(u.pairs[p], _mm256_set1_epi32(xp[r][p])));
      out[r] = _mm256_mul_ps(_mm256_mul_ps(u.dw, vdx), _mm256_cvtepi32_ps(v));
    }
  }
}

// Rows mc + r0 .. mc + r0 + R - 1 of the chunk, superblock i: terms added into acc[r][i % 8].
template <DType DT, int R>
inline void rows_terms(const QuantRowsView& x, const Unpacked8& u, int64_t mc, int64_t r0,
                       int64_t m0, int64_t i, int64_t blocks, const int32_t* pairs,
                       __m256 (*acc)[8]) {
  const int8_t* xq[R];
  float dx[R];
  const int32_t* xp[R];
  for (int r = 0; r < R; ++r) {
    const int64_t m = mc + r0 + r;
    xq[r] = x.qs + m * x.cols + i * 256;
    dx[r] = x.scale[m * blocks + i];
    xp[r] = pairs + ((m - m0) * blocks + i) * 8;
  }
  __m256 t[R];
  terms<DT, R>(u, xq, dx, xp, t);
  for (int r = 0; r < R; ++r) acc[r0 + r][i % 8] = _mm256_add_ps(acc[r0 + r][i % 8], t[r]);
}

// Rows per tile (2 or 4): each unpacked code vector is used by R rows while it is in a register.
// Q6_K's sums keep fewer vectors live per row (the Q4_K tile has its mins besides), and its
// codes are read twice as often per product; four rows were as fast as two or faster (kbench).
template <DType DT>
constexpr int kTileRows = DT == DType::Q6_K ? 4 : 2;

template <DType DT>
int64_t cols8(const QuantRowsView& x, const char* w, float* y, int64_t ldy, int64_t m0, int64_t m1,
              int64_t n0, int64_t n1) {
  const int64_t K = x.cols, blocks = K / 256;
  const size_t rb = dtype_bytes(DT, K);
  constexpr size_t block_bytes = DT == DType::Q4_K   ? sizeof(BlockQ4_K)
                                 : DT == DType::Q5_K ? sizeof(BlockQ5_K)
                                                     : sizeof(BlockQ6_K);
  constexpr int R = kTileRows<DT>;
  if (n1 - n0 < 8) return n0;  // no whole group: the caller's kernel takes every column
  thread_local std::vector<int32_t> pairs;
  pairs.resize(static_cast<size_t>((m1 - m0) * blocks * 8));
  for (int64_t m = m0; m < m1; ++m)
    act_pairs(DT, x, m, blocks, pairs.data() + (m - m0) * blocks * 8);
  alignas(32) Unpacked8 u;
  alignas(32) __m256 acc[kRowChunk][8];
  const int64_t n_end = n0 + (n1 - n0) / 8 * 8;
  for (int64_t n = n0; n < n_end; n += 8) {
    const char* wn = w + static_cast<size_t>(n) * rb;
    for (int64_t mc = m0; mc < m1; mc += kRowChunk) {
      const int64_t rows = std::min(kRowChunk, m1 - mc);
      for (int64_t r = 0; r < rows; ++r)
        for (int a = 0; a < 8; ++a) acc[r][a] = _mm256_setzero_ps();
      for (int64_t i = 0; i < blocks; ++i) {
        if constexpr (DT == DType::Q4_K || DT == DType::Q5_K)
          unpack_q4k<DT == DType::Q5_K>(wn + i * block_bytes, rb, &u);
        else
          unpack_q6k(wn + i * block_bytes, rb, &u);
        int64_t r = 0;
        if constexpr (R == 4)
          for (; r + 4 <= rows; r += 4)
            rows_terms<DT, 4>(x, u, mc, r, m0, i, blocks, pairs.data(), acc);
        for (; r + 2 <= rows; r += 2)
          rows_terms<DT, 2>(x, u, mc, r, m0, i, blocks, pairs.data(), acc);
        if (r < rows) rows_terms<DT, 1>(x, u, mc, r, m0, i, blocks, pairs.data(), acc);
      }
      for (int64_t r = 0; r < rows; ++r) {
        const __m256* a = acc[r];
        const __m256 total =
            _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(a[0], a[1]), _mm256_add_ps(a[2], a[3])),
                          _mm256_add_ps(_mm256_add_ps(a[4], a[5]), _mm256_add_ps(a[6], a[7])));
        _mm256_storeu_ps(y + (mc + r) * ldy + n, total);
      }
    }
  }
  return n_end;
}

}  // namespace

int64_t quant_kcols8_range_avx2(DType dt, const QuantRowsView& x, const void* w, float* y,
                                int64_t ldy, int64_t m0, int64_t m1, int64_t n0, int64_t n1) {
  const char* wc = static_cast<const char*>(w);
  if (dt == DType::Q4_K) return cols8<DType::Q4_K>(x, wc, y, ldy, m0, m1, n0, n1);
  if (dt == DType::Q5_K) return cols8<DType::Q5_K>(x, wc, y, ldy, m0, m1, n0, n1);
  return cols8<DType::Q6_K>(x, wc, y, ldy, m0, m1, n0, n1);
}

}  // namespace eagle2::detail

// AVX-512 VNNI kernel for Q4_K/Q5_K/Q6_K weights and several activation rows (verification batches,
// prompts): sixteen weight rows (output columns) sit in the sixteen int32 lanes of a register, so
// each superblock is unpacked once per chunk of up to kRowChunk activation rows (once for a whole
// verification batch) and vpdpbusd's lane sums are already
// each column's exact sub-block sums. No horizontal reduction is left anywhere: the scale
// multiplies, the float steps and the final pairwise total all run sixteen columns at a time.
//
// The order of quant_matmul.h is kept exactly: per superblock an exact int32 s (and mins for
// Q4_K) per (row, column), one f32 term with the reference's operations (mul, mul, [sub], no FMA)
// added into accumulator i % 8, then ((a0 + a1) + (a2 + a3)) + ((a4 + a5) + (a6 + a7)). The
// integer sums are grouped differently from the reference (and from quant_kmatmul_avx512.cpp):
//   Q4_K  s = sum_j sc_j * d_j with d_j = sum of the 32 products of sub-block j (vpdpbusd of the
//         0..15 codes against the int8 activations, |d_j| <= 32 * 15 * 127, then vpmulld);
//         mins = sum_j m_j * X_j with X_j the sub-block's activation sum (|X_j| <= 32 * 127, so
//         pairs of them and of the 6-bit mins are int16 and vpdpwssd takes two per lane).
//   Q6_K  s = sum_g sc_g * d_g - 32 * sum_g sc_g * X_g, d_g over the 16 codes 0..63 of group g;
//         the second sum as int16 pairs (-32 * sc_g is -4064..4096, X_g is +-2032).
//   Q5_K  as Q4_K with codes 0..31 (|d_j| <= 32 * 31 * 127).
// Every partial sum is far inside int32 (|s| < 2^28 for Q6_K), and integer addition is
// associative, so the totals are the reference's exactly.
//
// Weights are unpacked per superblock into a small buffer that every activation row of the chunk
// then reads. In the file's row layout they are first transposed in registers (dword t of rows
// 0..15 in one vector, as quant_rows16_avx512.cpp does for Q8_0), which costs about as much as a
// few rows' dot products, so there Q6_K's one and two rows keep quant_kmatmul_avx512.cpp's kernel
// (kKCols16MinRowsQ6K). In MatrixLayout::kRowGroups16, which the loader makes where it may
// rewrite the weights, each such vector is one load and the group one stream, and both types take
// this kernel from one row (matmul.cpp's quant_grouped).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "core/quant_blocks.h"
#include "kernels/avx512_sums.h"  // also <immintrin.h>, with GCC 12's false warnings silenced
#include "kernels/avx512_transpose.h"
#include "kernels/quant_internal.h"

namespace eagle2::detail {
namespace {

// Activation rows that share one unpacked superblock; bounds the accumulators (8 vectors a row)
// so that they stay in L1 beside the unpacked weights.
constexpr int64_t kRowChunk = 16;

inline __m128i load128(const char* p) {
  return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
}
inline __m256i load256(const char* p) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
}

// w[t] (t = 0..7) = dword t of the 32 bytes at p + n * rb, for n = 0..15 in lane n.
inline void transpose16x8(const char* p, size_t rb, __m512i w[8]) {
  // a[k] = [row k | row k + 4], a[k + 4] = [row k + 8 | row k + 12]: after the in-lane
  // transposes, 128-bit lanes 0/2 of a[t] hold dword t of rows 0-3 / 4-7 and lanes 1/3 dword t + 4.
  __m512i a[8];
  for (int k = 0; k < 4; ++k) {
    a[k] = _mm512_inserti64x4(_mm512_castsi256_si512(load256(p + k * rb)),
                              load256(p + (k + 4) * rb), 1);
    a[k + 4] = _mm512_inserti64x4(_mm512_castsi256_si512(load256(p + (k + 8) * rb)),
                                  load256(p + (k + 12) * rb), 1);
  }
  transpose4(a[0], a[1], a[2], a[3]);
  transpose4(a[4], a[5], a[6], a[7]);
  for (int k = 0; k < 4; ++k) {
    w[k] = _mm512_shuffle_i32x4(a[k], a[k + 4], 0x88);      // lanes 0, 2 of each
    w[k + 4] = _mm512_shuffle_i32x4(a[k], a[k + 4], 0xDD);  // lanes 1, 3 of each
  }
}

// w[t] (t = 0..3) = dword t of the 16 bytes at p + n * rb, for n = 0..15 in lane n.
inline void transpose16x4(const char* p, size_t rb, __m512i w[4]) {
  for (int k = 0; k < 4; ++k) {
    const __m256i lo = _mm256_inserti128_si256(_mm256_castsi128_si256(load128(p + k * rb)),
                                               load128(p + (k + 4) * rb), 1);
    const __m256i hi = _mm256_inserti128_si256(_mm256_castsi128_si256(load128(p + (k + 8) * rb)),
                                               load128(p + (k + 12) * rb), 1);
    w[k] = _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1);
  }
  transpose4(w[0], w[1], w[2], w[3]);
}

inline int32_t pack16(int32_t lo, int32_t hi) {
  return static_cast<int32_t>((static_cast<uint32_t>(hi) << 16) |
                              (static_cast<uint32_t>(lo) & 0xFFFFu));
}

// Where one superblock of sixteen columns comes from, as vectors of one dword per column (lane n:
// column n): dwords(o, w) gives N of them, dword o / 4 .. o / 4 + N - 1 of each column's block.
//   RowSource: the file's row layout, sixteen row streams transposed in registers;
//   GroupedSource: MatrixLayout::kRowGroups16 (core/tensor.h), where the group's block is already
//   dword-major, so each vector is one load, and the sixteen columns are one stream (prefetched).
struct RowSource {
  const char* blk;  // column 0's block
  size_t rb;        // bytes per weight row
  template <int N>
  void dwords(size_t o, __m512i w[N]) const {
    static_assert(N == 4 || N == 8);
    if constexpr (N == 4)
      transpose16x4(blk + o, rb, w);
    else
      transpose16x8(blk + o, rb, w);
  }
  // Q6_K's d, the f16 at byte 208 of each block (the block's last two bytes, so no wider load).
  __m512 q6k_d() const {
    alignas(32) uint16_t d16[16];
    for (int n = 0; n < 16; ++n) std::memcpy(&d16[n], blk + static_cast<size_t>(n) * rb + 208, 2);
    return _mm512_cvtph_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(d16)));
  }
};

struct GroupedSource {
  const char* gblk;  // the group's block: dword t of the sixteen columns at 64 t
  template <int N>
  void dwords(size_t o, __m512i w[N]) const {
    for (int k = 0; k < N; ++k) w[k] = _mm512_loadu_si512(gblk + 16 * o + 64 * k);
  }
  // Q6_K's d: the sixteen f16 after the 52 dword lines.
  __m512 q6k_d() const { return _mm512_cvtph_ps(load256(gblk + 52 * 64)); }
};

// One superblock of sixteen columns, unpacked: codes[8 * j + t] = dword t (elements 4t .. 4t + 3)
// of sub-block j (Q4_K: 32 elements) or codes[4 * g + u] of group g (Q6_K: 16 elements), one
// column per lane, as unsigned bytes; scale[j] / scale[g] the int32 scale per lane; pairs: int16
// pairs for the vpdpwssd term (Q4_K mins (m_j, m_j+2); Q6_K (-32 sc_g, -32 sc_g+2)), to be taken
// against the activation pairs of act_pairs(); dw (and dmin) the f16 scales widened.
struct Unpacked {
  __m512i codes[64];
  __m512i scale[16];
  __m512i pairs[8];
  __m512 dw, dmin;
};

// Q5_K is Q4_K's block with a fifth code bit per element (core/quant_codes.h): the same d, dmin
// and twelve scale bytes, then qh[32] at byte 16 and the nibbles at 48; element 64c + l (l < 32)
// takes bit 2c of qh[l], element 64c + 32 + l bit 2c + 1.
constexpr size_t kQ5QhAt = 16, kQ5QsAt = 48;
static_assert(offsetof(BlockQ5_K, qh) == kQ5QhAt && offsetof(BlockQ5_K, qs) == kQ5QsAt);

// Bit j of every byte of v moved to bit 4 (the 16-bit shifts carry bits across bytes only below
// bit 4 or above it, so the mask keeps each byte's own bit).
inline __m512i fifth_bit16(__m512i v, int j) {
  const __m512i m16 = _mm512_set1_epi8(0x10);
  return j <= 4 ? _mm512_and_si512(_mm512_slli_epi16(v, static_cast<unsigned>(4 - j)), m16)
                : _mm512_and_si512(_mm512_srli_epi16(v, static_cast<unsigned>(j - 4)), m16);
}

template <class Src, bool five = false>
void unpack_q4k(const Src& src, Unpacked* u) {
  // Bytes 0-15 of each block: [d | dmin], then scales bytes 0-3, 4-7, 8-11 (quant_ktiles.h's
  // q4k_scales_mins gives the packing), one column per lane.
  __m512i h[4];
  src.template dwords<4>(0, h);
  const __m512i D = h[0], A = h[1], B = h[2], C = h[3];
  u->dw = _mm512_cvtph_ps(_mm512_cvtepi32_epi16(D));
  u->dmin = _mm512_cvtph_ps(_mm512_cvtepi32_epi16(_mm512_srli_epi32(D, 16)));
  const __m512i m63 = _mm512_set1_epi8(0x3F), m15 = _mm512_set1_epi8(0x0F),
                m48 = _mm512_set1_epi8(0x30);
  const __m512i sc03 = _mm512_and_si512(A, m63), mn03 = _mm512_and_si512(B, m63);
  const __m512i sc47 =
      _mm512_or_si512(_mm512_and_si512(C, m15), _mm512_and_si512(_mm512_srli_epi32(A, 2), m48));
  const __m512i mn47 = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi32(C, 4), m15),
                                       _mm512_and_si512(_mm512_srli_epi32(B, 2), m48));
  const __m512i byte0 = _mm512_set1_epi32(0xFF), even16 = _mm512_set1_epi32(0x00FF00FF);
  for (int j = 0; j < 4; ++j) {
    u->scale[j] = _mm512_and_si512(_mm512_srli_epi32(sc03, 8 * j), byte0);
    u->scale[4 + j] = _mm512_and_si512(_mm512_srli_epi32(sc47, 8 * j), byte0);
  }
  u->pairs[0] = _mm512_and_si512(mn03, even16);                        // (m0, m2)
  u->pairs[1] = _mm512_and_si512(_mm512_srli_epi32(mn03, 8), even16);  // (m1, m3)
  u->pairs[2] = _mm512_and_si512(mn47, even16);                        // (m4, m6)
  u->pairs[3] = _mm512_and_si512(_mm512_srli_epi32(mn47, 8), even16);  // (m5, m7)
  // Codes: chunk c (qs bytes 32c ..) holds sub-block 2c in its low nibbles, 2c + 1 in its high.
  __m512i qh[8];
  if constexpr (five) src.template dwords<8>(kQ5QhAt, qh);
  for (int c = 0; c < 4; ++c) {
    __m512i w[8];
    src.template dwords<8>((five ? kQ5QsAt : 16) + 32 * c, w);
    for (int t = 0; t < 8; ++t) {
      __m512i lo = _mm512_and_si512(w[t], m15),
              hi = _mm512_and_si512(_mm512_srli_epi16(w[t], 4), m15);
      if constexpr (five) {
        lo = _mm512_or_si512(lo, fifth_bit16(qh[t], 2 * c));
        hi = _mm512_or_si512(hi, fifth_bit16(qh[t], 2 * c + 1));
      }
      u->codes[8 * (2 * c) + t] = lo;
      u->codes[8 * (2 * c + 1) + t] = hi;
    }
  }
}

// Byte offsets of BlockQ6_K's parts (core/quant_blocks.h).
constexpr size_t kQ6Ql = 0, kQ6Qh = 128, kQ6Scales = 192;
static_assert(offsetof(BlockQ6_K, qh) == kQ6Qh && offsetof(BlockQ6_K, scales) == kQ6Scales &&
              offsetof(BlockQ6_K, d) == 208);

template <class Src>
void unpack_q6k(const Src& src, Unpacked* u) {
  // The sixteen int8 scales (dwords k: sc 4k .. 4k + 3), one column per lane.
  __m512i s[4];
  src.template dwords<4>(kQ6Scales, s);
  for (int k = 0; k < 4; ++k) {
    for (int b = 0; b < 4; ++b)
      u->scale[4 * k + b] = _mm512_srai_epi32(_mm512_slli_epi32(s[k], 24 - 8 * b), 24);
    // int16 pairs (sc 4k, sc 4k + 2) and (sc 4k + 1, sc 4k + 3), sign-extended, times -32.
    const __m512i even = _mm512_srai_epi16(_mm512_slli_epi16(s[k], 8), 8);
    const __m512i odd = _mm512_srai_epi16(s[k], 8);
    const __m512i zero = _mm512_setzero_si512();
    u->pairs[2 * k] = _mm512_sub_epi16(zero, _mm512_slli_epi16(even, 5));
    u->pairs[2 * k + 1] = _mm512_sub_epi16(zero, _mm512_slli_epi16(odd, 5));
  }
  u->dw = src.q6k_d();
  u->dmin = _mm512_setzero_ps();
  // Codes. Group g (elements 16g ..): half h = g / 8, part p = (g % 8) / 2, l from 16 * (g % 2);
  // low four bits in ql[64h + 32 (p & 1) + l] (low nibble for p < 2, high otherwise), top two bits
  // in qh[32h + l] at bits 2p, 2p + 1. One vpternlogd takes bits 0-3 from the low source and bits
  // 4-7 from the top source; the top source is qh masked to 0x33 (p = 0, 2) or 0xCC (p = 1, 3)
  // before its 16-bit shift, so its bits 6-7 come out zero and whatever the shift carries across
  // a byte border lands in bits 0-3, which the low source replaces (2.75 instead of 4.5
  // operations a code vector).
  const __m512i m33 = _mm512_set1_epi8(0x33), mcc = _mm512_set1_epi8(static_cast<char>(0xCC)),
                m15 = _mm512_set1_epi8(0x0F);
  constexpr int kLowFromAHighFromB = 0xE4;  // (A & C) | (B & ~C) with C = 0x0F
  for (int h = 0; h < 2; ++h) {
    __m512i lo[16], hi[8];
    src.template dwords<8>(kQ6Ql + 64 * h, lo);
    src.template dwords<8>(kQ6Ql + 64 * h + 32, lo + 8);
    src.template dwords<8>(kQ6Qh + 32 * h, hi);
    for (int t = 0; t < 8; ++t) {  // dword t of the 32 elements of each part: group 2p + t / 4
      const __m512i q33 = _mm512_and_si512(hi[t], m33), qcc = _mm512_and_si512(hi[t], mcc);
      const __m512i top[4] = {_mm512_slli_epi16(q33, 4), _mm512_slli_epi16(qcc, 2), q33,
                              _mm512_srli_epi16(qcc, 2)};
      const __m512i low[4] = {lo[t], lo[8 + t], _mm512_srli_epi16(lo[t], 4),
                              _mm512_srli_epi16(lo[8 + t], 4)};
      for (int p = 0; p < 4; ++p) {
        const int g = 8 * h + 2 * p + t / 4;
        u->codes[4 * g + t % 4] =
            _mm512_ternarylogic_epi32(low[p], top[p], m15, kLowFromAHighFromB);
      }
    }
  }
}

// Q4_K and Q5_K share everything but the codes' fifth bit.
template <DType DT>
constexpr bool kQ4Like = DT == DType::Q4_K || DT == DType::Q5_K;

template <DType DT, class Src>
inline void unpack(const Src& src, Unpacked* u) {
  if constexpr (DT == DType::Q4_K)
    unpack_q4k<Src, false>(src, u);
  else if constexpr (DT == DType::Q5_K)
    unpack_q4k<Src, true>(src, u);
  else
    unpack_q6k(src, u);
}

// Per activation row and superblock, the dwords vpdpwssd takes against Unpacked::pairs:
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

inline __m512i bcast(const int8_t* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return _mm512_set1_epi32(v);
}

// Superblock i of R activation rows (codes xq[r], scales dx[r], pairs xp[r]) against the unpacked
// columns: the step-2 terms per column. Each code vector is loaded once for the R rows.
template <DType DT, int R>
__attribute__((always_inline)) inline void terms(const Unpacked& u, const int8_t* const xq[R],
                                                 const float dx[R], const int32_t* const xp[R],
                                                 __m512 out[R]) {
  constexpr int groups = kQ4Like<DT> ? 8 : 16, dwords = 64 / groups;
  __m512i s[R];
  for (int r = 0; r < R; ++r) s[r] = _mm512_setzero_si512();
  for (int g = 0; g < groups; g += 2) {
    __m512i d0[R], d1[R];
    for (int r = 0; r < R; ++r) d0[r] = d1[r] = _mm512_setzero_si512();
    for (int t = 0; t < dwords; ++t) {
      const __m512i c0 = u.codes[dwords * g + t], c1 = u.codes[dwords * (g + 1) + t];
      for (int r = 0; r < R; ++r) {
        d0[r] = _mm512_dpbusd_epi32(d0[r], c0, bcast(xq[r] + 4 * (dwords * g + t)));
        d1[r] = _mm512_dpbusd_epi32(d1[r], c1, bcast(xq[r] + 4 * (dwords * (g + 1) + t)));
      }
    }
    for (int r = 0; r < R; ++r)
      s[r] = _mm512_add_epi32(s[r], _mm512_add_epi32(_mm512_mullo_epi32(d0[r], u.scale[g]),
                                                     _mm512_mullo_epi32(d1[r], u.scale[g + 1])));
  }
  for (int r = 0; r < R; ++r) {
    const __m512 vdx = _mm512_set1_ps(dx[r]);
    if constexpr (kQ4Like<DT>) {
      __m512i mins = _mm512_setzero_si512();
      for (int p = 0; p < 4; ++p)
        mins = _mm512_dpwssd_epi32(mins, u.pairs[p], _mm512_set1_epi32(xp[r][p]));
      const __m512 t = _mm512_mul_ps(_mm512_mul_ps(u.dw, vdx), _mm512_cvtepi32_ps(s[r]));
      out[r] =
          _mm512_sub_ps(t, _mm512_mul_ps(_mm512_mul_ps(u.dmin, vdx), _mm512_cvtepi32_ps(mins)));
    } else {
      __m512i v = s[r];
      for (int p = 0; p < 8; ++p)
        v = _mm512_dpwssd_epi32(v, u.pairs[p], _mm512_set1_epi32(xp[r][p]));
      out[r] = _mm512_mul_ps(_mm512_mul_ps(u.dw, vdx), _mm512_cvtepi32_ps(v));
    }
  }
}

// Rows mc + r0 .. mc + r0 + R - 1 of the chunk, superblock i: terms added into acc[r][i % 8].
template <DType DT, int R>
inline void rows_terms(const QuantRowsView& x, const Unpacked& u, int64_t mc, int64_t r0,
                       int64_t m0, int64_t i, int64_t blocks, const int32_t* pairs,
                       __m512 (*acc)[8]) {
  const int8_t* xq[R];
  float dx[R];
  const int32_t* xp[R];
  for (int r = 0; r < R; ++r) {
    const int64_t m = mc + r0 + r;
    xq[r] = x.qs + m * x.cols + i * 256;
    dx[r] = x.scale[m * blocks + i];
    xp[r] = pairs + ((m - m0) * blocks + i) * 8;
  }
  __m512 t[R];
  terms<DT, R>(u, xq, dx, xp, t);
  for (int r = 0; r < R; ++r) acc[r0 + r][i % 8] = _mm512_add_ps(acc[r0 + r][i % 8], t[r]);
}

// Sixteen columns from n0 on, in whole groups of sixteen, in either layout (`grouped`:
// MatrixLayout::kRowGroups16, n0 a multiple of 16).
template <DType DT, bool grouped>
void cols16(const QuantRowsView& x, const char* w, size_t rb, float* y, int64_t ldy, int64_t m0,
            int64_t m1, int64_t n0, int64_t n1) {
  const int64_t K = x.cols, blocks = K / 256;
  constexpr size_t block_bytes = DT == DType::Q4_K   ? sizeof(BlockQ4_K)
                                 : DT == DType::Q5_K ? sizeof(BlockQ5_K)
                                                     : sizeof(BlockQ6_K);
  if (n1 - n0 < 16) return;  // no whole group: the caller's kernel takes every column
  thread_local std::vector<int32_t> pairs;
  pairs.resize(static_cast<size_t>((m1 - m0) * blocks * 8));
  for (int64_t m = m0; m < m1; ++m)
    act_pairs(DT, x, m, blocks, pairs.data() + (m - m0) * blocks * 8);
  alignas(64) Unpacked u;
  alignas(64) __m512 acc[kRowChunk][8];
  for (int64_t n = n0; n + 16 <= n1; n += 16) {
    const char* wn = w + static_cast<size_t>(n) * rb;
    for (int64_t mc = m0; mc < m1; mc += kRowChunk) {
      const int64_t rows = std::min(kRowChunk, m1 - mc);
      for (int64_t r = 0; r < rows; ++r)
        for (int a = 0; a < 8; ++a) acc[r][a] = _mm512_setzero_ps();
      for (int64_t i = 0; i < blocks; ++i) {
        if constexpr (grouped) {
          // The group's blocks are one stream: fetch the next one (or the next group's first,
          // which follows) while this one is used; never past this call's columns, where the
          // matrix may end (a pointer past it is undefined even if never read).
          const char* gblk = wn + static_cast<size_t>(i) * 16 * block_bytes;
          if (i + 1 < blocks || n + 32 <= n1)
            for (size_t o = 0; o < 16 * block_bytes; o += 64)
              _mm_prefetch(gblk + 16 * block_bytes + o, _MM_HINT_T0);
          unpack<DT>(GroupedSource{gblk}, &u);
        } else {
          unpack<DT>(RowSource{wn + i * block_bytes, rb}, &u);
        }
        int64_t r = 0;
        for (; r + 4 <= rows; r += 4)
          rows_terms<DT, 4>(x, u, mc, r, m0, i, blocks, pairs.data(), acc);
        switch (rows - r) {
          case 3:
            rows_terms<DT, 3>(x, u, mc, r, m0, i, blocks, pairs.data(), acc);
            break;
          case 2:
            rows_terms<DT, 2>(x, u, mc, r, m0, i, blocks, pairs.data(), acc);
            break;
          case 1:
            rows_terms<DT, 1>(x, u, mc, r, m0, i, blocks, pairs.data(), acc);
            break;
          default:
            break;
        }
      }
      for (int64_t r = 0; r < rows; ++r) {
        const __m512* a = acc[r];
        const __m512 total =
            _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(a[0], a[1]), _mm512_add_ps(a[2], a[3])),
                          _mm512_add_ps(_mm512_add_ps(a[4], a[5]), _mm512_add_ps(a[6], a[7])));
        _mm512_storeu_ps(y + (mc + r) * ldy + n, total);
      }
    }
  }
}

}  // namespace

int64_t quant_kcols16_range_avx512(DType dt, const QuantRowsView& x, const void* w, float* y,
                                   int64_t ldy, int64_t m0, int64_t m1, int64_t n0, int64_t n1) {
  const size_t rb = dtype_bytes(dt, x.cols);
  const char* wc = static_cast<const char*>(w);
  if (dt == DType::Q4_K)
    cols16<DType::Q4_K, false>(x, wc, rb, y, ldy, m0, m1, n0, n1);
  else if (dt == DType::Q5_K)
    cols16<DType::Q5_K, false>(x, wc, rb, y, ldy, m0, m1, n0, n1);
  else
    cols16<DType::Q6_K, false>(x, wc, rb, y, ldy, m0, m1, n0, n1);
  return n0 + (n1 - n0) / 16 * 16;
}

void quant_kgrouped16_range_avx512(DType dt, const QuantRowsView& x, const void* w, float* y,
                                   int64_t ldy, int64_t m0, int64_t m1, int64_t n0, int64_t n1) {
  const size_t rb = dtype_bytes(dt, x.cols);
  const char* wc = static_cast<const char*>(w);
  if (dt == DType::Q4_K)
    cols16<DType::Q4_K, true>(x, wc, rb, y, ldy, m0, m1, n0, n1);
  else
    cols16<DType::Q6_K, true>(x, wc, rb, y, ldy, m0, m1, n0, n1);
}

}  // namespace eagle2::detail

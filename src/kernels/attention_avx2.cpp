// AVX2 attention pieces (see attention_internal.h for the orders): the weighted sum of values for
// attention_head, and the multi-query scores and values of attention_batch. Up to 8 vectors (64
// floats) of an output are kept in registers while the slots stream by. No inline functions from
// shared headers here.
//
// Why the multi-query scores go 8 keys at a time: one key's dot over a 64-dim head is 8 FMAs, and
// the horizontal sum after it costs about half as much again; 8 sums done together in one
// transposed tree cost a few shuffles each, and the tree pairs the lanes exactly as the one-vector
// sum does, so every score keeps its bits.
#include <immintrin.h>

#include <cstdint>

#include "kernels/attention_internal.h"

namespace eagle2::detail {

namespace {

inline __m256i lane_mask(int64_t lanes) {  // the first `lanes` (1..8) lanes set
  const __m256i idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(lanes)), idx);
}

// The storage row of logical slot `slot` (attention_internal.h); a private copy per ISA file.
inline int64_t row_of(const int32_t* table, int shift, int64_t slot) {
  if (table == nullptr) return slot;
  return (static_cast<int64_t>(table[slot >> shift]) << shift) |
         (slot & ((int64_t{1} << shift) - 1));
}

// hsum (matmul_avx2.cpp) of each of a[0..7] at once: lane i of the result is
// ((a_i[0] + a_i[4]) + (a_i[2] + a_i[6])) + ((a_i[1] + a_i[5]) + (a_i[3] + a_i[7])), the pairing of
// halves, then quarters, then the last two lanes.
inline __m256 hsum8(const __m256 (&a)[8]) {
  __m256 h[4];  // h[i]: lanes 0-3 the half sums of a[i], lanes 4-7 those of a[i + 4]
  for (int i = 0; i < 4; ++i)
    h[i] = _mm256_add_ps(_mm256_permute2f128_ps(a[i], a[i + 4], 0x20),
                         _mm256_permute2f128_ps(a[i], a[i + 4], 0x31));
  // Per 128-bit lane: the quarter sums (l0 + l2, l1 + l3) of two vectors side by side.
  const __m256 q01 = _mm256_add_ps(_mm256_shuffle_ps(h[0], h[1], _MM_SHUFFLE(1, 0, 1, 0)),
                                   _mm256_shuffle_ps(h[0], h[1], _MM_SHUFFLE(3, 2, 3, 2)));
  const __m256 q23 = _mm256_add_ps(_mm256_shuffle_ps(h[2], h[3], _MM_SHUFFLE(1, 0, 1, 0)),
                                   _mm256_shuffle_ps(h[2], h[3], _MM_SHUFFLE(3, 2, 3, 2)));
  return _mm256_add_ps(_mm256_shuffle_ps(q01, q23, _MM_SHUFFLE(2, 0, 2, 0)),
                       _mm256_shuffle_ps(q01, q23, _MM_SHUFFLE(3, 1, 3, 1)));
}

// scale * dot(q, key[i]) for 8 keys, each in dot_f32's AVX2 order: one accumulator, one FMA per 8
// dims, the tail's lanes zero-filled (masked loads), then hsum.
inline __m256 scores8(const float* q, const float* const* key, int64_t head_dim, __m256 scale) {
  __m256 acc[8];
  for (int i = 0; i < 8; ++i) acc[i] = _mm256_setzero_ps();
  int64_t d = 0;
  for (; d + 8 <= head_dim; d += 8) {
    const __m256 qv = _mm256_loadu_ps(q + d);
    for (int i = 0; i < 8; ++i) acc[i] = _mm256_fmadd_ps(qv, _mm256_loadu_ps(key[i] + d), acc[i]);
  }
  if (d < head_dim) {
    const __m256i m = lane_mask(head_dim - d);
    const __m256 qv = _mm256_maskload_ps(q + d, m);
    for (int i = 0; i < 8; ++i)
      acc[i] = _mm256_fmadd_ps(qv, _mm256_maskload_ps(key[i] + d, m), acc[i]);
  }
  return _mm256_mul_ps(hsum8(acc), scale);
}

// The vectors of one block of up to 64 output dims [d0, d0 + width): `nv` of them, the last
// masked to the width. The weighted sums of values walk a head 64 dims at a time.
struct DimBlock {
  int nv;
  __m256i last_mask;
  explicit DimBlock(int64_t width)
      : nv(static_cast<int>((width + 7) / 8)), last_mask(lane_mask(width - 8 * (nv - 1))) {}
  __m256i mask(int i) const { return i == nv - 1 ? last_mask : _mm256_set1_epi32(-1); }
};

// a += p_j * v_j over the block's vectors: one FMA per vector, the weighted sums' only step. (The
// loop runs to the constant 8 and breaks, so the compiler unrolls it and keeps `a` in registers.)
inline void add_slot(__m256 (&a)[8], const float* vj, float pj, const DimBlock& b) {
  const __m256 p = _mm256_set1_ps(pj);
  for (int i = 0; i < 8; ++i) {
    if (i >= b.nv) break;
    a[i] = _mm256_fmadd_ps(p, _mm256_maskload_ps(vj + 8 * i, b.mask(i)), a[i]);
  }
}

// out = a * inv_sum over the block's dims.
inline void store_scaled(float* out, const __m256 (&a)[8], float inv_sum, const DimBlock& b) {
  const __m256 inv = _mm256_set1_ps(inv_sum);
  for (int i = 0; i < b.nv; ++i)
    _mm256_maskstore_ps(out + 8 * i, b.mask(i), _mm256_mul_ps(a[i], inv));
}

}  // namespace

void attention_values_avx2(const float* v, int64_t stride, const int32_t* table, int shift,
                           int64_t n_context, const int32_t* extra, int64_t n_extra, const float* p,
                           float inv_sum, int64_t head_dim, float* out) {
  const int64_t n = n_context + n_extra;
  for (int64_t d0 = 0; d0 < head_dim; d0 += 64) {
    const DimBlock block(head_dim - d0 < 64 ? head_dim - d0 : 64);
    __m256 acc[8];
    for (__m256& a : acc) a = _mm256_setzero_ps();
    for (int64_t j = 0; j < n; ++j) {
      const int64_t slot = j < n_context ? j : extra[j - n_context];
      add_slot(acc, v + row_of(table, shift, slot) * stride + d0, p[j], block);
    }
    store_scaled(out + d0, acc, inv_sum, block);
  }
}

void attention_scores_multi_avx2(const float* k, int64_t stride, const int32_t* table, int shift,
                                 int64_t n_context, const MultiQuery* queries, int64_t n_queries,
                                 int64_t head_dim, float scale) {
  const __m256 vscale = _mm256_set1_ps(scale);
  const float* key[8];
  // The context, 8 keys at a time for all queries (a block's keys stay in L1 between queries).
  for (int64_t j0 = 0; j0 < n_context; j0 += 8) {
    const int64_t count = n_context - j0 < 8 ? n_context - j0 : 8;
    for (int64_t i = 0; i < 8; ++i)
      key[i] = k + row_of(table, shift, j0 + (i < count ? i : 0)) * stride;
    const __m256i live = lane_mask(count);
    for (int64_t qi = 0; qi < n_queries; ++qi)
      _mm256_maskstore_ps(queries[qi].scores + j0, live,
                          scores8(queries[qi].q, key, head_dim, vscale));
  }
  // Then each query's own extra slots, after its context scores.
  for (int64_t qi = 0; qi < n_queries; ++qi) {
    const MultiQuery& mq = queries[qi];
    for (int64_t e0 = 0; e0 < mq.n_extra; e0 += 8) {
      const int64_t count = mq.n_extra - e0 < 8 ? mq.n_extra - e0 : 8;
      for (int64_t i = 0; i < 8; ++i)
        key[i] = k + row_of(table, shift, mq.extra[e0 + (i < count ? i : 0)]) * stride;
      _mm256_maskstore_ps(mq.scores + n_context + e0, lane_mask(count),
                          scores8(mq.q, key, head_dim, vscale));
    }
  }
}

void attention_values_multi_avx2(const float* v, int64_t stride, const int32_t* table, int shift,
                                 int64_t n_context, const MultiQuery* queries, int64_t n_queries,
                                 const float* inv_sum, int64_t head_dim, float* acc) {
  for (int64_t d0 = 0; d0 < head_dim; d0 += 64) {
    const DimBlock block(head_dim - d0 < 64 ? head_dim - d0 : 64);
    for (int64_t i = 0; i < 8 * n_queries; ++i) _mm256_storeu_ps(acc + 8 * i, _mm256_setzero_ps());
    // Each query's accumulators wait in `acc` between blocks of 64 shared context slots, whose
    // value rows (16 KiB for a 64-dim head) stay in L1 while every query reads them.
    constexpr int64_t kSlots = 64;
    const float* vrow[kSlots];
    for (int64_t j0 = 0; j0 < n_context; j0 += kSlots) {
      const int64_t count = n_context - j0 < kSlots ? n_context - j0 : kSlots;
      for (int64_t j = 0; j < count; ++j) vrow[j] = v + row_of(table, shift, j0 + j) * stride + d0;
      for (int64_t qi = 0; qi < n_queries; ++qi) {
        float* aq = acc + qi * 64;
        __m256 a[8];
        for (int i = 0; i < 8; ++i) a[i] = _mm256_loadu_ps(aq + 8 * i);
        const float* p = queries[qi].scores + j0;
        for (int64_t j = 0; j < count; ++j) add_slot(a, vrow[j], p[j], block);
        for (int i = 0; i < 8; ++i) _mm256_storeu_ps(aq + 8 * i, a[i]);
      }
    }
    // The extras continue each query's slot sequence at j = n_context.
    for (int64_t qi = 0; qi < n_queries; ++qi) {
      const MultiQuery& mq = queries[qi];
      __m256 a[8];
      for (int i = 0; i < 8; ++i) a[i] = _mm256_loadu_ps(acc + qi * 64 + 8 * i);
      for (int64_t e = 0; e < mq.n_extra; ++e)
        add_slot(a, v + row_of(table, shift, mq.extra[e]) * stride + d0, mq.scores[n_context + e],
                 block);
      store_scaled(mq.out + d0, a, inv_sum[qi], block);
    }
  }
}

}  // namespace eagle2::detail

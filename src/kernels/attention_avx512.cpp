// AVX-512 attention pieces for attention_head (see attention_internal.h for the orders): scores
// 16 keys at a time, the softmax in vectors, and the weighted sum of values. No inline functions
// from shared headers here but avx512_sums.h (AVX-512 files only, a private copy each).
//
// Why scores go 16 keys at a time: one key's dot over a 64-dim head is 4 FMAs, and the horizontal
// sum after it costs as much again; summing 16 accumulators together in one transposed tree costs
// a single pass, and the tree pairs the lanes exactly as the one-vector sum does, so every score
// keeps its bits.
#include <cmath>
#include <cstdint>
#include <vector>

#include "kernels/attention_internal.h"
#include "kernels/avx512_sums.h"  // also <immintrin.h>, with GCC 12's false warnings silenced

namespace eagle2::detail {

namespace {

// exp(x) for x <= 0 (softmax arguments): x = n ln2 + r with |r| <= ln2 / 2, a degree-7 Taylor
// polynomial in r (truncation below 1e-8 relative), then scaling by 2^n. Exact at 0. Below
// -104 the result underflows to 0, as expf does.
inline __m512 exp_nonpositive(__m512 x) {
  x = _mm512_max_ps(x, _mm512_set1_ps(-104.0f));
  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693145751953125f), x);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(1.428606765330187045e-06f), r);
  __m512 p = _mm512_set1_ps(1.0f / 5040.0f);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 720.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 120.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 24.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 6.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0.5f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  return _mm512_scalef_ps(p, n);
}

inline __mmask16 first_lanes(int64_t count) {  // count in 0..16
  return count >= 16 ? static_cast<__mmask16>(0xffffu) : static_cast<__mmask16>((1u << count) - 1u);
}

// scale * dot(q, key[i]) for 16 keys, each in dot_f32's order: one accumulator, one FMA per 16
// dims, the masked tail (`tail` = the head_dim % 16 lanes), then hsum (via hsum16).
inline __m512 scores16(const float* q, const float* const* key, int64_t head_dim, __mmask16 tail,
                       __m512 scale) {
  const int64_t full = head_dim / 16 * 16;
  __m512 acc[16];
  for (int i = 0; i < 16; ++i) acc[i] = _mm512_setzero_ps();
  int64_t d = 0;
  for (; d < full; d += 16) {
    const __m512 qv = _mm512_loadu_ps(q + d);
    for (int i = 0; i < 16; ++i) acc[i] = _mm512_fmadd_ps(qv, _mm512_loadu_ps(key[i] + d), acc[i]);
  }
  if (d < head_dim) {
    const __m512 qv = _mm512_maskz_loadu_ps(tail, q + d);
    for (int i = 0; i < 16; ++i)
      acc[i] = _mm512_fmadd_ps(qv, _mm512_maskz_loadu_ps(tail, key[i] + d), acc[i]);
  }
  return _mm512_mul_ps(hsum16(acc), scale);
}

// The lanes of the (up to) 4 vectors covering `width` (1..64) dims: full vectors, the partial
// last one, then none.
inline void width_masks(int64_t width, __mmask16 (&mask)[4]) {
  for (int i = 0; i < 4; ++i)
    mask[i] = width >= 16 * (i + 1) ? static_cast<__mmask16>(0xffffu)
              : width > 16 * i      ? first_lanes(width - 16 * i)
                                    : static_cast<__mmask16>(0);
}

// Adds exp(x_j - m) for the `live` lanes to the double lanes lo (0-7) and hi (8-15); returns the
// 16 exponentials (0 in dead lanes).
inline __m512 add_exp(__m512 x, __m512 m, __mmask16 live, __m512d& lo, __m512d& hi) {
  const __m512 p = _mm512_maskz_mov_ps(live, exp_nonpositive(_mm512_sub_ps(x, m)));
  lo = _mm512_add_pd(lo, _mm512_cvtps_pd(_mm512_castps512_ps256(p)));
  hi = _mm512_add_pd(
      hi, _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(p), 1))));
  return p;
}

// The storage row of logical slot `slot` (attention_internal.h); a private copy per ISA file.
inline int64_t row_of(const int32_t* table, int shift, int64_t slot) {
  if (table == nullptr) return slot;
  return (static_cast<int64_t>(table[slot >> shift]) << shift) |
         (slot & ((int64_t{1} << shift) - 1));
}

}  // namespace

void attention_scores_avx512(const float* q, const float* k, int64_t stride, const int32_t* table,
                             int shift, int64_t n_context, const int32_t* extra, int64_t n_extra,
                             int64_t head_dim, float scale, float* s) {
  const int64_t n = n_context + n_extra;
  const __mmask16 tail = first_lanes(head_dim % 16);
  const __m512 vscale = _mm512_set1_ps(scale);
  for (int64_t j0 = 0; j0 < n; j0 += 16) {
    const int64_t count = n - j0 < 16 ? n - j0 : 16;
    const float* key[16];
    for (int64_t i = 0; i < 16; ++i) {
      const int64_t j = j0 + (i < count ? i : 0);
      key[i] = k + row_of(table, shift, j < n_context ? j : extra[j - n_context]) * stride;
    }
    _mm512_mask_storeu_ps(s + j0, first_lanes(count), scores16(q, key, head_dim, tail, vscale));
  }
}

float softmax_avx512(float* s, int64_t n) {
  __m512 mx = _mm512_set1_ps(-INFINITY);
  for (int64_t j = 0; j < n; j += 16)
    mx = _mm512_max_ps(mx,
                       _mm512_mask_loadu_ps(_mm512_set1_ps(-INFINITY), first_lanes(n - j), s + j));
  const __m512 m = _mm512_set1_ps(_mm512_reduce_max_ps(mx));
  __m512d lo = _mm512_setzero_pd(), hi = _mm512_setzero_pd();
  for (int64_t j = 0; j < n; j += 16) {
    const __mmask16 live = first_lanes(n - j);
    _mm512_mask_storeu_ps(s + j, live,
                          add_exp(_mm512_maskz_loadu_ps(live, s + j), m, live, lo, hi));
  }
  return static_cast<float>(1.0 / hsum_pd(lo, hi));
}

void attention_values_avx512(const float* v, int64_t stride, const int32_t* table, int shift,
                             int64_t n_context, const int32_t* extra, int64_t n_extra,
                             const float* p, float inv_sum, int64_t head_dim, float* out) {
  // 64 dims at a time in four partial sums (slot j feeds partial j mod 4): one chain of FMAs per
  // output vector would wait on the FMA latency at every slot; four chains keep the units busy.
  constexpr int kVecs = 4, kParts = 4;
  const int64_t n = n_context + n_extra;
  for (int64_t d0 = 0; d0 < head_dim; d0 += 16 * kVecs) {
    const int64_t width = head_dim - d0 < 16 * kVecs ? head_dim - d0 : 16 * kVecs;
    const int nv = static_cast<int>((width + 15) / 16);
    __mmask16 mask[kVecs];
    width_masks(width, mask);
    __m512 acc[kParts][kVecs];
    for (int r = 0; r < kParts; ++r)
      for (int i = 0; i < kVecs; ++i) acc[r][i] = _mm512_setzero_ps();
    auto add_slot = [&](__m512* a, int64_t j) {
      const int64_t slot = j < n_context ? j : extra[j - n_context];
      const float* vj = v + row_of(table, shift, slot) * stride + d0;
      const __m512 pj = _mm512_set1_ps(p[j]);
      for (int i = 0; i < kVecs; ++i)
        a[i] = _mm512_fmadd_ps(pj, _mm512_maskz_loadu_ps(mask[i], vj + 16 * i), a[i]);
    };
    int64_t j = 0;
    for (; j + kParts <= n; j += kParts) {
      add_slot(acc[0], j);
      add_slot(acc[1], j + 1);
      add_slot(acc[2], j + 2);
      add_slot(acc[3], j + 3);
    }
    if (j < n) add_slot(acc[0], j++);
    if (j < n) add_slot(acc[1], j++);
    if (j < n) add_slot(acc[2], j++);
    const __m512 inv = _mm512_set1_ps(inv_sum);
    for (int i = 0; i < nv; ++i) {
      const __m512 sum =
          _mm512_add_ps(_mm512_add_ps(acc[0][i], acc[1][i]), _mm512_add_ps(acc[2][i], acc[3][i]));
      _mm512_mask_storeu_ps(out + d0 + 16 * i, mask[i], _mm512_mul_ps(sum, inv));
    }
  }
}

double sum_exp_avx512(const float* x, int64_t n, float mx) {
  const __m512 m = _mm512_set1_ps(mx);
  __m512d lo = _mm512_setzero_pd(), hi = _mm512_setzero_pd();
  for (int64_t j = 0; j < n; j += 16) {
    const __mmask16 live = first_lanes(n - j);
    add_exp(_mm512_maskz_loadu_ps(live, x + j), m, live, lo, hi);
  }
  return hsum_pd(lo, hi);
}

void attention_multi_avx512(const float* k, const float* v, int64_t stride, const int32_t* table,
                            int shift, int64_t n_context, const MultiQuery* queries,
                            int64_t n_queries, int64_t head_dim, float scale, float* acc) {
  const __mmask16 tail = first_lanes(head_dim % 16);
  const __m512 vscale = _mm512_set1_ps(scale);
  // Scores: the context in blocks of 16 keys shared by all queries, then each query's extras.
  for (int64_t j0 = 0; j0 < n_context; j0 += 16) {
    const int64_t count = n_context - j0 < 16 ? n_context - j0 : 16;
    const float* key[16];
    for (int64_t i = 0; i < 16; ++i)
      key[i] = k + row_of(table, shift, j0 + (i < count ? i : 0)) * stride;
    for (int64_t qi = 0; qi < n_queries; ++qi)
      _mm512_mask_storeu_ps(queries[qi].scores + j0, first_lanes(count),
                            scores16(queries[qi].q, key, head_dim, tail, vscale));
  }
  // Per thread and reused: this runs for every KV head of every layer of every forward.
  thread_local std::vector<float> inv_sum;
  inv_sum.resize(static_cast<size_t>(n_queries));
  for (int64_t qi = 0; qi < n_queries; ++qi) {
    const MultiQuery& mq = queries[qi];
    attention_scores_avx512(mq.q, k, stride, table, shift, 0, mq.extra, mq.n_extra, head_dim, scale,
                            mq.scores + n_context);
    inv_sum[static_cast<size_t>(qi)] = softmax_avx512(mq.scores, n_context + mq.n_extra);
  }

  // Values, 64 dims at a time: each query's 4 partial sums x 4 vectors live in `acc` between
  // blocks of 64 shared context slots; partial r takes the slots j = r mod 4, as in
  // attention_values_avx512 (blocks start at multiples of 64, so j mod 4 is the block offset's).
  constexpr int kVecs = 4, kParts = 4;
  for (int64_t d0 = 0; d0 < head_dim; d0 += 16 * kVecs) {
    const int64_t width = head_dim - d0 < 16 * kVecs ? head_dim - d0 : 16 * kVecs;
    const int nv = static_cast<int>((width + 15) / 16);
    __mmask16 mask[kVecs];
    width_masks(width, mask);
    for (int64_t qi = 0; qi < n_queries; ++qi)
      for (int i = 0; i < kParts * kVecs; ++i)
        _mm512_storeu_ps(acc + (qi * 16 + i) * 16, _mm512_setzero_ps());
    auto add_slot = [&](__m512* a, const float* vj, float pj) {
      const __m512 pv = _mm512_set1_ps(pj);
      for (int i = 0; i < kVecs; ++i)
        a[i] = _mm512_fmadd_ps(pv, _mm512_maskz_loadu_ps(mask[i], vj + d0 + 16 * i), a[i]);
    };
    // Blocks of 64 slots: each query's sixteen accumulators are loaded and stored once per block,
    // and 64 value rows of a 64-dim head (16 KiB) stay in L1 while every query reads them.
    constexpr int64_t kSlots = 64;
    for (int64_t j0 = 0; j0 < n_context; j0 += kSlots) {
      const int64_t count = n_context - j0 < kSlots ? n_context - j0 : kSlots;
      // The block's value rows, looked up in the block table once for all the queries.
      const float* vrow[kSlots];
      for (int64_t i = 0; i < count; ++i) vrow[i] = v + row_of(table, shift, j0 + i) * stride;
      for (int64_t qi = 0; qi < n_queries; ++qi) {
        float* aq = acc + qi * 256;
        __m512 a[kParts][kVecs];
        for (int r = 0; r < kParts; ++r)
          for (int i = 0; i < kVecs; ++i) a[r][i] = _mm512_loadu_ps(aq + (r * kVecs + i) * 16);
        const float* p = queries[qi].scores + j0;
        int64_t j = 0;
        for (; j + kParts <= count; j += kParts) {
          add_slot(a[0], vrow[j], p[j]);
          add_slot(a[1], vrow[j + 1], p[j + 1]);
          add_slot(a[2], vrow[j + 2], p[j + 2]);
          add_slot(a[3], vrow[j + 3], p[j + 3]);
        }
        if (j < count) add_slot(a[0], vrow[j], p[j]), ++j;
        if (j < count) add_slot(a[1], vrow[j], p[j]), ++j;
        if (j < count) add_slot(a[2], vrow[j], p[j]), ++j;
        for (int r = 0; r < kParts; ++r)
          for (int i = 0; i < kVecs; ++i) _mm512_storeu_ps(aq + (r * kVecs + i) * 16, a[r][i]);
      }
    }
    for (int64_t qi = 0; qi < n_queries; ++qi) {
      const MultiQuery& mq = queries[qi];
      float* aq = acc + qi * 256;
      __m512 a[kParts][kVecs];
      for (int r = 0; r < kParts; ++r)
        for (int i = 0; i < kVecs; ++i) a[r][i] = _mm512_loadu_ps(aq + (r * kVecs + i) * 16);
      // The extras continue the slot sequence at j = n_context.
      for (int64_t e = 0; e < mq.n_extra; ++e) {
        const int64_t j = n_context + e;
        const float* vj = v + row_of(table, shift, mq.extra[e]) * stride;
        switch (j % kParts) {
          case 0:
            add_slot(a[0], vj, mq.scores[j]);
            break;
          case 1:
            add_slot(a[1], vj, mq.scores[j]);
            break;
          case 2:
            add_slot(a[2], vj, mq.scores[j]);
            break;
          default:
            add_slot(a[3], vj, mq.scores[j]);
            break;
        }
      }
      const __m512 inv = _mm512_set1_ps(inv_sum[static_cast<size_t>(qi)]);
      for (int i = 0; i < nv; ++i) {
        const __m512 sum =
            _mm512_add_ps(_mm512_add_ps(a[0][i], a[1][i]), _mm512_add_ps(a[2][i], a[3][i]));
        _mm512_mask_storeu_ps(mq.out + d0 + 16 * i, mask[i], _mm512_mul_ps(sum, inv));
      }
    }
  }
}

}  // namespace eagle2::detail

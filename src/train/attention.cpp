#include "train/attention.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/error.h"
#include "kernels/matmul.h"
#include "train/attention_blocks.h"
#include "train/linear.h"

namespace eagle2::train {

namespace {

void check(const char* what, const AttentionShape& s) {
  if (s.batch < 0 || s.seq_len < 0 || s.n_heads <= 0 || s.n_kv_heads <= 0 || s.head_dim <= 0 ||
      s.n_heads % s.n_kv_heads != 0)
    fail(what, ": bad shape B=", s.batch, " T=", s.seq_len, " H=", s.n_heads, " KV=", s.n_kv_heads,
         " head_dim=", s.head_dim, " (H must be a multiple of KV)");
}

float attention_scale(int64_t head_dim) {
  return 1.0f / std::sqrt(static_cast<float>(head_dim));
}

}  // namespace

// Every product runs on the SIMD matmul kernel (x * W^T with contiguous operands), so each task
// first gathers its head into contiguous [T, hd] / [hd, T] buffers. Products against the causal
// P or dS use full rows (the masked part is exact zeros), trading some wasted flops for the
// kernel's speed; a task is one sequence and head (forward) or kv head (backward) and the pool
// runs the kernel calls inside it serially, so results never depend on the thread count.
void attention_forward(float* out, float* probs, const float* q, const float* k, const float* v,
                       const AttentionShape& s, ThreadPool& pool) {
  check("attention_forward", s);
  const int64_t T = s.seq_len, H = s.n_heads, hd = s.head_dim;
  const int64_t group = H / s.n_kv_heads;
  const int64_t qw = H * hd, kw = s.n_kv_heads * hd;
  const float scale = attention_scale(hd);
  if (T == 0) return;
  pool.parallel_for(s.batch * H, [&](int64_t task) {
    const int64_t b = task / H, h = task % H, kvh = h / group;
    std::vector<float> qh(T * hd), kh(T * hd), vh(T * hd), vt(hd * T), oh(T * hd);
    std::vector<float> tmp(kAttentionBlock * T);
    gather_head(qh.data(), q + b * T * qw, T, qw, h * hd, hd);
    gather_head(kh.data(), k + b * T * kw, T, kw, kvh * hd, hd);
    gather_head(vh.data(), v + b * T * kw, T, kw, kvh * hd, hd);
    transpose(vh.data(), T, hd, 4, vt.data(), pool);
    float* P = probs + (b * H + h) * T * T;
    causal_scores(P, qh.data(), kh.data(), T, hd, scale, tmp.data(), pool);
    for (int64_t t = 0; t < T; ++t) {
      float* p = P + t * T;
      float mx = p[0];
      for (int64_t j = 1; j <= t; ++j) mx = p[j] > mx ? p[j] : mx;
      double sum = 0.0;
      for (int64_t j = 0; j <= t; ++j) {
        p[j] = std::exp(p[j] - mx);
        sum += p[j];
      }
      const float inv = static_cast<float>(1.0 / sum);
      for (int64_t j = 0; j <= t; ++j) p[j] *= inv;
    }
    matmul(P, T, Matrix{DType::F32, hd, T, vt.data()}, oh.data(), pool);
    float* ob = out + b * T * qw;
    for (int64_t t = 0; t < T; ++t)
      for (int64_t i = 0; i < hd; ++i) ob[t * qw + h * hd + i] = oh[t * hd + i];
  });
}

void attention_backward(float* dq, float* dk, float* dv, const float* dout, const float* q,
                        const float* k, const float* v, const float* probs, const AttentionShape& s,
                        ThreadPool& pool) {
  check("attention_backward", s);
  const int64_t T = s.seq_len, H = s.n_heads, KV = s.n_kv_heads, hd = s.head_dim;
  const int64_t group = H / KV;
  const int64_t qw = H * hd, kw = KV * hd;
  const float scale = attention_scale(hd);
  if (T == 0) return;
  pool.parallel_for(s.batch * KV, [&](int64_t task) {
    const int64_t b = task / KV, kvh = task % KV;
    std::vector<float> kh(T * hd), kt(hd * T), vh(T * hd), qh(T * hd), qt(hd * T), doh(T * hd),
        dOt(hd * T), acc(T * hd), dkh(T * hd, 0.0f), dvh(T * hd, 0.0f), dS(T * T), sq(T * T);
    std::vector<float> tmp(kAttentionBlock * T);
    gather_head(kh.data(), k + b * T * kw, T, kw, kvh * hd, hd);
    gather_head(vh.data(), v + b * T * kw, T, kw, kvh * hd, hd);
    transpose(kh.data(), T, hd, 4, kt.data(), pool);
    // Query heads of the group in order: the kv head's gradients get a fixed summation order.
    for (int64_t h = kvh * group; h < (kvh + 1) * group; ++h) {
      const float* P = probs + (b * H + h) * T * T;
      gather_head(doh.data(), dout + b * T * qw, T, qw, h * hd, hd);
      // dP = dO V^T (lower triangle), then dS = P * (dP - sum_j P dP) * scale in place; the row
      // sum is kept in double because the difference cancels when P is peaked.
      causal_scores(dS.data(), doh.data(), vh.data(), T, hd, 1.0f, tmp.data(), pool);
      for (int64_t t = 0; t < T; ++t) {
        const float* p = P + t * T;
        float* d = dS.data() + t * T;
        double pdp = 0.0;
        for (int64_t j = 0; j <= t; ++j) pdp += static_cast<double>(p[j]) * d[j];
        const float pdpf = static_cast<float>(pdp);
        for (int64_t j = 0; j <= t; ++j) d[j] = p[j] * (d[j] - pdpf) * scale;
      }
      if (dq) {
        matmul(dS.data(), T, Matrix{DType::F32, hd, T, kt.data()}, acc.data(), pool);
        scatter_add_head(dq + b * T * qw, acc.data(), T, qw, h * hd, hd);
      }
      if (dk) {
        gather_head(qh.data(), q + b * T * qw, T, qw, h * hd, hd);
        transpose(qh.data(), T, hd, 4, qt.data(), pool);
        transpose(dS.data(), T, T, 4, sq.data(), pool);
        matmul(sq.data(), T, Matrix{DType::F32, hd, T, qt.data()}, acc.data(), pool);
        for (int64_t i = 0; i < T * hd; ++i) dkh[i] += acc[i];
      }
      if (dv) {
        transpose(doh.data(), T, hd, 4, dOt.data(), pool);
        transpose(P, T, T, 4, sq.data(), pool);
        matmul(sq.data(), T, Matrix{DType::F32, hd, T, dOt.data()}, acc.data(), pool);
        for (int64_t i = 0; i < T * hd; ++i) dvh[i] += acc[i];
      }
    }
    if (dk) scatter_add_head(dk + b * T * kw, dkh.data(), T, kw, kvh * hd, hd);
    if (dv) scatter_add_head(dv + b * T * kw, dvh.data(), T, kw, kvh * hd, hd);
  });
}

}  // namespace eagle2::train

#include "model/decoder_stack.h"

#include <cmath>
#include <cstring>

#include "core/error.h"
#include "kernels/attention.h"
#include "kernels/matmul.h"
#include "kernels/ops.h"

namespace eagle2 {

DecoderStack::DecoderStack(const LlamaConfig& cfg)
    : d_(cfg.hidden_size),
      head_dim_(cfg.head_dim),
      intermediate_(cfg.intermediate_size),
      n_heads_(cfg.num_heads),
      n_kv_heads_(cfg.num_kv_heads),
      eps_(cfg.rms_norm_eps),
      inv_freq_(cfg.rope_inv_freq()) {
  if (cfg.is_moe())
    moe_.emplace(MoeShape{.hidden = cfg.hidden_size,
                          .experts = cfg.num_experts,
                          .used = cfg.num_experts_used,
                          .width = cfg.expert_intermediate_size,
                          .norm_topk_prob = cfg.norm_topk_prob});
}

void DecoderStack::check(const DecoderRows& rows, int64_t n_layers) const {
  const auto n_seq = static_cast<int64_t>(rows.caches.size());
  if (n_seq == 0) fail("decoder: no KV cache given");
  for (KvCache* kv : rows.caches) {
    if (kv == nullptr) fail("decoder: null KV cache");
    if (kv->n_layers() < n_layers || kv->kv_dim() != n_kv_heads_ * head_dim_)
      fail("decoder: a KV cache of ", kv->n_layers(), " layers x ", kv->kv_dim(), " does not fit ",
           n_layers, " layers x ", n_kv_heads_ * head_dim_);
  }
  for (int64_t i = 0; i < rows.n; ++i) {
    const int32_t s = rows.sequence ? rows.sequence[i] : 0;
    if (s < 0 || s >= n_seq) fail("decoder: row ", i, " names sequence ", s, " of ", n_seq);
    const KvCache& kv = *rows.caches[static_cast<size_t>(s)];
    const int64_t lo = kv.size(), hi = kv.size() + kv.pending();
    if (rows.slots[i] < lo || rows.slots[i] >= hi)
      fail("decoder: row ", i, " writes KV slot ", rows.slots[i], " outside the reserved [", lo,
           ", ", hi, ")");
    if (rows.positions[i] < 0)
      fail("decoder: row ", i, " has negative position ", rows.positions[i]);
    for (int64_t j = rows.visible_begin[i]; j < rows.visible_begin[i + 1]; ++j)
      if (rows.visible[j] < lo || rows.visible[j] >= hi)
        fail("decoder: row ", i, " sees KV slot ", rows.visible[j], " outside the reserved [", lo,
             ", ", hi, ")");
  }
}

void DecoderStack::forward(std::span<const DecoderLayerWeights> layers, const DecoderRows& rows,
                           float* x, ThreadPool& pool, const StackCapture& capture) {
  const int64_t T = rows.n;
  if (T == 0) return;
  const auto n_layers = static_cast<int64_t>(layers.size());
  check(rows, n_layers);
  for (int32_t l : capture.layers)
    if (l < 0 || l >= n_layers) fail("decoder: capture of layer ", l, " of ", n_layers);
  for (int32_t r : capture.rows)
    if (r < 0 || r >= T) fail("decoder: capture of row ", r, " of ", T);
  if (!capture.layers.empty() && !capture.rows.empty() && capture.out == nullptr)
    fail("decoder: capture without an output");
  const int64_t qd = n_heads_ * head_dim_, kvd = n_kv_heads_ * head_dim_, half = head_dim_ / 2;
  Workspace& w = ws_;
  grow_to(w.xn, static_cast<size_t>(T * d_));
  grow_to(w.q, static_cast<size_t>(T * qd));
  grow_to(w.k, static_cast<size_t>(T * kvd));
  grow_to(w.v, static_cast<size_t>(T * kvd));
  grow_to(w.attn, static_cast<size_t>(T * qd));
  grow_to(w.proj, static_cast<size_t>(T * d_));
  grow_to(w.cos, static_cast<size_t>(T * half));
  grow_to(w.sin, static_cast<size_t>(T * half));
  rope_tables(w.cos.data(), w.sin.data(), rows.positions, T, inv_freq_.data(), half);
  // Block tables do not change during a forward: every cache reserved its slots before it.
  w.sequences.clear();
  for (const KvCache* kv : rows.caches)
    w.sequences.push_back({.table = kv->block_table().data(), .n_context = kv->size()});
  const auto n_captured = static_cast<int64_t>(capture.layers.size());
  for (size_t l = 0; l < layers.size(); ++l) {
    // The stream before layer l is that layer's input: copied, never touched, so capturing
    // changes no bit of the forward.
    for (int64_t k = 0; k < n_captured; ++k) {
      if (capture.layers[k] != static_cast<int32_t>(l)) continue;
      for (size_t j = 0; j < capture.rows.size(); ++j)
        std::memcpy(capture.out + (static_cast<int64_t>(j) * n_captured + k) * d_,
                    x + static_cast<int64_t>(capture.rows[j]) * d_, d_ * sizeof(float));
    }
    layer(layers[l], static_cast<int64_t>(l), rows, x, pool);
  }
}

void DecoderStack::layer(const DecoderLayerWeights& L, int64_t l, const DecoderRows& rows, float* x,
                         ThreadPool& pool) {
  const int64_t T = rows.n, d = d_, hd = head_dim_, I = intermediate_;
  const int64_t H = n_heads_, KV = n_kv_heads_, qd = H * hd, kvd = KV * hd, half = hd / 2;
  Workspace& w = ws_;
  auto cache_of = [&](int64_t i) -> KvCache& {
    return *rows.caches[static_cast<size_t>(rows.sequence ? rows.sequence[i] : 0)];
  };

  // Attention block. Without an input norm (the EAGLE head) q/k/v read the stream itself.
  const float* attn_in = rows.attn_input ? rows.attn_input : x;
  if (L.input_norm && !rows.attn_input) {
    for (int64_t i = 0; i < T; ++i) rmsnorm(&x[i * d], L.input_norm, eps_, &w.xn[i * d], d);
    attn_in = w.xn.data();
  }
  matmul_multi(attn_in, T,
               {{&L.proj->wq, w.q.data()}, {&L.proj->wk, w.k.data()}, {&L.proj->wv, w.v.data()}},
               pool);
  for (int64_t i = 0; i < T; ++i) {
    if (L.q_bias) {
      for (int64_t j = 0; j < qd; ++j) w.q[i * qd + j] += L.q_bias[j];
      for (int64_t j = 0; j < kvd; ++j) w.k[i * kvd + j] += L.k_bias[j];
      for (int64_t j = 0; j < kvd; ++j) w.v[i * kvd + j] += L.v_bias[j];
    }
    if (L.q_norm) {
      for (int64_t h = 0; h < H; ++h)
        rmsnorm(&w.q[i * qd + h * hd], L.q_norm, eps_, &w.q[i * qd + h * hd], hd);
      for (int64_t h = 0; h < KV; ++h)
        rmsnorm(&w.k[i * kvd + h * hd], L.k_norm, eps_, &w.k[i * kvd + h * hd], hd);
    }
    for (int64_t h = 0; h < H; ++h)
      rope_rotate_half(&w.q[i * qd + h * hd], &w.cos[i * half], &w.sin[i * half], hd);
    for (int64_t h = 0; h < KV; ++h)
      rope_rotate_half(&w.k[i * kvd + h * hd], &w.cos[i * half], &w.sin[i * half], hd);
    KvCache& kv = cache_of(i);
    std::memcpy(kv.key(l, rows.slots[i]), &w.k[i * kvd], kvd * sizeof(float));
    std::memcpy(kv.value(l, rows.slots[i]), &w.v[i * kvd], kvd * sizeof(float));
  }
  const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
  const KernelPath path = active_kernel_path();
  // Attention is per sequence, each through its own block table. Sequences over one pool (the
  // usual case: all of a model's sequences share one) go in one call, so that their rows and KV
  // heads are spread over the threads together.
  for (int64_t r0 = 0; r0 < T;) {
    const KvPool* pool_of_run = &cache_of(r0).pool();
    int64_t r1 = r0 + 1;
    while (r1 < T && &cache_of(r1).pool() == pool_of_run) ++r1;
    const KvCache& kv = cache_of(r0);
    attention_batch(path,
                    {.q = &w.q[r0 * qd],
                     .k = kv.key_base(l),
                     .v = kv.value_base(l),
                     .stride = kvd,
                     .shift = kv.block_shift(),
                     .sequences = w.sequences.data(),
                     .row_sequence = rows.sequence ? rows.sequence + r0 : nullptr,
                     .visible = rows.visible,
                     .visible_begin = rows.visible_begin + r0,
                     .n_rows = r1 - r0,
                     .n_heads = H,
                     .n_kv_heads = KV,
                     .head_dim = hd,
                     .scale = scale,
                     .out = &w.attn[r0 * qd]},
                    pool);
    r0 = r1;
  }
  matmul(w.attn.data(), T, L.proj->wo, w.proj.data(), pool);
  for (int64_t j = 0; j < T * d; ++j) x[j] += w.proj[j];

  // MLP block.
  for (int64_t i = 0; i < T; ++i) rmsnorm(&x[i * d], L.post_attention_norm, eps_, &w.xn[i * d], d);
  if (L.moe) {
    if (!moe_) fail("decoder: layer ", l, " has experts but the model's config has none");
    moe_->forward(*L.moe, w.xn.data(), T, w.proj.data(), pool);
    for (int64_t j = 0; j < T * d; ++j) x[j] += w.proj[j];
    return;
  }
  // Grown here, by the dense layers that use it: a mixture of experts never grows it (its
  // intermediate_size, qwen3moe.feed_forward_length, sizes no tensor and MoeFfn owns its scratch),
  // while an EAGLE head whose config carries its MoE target's expert fields (train-head writes
  // the target's config) still runs its one dense layer.
  grow_to(w.gate, static_cast<size_t>(T * I));
  grow_to(w.up, static_cast<size_t>(T * I));
  matmul_multi(w.xn.data(), T, {{&L.proj->w_gate, w.gate.data()}, {&L.proj->w_up, w.up.data()}},
               pool);
  // Elementwise, so split across the pool (the same bits): one exp per element made it the
  // largest serial step of a verification forward, with the other threads waiting.
  const int64_t n_mlp = T * I, chunks = n_mlp >= 4096 ? pool.size() : 1;
  pool.parallel_for(chunks, [&](int64_t c) {
    const int64_t b = n_mlp * c / chunks, e = n_mlp * (c + 1) / chunks;
    swiglu_inplace(w.gate.data() + b, w.up.data() + b, e - b);
  });
  matmul(w.gate.data(), T, L.proj->w_down, w.proj.data(), pool);
  for (int64_t j = 0; j < T * d; ++j) x[j] += w.proj[j];
}

}  // namespace eagle2

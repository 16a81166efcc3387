#include "model/llama_model.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <set>

#include "core/error.h"
#include "kernels/attention.h"
#include "kernels/matmul.h"
#include "kernels/ops.h"
#include "model/checkpoint_checks.h"

namespace eagle2 {

namespace {

std::vector<float> to_f32(const TensorView& t) {
  std::vector<float> out(static_cast<size_t>(t.numel()));
  convert_to_f32(t.dtype, t.data, out.data(), out.size());
  return out;
}

// N for a tensor named "model.layers.N.<...>", else -1.
int64_t layer_index(const std::string& name) {
  const std::string prefix = "model.layers.";
  if (name.rfind(prefix, 0) != 0) return -1;
  int64_t index = -1;
  const char* begin = name.data() + prefix.size();
  const char* end = name.data() + name.size();
  const auto [rest, ec] = std::from_chars(begin, end, index);
  if (ec != std::errc() || rest == begin || rest == end || *rest != '.') return -1;
  return index;
}

template <class T>
void grow(std::vector<T>& v, size_t n) {
  if (v.size() < n) v.resize(n);
}

}  // namespace

std::unique_ptr<LlamaModel> LlamaModel::load(const std::string& dir) {
  if (!std::filesystem::is_directory(dir)) fail(dir, ": model directory not found");
  std::unique_ptr<LlamaModel> m(new LlamaModel());
  m->dir_ = dir;
  m->cfg_ = LlamaConfig::load(dir + "/config.json");
  m->store_ = TensorStore::open_dir(dir);
  const LlamaConfig& c = m->cfg_;
  const int64_t d = c.hidden_size, hd = c.head_dim, I = c.intermediate_size, V = c.vocab_size;
  const int64_t qd = c.num_heads * hd, kvd = c.num_kv_heads * hd;
  const TensorStore& s = m->store_;
  std::set<std::string> used;  // every tensor bound, for the leftover check at the end
  auto take = [&](const std::string& name, const std::vector<int64_t>& shape) -> const TensorView& {
    used.insert(name);
    return s.get(name, shape);
  };
  auto layer_prefix = [](int64_t i) { return "model.layers." + std::to_string(i) + "."; };

  // The last layer must exist before anything is sized by num_hidden_layers: a config claiming
  // far more layers than the checkpoint holds is refused here, not after allocating for them.
  const std::string last_layer = layer_prefix(c.num_layers - 1) + "input_layernorm.weight";
  if (!s.has(last_layer))
    fail(s.where(), ": tensor '", last_layer, "' not found (config.json has num_hidden_layers ",
         c.num_layers, ")");

  m->embed_ = take("model.embed_tokens.weight", {V, d});
  m->layers_.resize(static_cast<size_t>(c.num_layers));
  for (int64_t i = 0; i < c.num_layers; ++i) {
    const std::string p = layer_prefix(i);
    Layer& L = m->layers_[static_cast<size_t>(i)];
    L.attn_norm = to_f32(take(p + "input_layernorm.weight", {d}));
    L.mlp_norm = to_f32(take(p + "post_attention_layernorm.weight", {d}));
    static_cast<DecoderProjections&>(L) = bind_decoder_projections(take, p, d, qd, kvd, I);
  }
  m->final_norm_ = to_f32(take("model.norm.weight", {d}));
  if (c.tie_word_embeddings && !s.has("lm_head.weight")) {
    m->lm_head_ = as_matrix(m->embed_);
  } else {
    m->lm_head_ = as_matrix(take("lm_head.weight", {V, d}));
  }
  if (const TensorView* extra = first_unused_tensor(s.tensors(), used)) {
    // A layer past the configured count is the common case (config.json and checkpoint disagree
    // on the depth): say so rather than just "unexpected".
    if (layer_index(extra->name) >= c.num_layers)
      fail(extra->file, ": tensor '", extra->name,
           "' is past the last layer: config.json has num_hidden_layers ", c.num_layers);
    fail(extra->file, ": unexpected tensor '", extra->name,
         "': not a weight of the model config.json describes");
  }
  m->inv_freq_ = c.rope_inv_freq();
  return m;
}

int64_t LlamaModel::parameter_count() const {
  int64_t n = 0;
  for (const auto& [name, t] : store_.tensors()) n += t.numel();
  return n;
}

size_t LlamaModel::weight_bytes() const {
  size_t n = 0;
  for (const auto& [name, t] : store_.tensors()) n += t.nbytes();
  return n;
}

std::vector<std::string> LlamaModel::weight_dtypes() const {
  std::set<std::string> names;
  for (const auto& [name, t] : store_.tensors()) names.insert(dtype_name(t.dtype));
  return {names.begin(), names.end()};
}

KvCache LlamaModel::make_cache(int64_t capacity) const {
  if (capacity <= 0) fail("--ctx must be positive (got ", capacity, ")");
  if (capacity > cfg_.max_position_embeddings)
    fail("--ctx ", capacity, " exceeds the model's max_position_embeddings ",
         cfg_.max_position_embeddings);
  if (cfg_.sliding_window && capacity > *cfg_.sliding_window)
    fail("--ctx ", capacity, " exceeds the model's sliding_window ", *cfg_.sliding_window,
         ": contexts beyond the window are not supported");
  return KvCache(cfg_.num_layers, cfg_.num_kv_heads * cfg_.head_dim, capacity);
}

void LlamaModel::embed(int32_t token, float* out) const {
  const int64_t d = cfg_.hidden_size;
  const char* row = static_cast<const char*>(embed_.data) +
                    static_cast<size_t>(token) * static_cast<size_t>(d) * dtype_size(embed_.dtype);
  convert_to_f32(embed_.dtype, row, out, static_cast<size_t>(d));
}

void LlamaModel::forward(const Batch& batch, KvCache& kv, std::span<const int32_t> logit_rows,
                         ForwardResult& out, ThreadPool& pool) {
  const LlamaConfig& c = cfg_;
  const int64_t T = batch.size();
  const int64_t d = c.hidden_size, hd = c.head_dim, I = c.intermediate_size, V = c.vocab_size;
  const int64_t H = c.num_heads, KV = c.num_kv_heads;
  const int64_t qd = H * hd, kvd = KV * hd, half = hd / 2;
  batch.validate(V);
  for (int32_t r : logit_rows)
    if (r < 0 || r >= T) fail("forward: logit row ", r, " outside the batch of ", T);
  if (T == 0) {
    out.logits.clear();
    out.hidden.clear();
    return;
  }
  for (int64_t i = 0; i < T; ++i)
    if (batch.positions[i] >= kv.capacity())
      fail("position ", batch.positions[i], " is beyond the context size ", kv.capacity());
  kv.begin_batch(T);
  const int64_t n_ctx = kv.size();
  const KernelPath path = active_kernel_path();

  Workspace& w = ws_;
  grow(w.x, T * d);
  grow(w.xn, T * d);
  grow(w.q, T * qd);
  grow(w.k, T * kvd);
  grow(w.v, T * kvd);
  grow(w.attn, T * qd);
  grow(w.proj, T * d);
  grow(w.gate, T * I);
  grow(w.up, T * I);
  grow(w.cos, T * half);
  grow(w.sin, T * half);

  // Per row: the batch rows it sees (ancestors and itself), flattened.
  w.visible.clear();
  w.visible_begin.assign(static_cast<size_t>(T + 1), 0);
  for (int64_t i = 0; i < T; ++i) {
    batch.visible_rows(i, w.rows);
    for (int32_t r : w.rows) w.visible.push_back(static_cast<int32_t>(n_ctx + r));
    w.visible_begin[i + 1] = static_cast<int64_t>(w.visible.size());
  }

  rope_tables(w.cos.data(), w.sin.data(), batch.positions.data(), T, inv_freq_.data(), half);

  for (int64_t i = 0; i < T; ++i) embed(batch.tokens[i], &w.x[i * d]);

  const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
  for (size_t l = 0; l < layers_.size(); ++l) {
    const Layer& L = layers_[l];
    // Attention block.
    for (int64_t i = 0; i < T; ++i)
      rmsnorm(&w.x[i * d], L.attn_norm.data(), c.rms_norm_eps, &w.xn[i * d], d);
    matmul_multi(w.xn.data(), T, {{&L.wq, w.q.data()}, {&L.wk, w.k.data()}, {&L.wv, w.v.data()}}, pool);
    for (int64_t i = 0; i < T; ++i) {
      for (int64_t h = 0; h < H; ++h)
        rope_rotate_half(&w.q[i * qd + h * hd], &w.cos[i * half], &w.sin[i * half], hd);
      for (int64_t h = 0; h < KV; ++h)
        rope_rotate_half(&w.k[i * kvd + h * hd], &w.cos[i * half], &w.sin[i * half], hd);
      std::memcpy(kv.key(static_cast<int64_t>(l), n_ctx + i), &w.k[i * kvd], kvd * sizeof(float));
      std::memcpy(kv.value(static_cast<int64_t>(l), n_ctx + i), &w.v[i * kvd],
                  kvd * sizeof(float));
    }
    attention_batch(path,
                    {.q = w.q.data(), .k = kv.key(static_cast<int64_t>(l), 0),
                     .v = kv.value(static_cast<int64_t>(l), 0), .stride = kvd, .n_context = n_ctx,
                     .visible = w.visible.data(), .visible_begin = w.visible_begin.data(),
                     .n_rows = T, .n_heads = H, .n_kv_heads = KV, .head_dim = hd, .scale = scale,
                     .out = w.attn.data()},
                    pool);
    matmul(w.attn.data(), T, L.wo, w.proj.data(), pool);
    for (int64_t j = 0; j < T * d; ++j) w.x[j] += w.proj[j];

    // MLP block.
    for (int64_t i = 0; i < T; ++i)
      rmsnorm(&w.x[i * d], L.mlp_norm.data(), c.rms_norm_eps, &w.xn[i * d], d);
    matmul_multi(w.xn.data(), T, {{&L.w_gate, w.gate.data()}, {&L.w_up, w.up.data()}}, pool);
    swiglu_inplace(w.gate.data(), w.up.data(), T * I);
    matmul(w.gate.data(), T, L.w_down, w.proj.data(), pool);
    for (int64_t j = 0; j < T * d; ++j) w.x[j] += w.proj[j];
  }

  out.hidden.resize(static_cast<size_t>(T * d));
  for (int64_t i = 0; i < T; ++i)
    rmsnorm(&w.x[i * d], final_norm_.data(), c.rms_norm_eps, &out.hidden[i * d], d);

  const auto n_logits = static_cast<int64_t>(logit_rows.size());
  grow(w.rows_hidden, n_logits * d);
  for (int64_t j = 0; j < n_logits; ++j)
    std::memcpy(&w.rows_hidden[j * d], &out.hidden[logit_rows[j] * d], d * sizeof(float));
  out.logits.resize(static_cast<size_t>(n_logits * V));
  if (n_logits > 0) matmul(w.rows_hidden.data(), n_logits, lm_head_, out.logits.data(), pool);
}

}  // namespace eagle2

#include "model/llama_model.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <set>

#include "core/error.h"
#include "core/mapped_file.h"
#include "core/quant_blocks.h"
#include "io/gguf.h"
#include "io/gguf_weights.h"
#include "kernels/cpu.h"
#include "kernels/matmul.h"
#include "kernels/ops.h"
#include "model/checkpoint_checks.h"
#include "model/upcast_weights.h"

namespace eagle2 {

namespace {

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

}  // namespace

std::unique_ptr<LlamaModel> LlamaModel::load(const std::string& dir, const LoadOptions& options) {
  std::unique_ptr<LlamaModel> m(new LlamaModel());
  m->dir_ = dir;
  std::shared_ptr<const GgufFile> gguf;  // a GGUF file's bytes, when the model is one
  bool qk_rows_copied = false;           // Q/K rows un-interleaved into memory of our own
  if (dir.ends_with(".gguf") && !std::filesystem::is_directory(dir)) {
    // A GGUF file: config from its metadata, tensors under their Hugging Face names and layout.
    auto file = std::make_shared<const GgufFile>(dir, weight_residency());
    gguf = file;
    m->cfg_ = LlamaConfig::from_gguf(*file);
    // llama.cpp interleaved them in its "llama" architecture (LLaMA, Mistral, Mixtral).
    qk_rows_copied = file->string("general.architecture") == "llama";
    m->store_ = gguf_tensor_store(std::move(file), m->cfg_.head_dim, qk_rows_copied);
  } else {
    if (!std::filesystem::is_directory(dir)) fail(dir, ": model directory not found");
    m->cfg_ = LlamaConfig::load(dir + "/config.json");
    // Their folders hold one tensor per expert (block_sparse_moe.experts.N.w1, mlp.experts.N.
    // gate_proj); the experts are bound stacked, as GGUF files hold them.
    if (m->cfg_.is_moe())
      fail(dir, ": ", m->cfg_.architecture,
           " runs from a GGUF file; its Hugging Face folder (one tensor per expert) is not "
           "supported yet (llama.cpp's convert_hf_to_gguf.py makes the file)");
    m->store_ = TensorStore::open_dir(dir);
  }
  if (options.upcast_f32) m->store_ = upcast_to_f32(std::move(m->store_));
  const LlamaConfig& c = m->cfg_;
  const int64_t d = c.hidden_size, hd = c.head_dim, I = c.intermediate_size, V = c.vocab_size;
  const int64_t qd = c.num_heads * hd, kvd = c.num_kv_heads * hd;
  const TensorStore& s = m->store_;
  std::set<std::string> used;  // every tensor bound, for the leftover check at the end
  auto take = [&](const std::string& name, const std::vector<int64_t>& shape) -> const TensorView& {
    used.insert(name);
    return s.get(name, shape);
  };
  const MoeShape moe_shape{.hidden = d,
                           .experts = c.num_experts,
                           .used = c.num_experts_used,
                           .width = c.expert_intermediate_size,
                           .norm_topk_prob = c.norm_topk_prob};
  auto layer_prefix = [](int64_t i) { return "model.layers." + std::to_string(i) + "."; };

  // The last layer must exist before anything is sized by num_hidden_layers: a config claiming
  // far more layers than the checkpoint holds is refused here, not after allocating for them.
  const std::string last_layer = layer_prefix(c.num_layers - 1) + "input_layernorm.weight";
  if (!s.has(last_layer))
    fail(s.where(), ": tensor '", last_layer, "' not found (config.json has num_hidden_layers ",
         c.num_layers, ")");

  m->embed_ = require_float(take("model.embed_tokens.weight", {V, d}));
  m->layers_.resize(static_cast<size_t>(c.num_layers));
  for (int64_t i = 0; i < c.num_layers; ++i) {
    const std::string p = layer_prefix(i);
    Layer& L = m->layers_[static_cast<size_t>(i)];
    L.attn_norm = to_f32(take(p + "input_layernorm.weight", {d}));
    L.mlp_norm = to_f32(take(p + "post_attention_layernorm.weight", {d}));
    static_cast<DecoderProjections&>(L) =
        bind_decoder_projections(take, p, d, qd, kvd, c.is_moe() ? 0 : I);
    if (c.is_moe()) L.moe = bind_moe_weights(take, p, moe_shape);
    if (c.qkv_bias) {
      L.q_bias = to_f32(take(p + "self_attn.q_proj.bias", {qd}));
      L.k_bias = to_f32(take(p + "self_attn.k_proj.bias", {kvd}));
      L.v_bias = to_f32(take(p + "self_attn.v_proj.bias", {kvd}));
    }
    if (c.qk_norm) {
      L.q_norm = to_f32(take(p + "self_attn.q_norm.weight", {hd}));
      L.k_norm = to_f32(take(p + "self_attn.k_norm.weight", {hd}));
    }
  }
  m->final_norm_ = to_f32(take("model.norm.weight", {d}));
  if (c.tie_word_embeddings && !s.has("lm_head.weight")) {
    m->lm_head_ = as_matrix(m->embed_);
  } else {
    m->lm_head_ = as_matrix(take("lm_head.weight", {V, d}));
  }
  m->group_quantized_rows(gguf.get(), qk_rows_copied);
  if (const TensorView* extra = first_unused_tensor(s.tensors(), used)) {
    // A layer past the configured count is the common case (config.json and checkpoint disagree
    // on the depth): say so rather than just "unexpected".
    if (layer_index(extra->name) >= c.num_layers)
      fail(extra->file, ": tensor '", extra->name,
           "' is past the last layer: config.json has num_hidden_layers ", c.num_layers);
    fail(extra->file, ": unexpected tensor '", extra->name,
         "': not a weight of the model config.json describes");
  }
  auto data_or_null = [](const std::vector<float>& v) { return v.empty() ? nullptr : v.data(); };
  for (const Layer& L : m->layers_)
    m->layer_weights_.push_back({.proj = &L,
                                 .input_norm = L.attn_norm.data(),
                                 .post_attention_norm = L.mlp_norm.data(),
                                 .q_bias = data_or_null(L.q_bias),
                                 .k_bias = data_or_null(L.k_bias),
                                 .v_bias = data_or_null(L.v_bias),
                                 .q_norm = data_or_null(L.q_norm),
                                 .k_norm = data_or_null(L.k_norm),
                                 .moe = c.is_moe() ? &L.moe : nullptr});
  m->stack_.emplace(c);
  return m;
}

void LlamaModel::group_quantized_rows(const GgufFile* gguf, bool qk_copied) {
  // The AVX-512 VNNI kernels read Q8_0/Q4_0 matrices fastest with sixteen rows interleaved
  // (MatrixLayout::kRowGroups16, core/tensor.h: the same bytes rearranged, so no memory is added).
  // Only where those kernels run, and only in memory the model owns: weights read into its own
  // pages (not a read-only mapping of the file) or the Q/K rows it already copied. A tied lm_head
  // is the embedding, whose rows embed() reads as the file has them: left alone.
  if (gguf == nullptr || !(active_kernel_path() == KernelPath::Avx512 && cpu_has_avx512_vnni()))
    return;
  const bool own_pages = gguf->residency() == Residency::kHugePageCopy;
  auto group = [&](Matrix& W, bool owned) {
    if (owned && can_group_rows16(W)) group_rows16(W, const_cast<void*>(W.data));
  };
  if (own_pages) gguf->set_writable(true);
  // Expert slices stay in the file's row layout (kRows): every kernel path reads it.
  for (Layer& L : layers_) {
    group(L.wq, own_pages || qk_copied);
    group(L.wk, own_pages || qk_copied);
    for (Matrix* W : {&L.wv, &L.wo}) group(*W, own_pages);
    if (L.moe.gate.empty())
      for (Matrix* W : {&L.w_gate, &L.w_up, &L.w_down}) group(*W, own_pages);
  }
  if (lm_head_.data != embed_.data) group(lm_head_, own_pages);
  if (own_pages) gguf->set_writable(false);
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
  make_cache_checks(capacity);
  return KvCache(cfg_.num_layers, cfg_.num_kv_heads * cfg_.head_dim, capacity);
}

void LlamaModel::make_cache_checks(int64_t capacity) const {
  if (capacity <= 0) fail("--ctx must be positive (got ", capacity, ")");
  if (capacity > cfg_.max_position_embeddings)
    fail("--ctx ", capacity, " exceeds the model's max_position_embeddings ",
         cfg_.max_position_embeddings);
  if (cfg_.sliding_window && capacity > *cfg_.sliding_window)
    fail("--ctx ", capacity, " exceeds the model's sliding_window ", *cfg_.sliding_window,
         ": contexts beyond the window are not supported");
}

std::shared_ptr<KvPool> LlamaModel::make_pool(int64_t tokens, int64_t block_size) const {
  if (tokens <= 0) fail("KV pool: the number of tokens must be positive (got ", tokens, ")");
  if (block_size <= 0) fail("KV pool: the block size must be positive (got ", block_size, ")");
  return std::make_shared<KvPool>(cfg_.num_layers, cfg_.num_kv_heads * cfg_.head_dim, block_size,
                                  KvPool::blocks_for_tokens(tokens, block_size));
}

KvCache LlamaModel::make_cache(std::shared_ptr<KvPool> pool, int64_t capacity) const {
  if (!pool || pool->n_layers() != cfg_.num_layers ||
      pool->kv_dim() != cfg_.num_kv_heads * cfg_.head_dim)
    fail("KV pool: not a pool of this model's layers and key/value width");
  make_cache_checks(capacity);
  return KvCache(std::move(pool), capacity);
}

void LlamaModel::embed(int32_t token, float* out) const {
  const int64_t d = cfg_.hidden_size;
  // A quantized embedding is dequantized one row at a time: no f32 copy of the table is kept.
  const char* row = static_cast<const char*>(embed_.data) +
                    static_cast<size_t>(token) * dtype_bytes(embed_.dtype, d);
  convert_to_f32(embed_.dtype, row, out, static_cast<size_t>(d));
}

void LlamaModel::forward(const Batch& batch, KvCache& kv, std::span<const int32_t> logit_rows,
                         ForwardResult& out, ThreadPool& pool, const ForwardCapture& capture) {
  KvCache* const caches[] = {&kv};
  forward(batch, caches, logit_rows, out, pool, capture);
}

void LlamaModel::forward(const Batch& batch, std::span<KvCache* const> caches,
                         std::span<const int32_t> logit_rows, ForwardResult& out, ThreadPool& pool,
                         const ForwardCapture& capture) {
  const LlamaConfig& c = cfg_;
  const int64_t T = batch.size();
  const int64_t d = c.hidden_size, V = c.vocab_size;
  const auto n_seq = static_cast<int64_t>(caches.size());
  batch.validate(V, n_seq);
  for (int32_t r : logit_rows)
    if (r < 0 || r >= T) fail("forward: logit row ", r, " outside the batch of ", T);
  for (int32_t l : capture.layers)
    if (l < 0 || l >= c.num_layers)
      fail("forward: capture layer ", l, " outside the model's ", c.num_layers, " layers");
  for (int32_t r : capture.rows)
    if (r < 0 || r >= T) fail("forward: capture row ", r, " outside the batch of ", T);
  for (int64_t s = 0; s < n_seq; ++s) {
    if (caches[s] == nullptr) fail("forward: sequence ", s, " has no KV cache");
    for (int64_t t = 0; t < s; ++t)
      if (caches[t] == caches[s]) fail("forward: sequences ", t, " and ", s, " share one KV cache");
  }
  if (T == 0) {
    out.logits.clear();
    out.hidden.clear();
    out.captured.clear();
    return;
  }
  for (int64_t i = 0; i < T; ++i)
    if (batch.positions[i] >= caches[batch.sequence(i)]->capacity())
      fail("position ", batch.positions[i], " is beyond the context size ",
           caches[batch.sequence(i)]->capacity());

  Workspace& w = ws_;
  // Each sequence's rows become its pending slots in batch order. If one cache cannot reserve
  // them (its context or the shared pool is full), the others give theirs back.
  w.count.assign(static_cast<size_t>(n_seq), 0);
  for (int64_t i = 0; i < T; ++i) ++w.count[static_cast<size_t>(batch.sequence(i))];
  for (int64_t s = 0; s < n_seq; ++s) {
    if (w.count[s] == 0) continue;
    try {
      caches[s]->begin_batch(w.count[s]);
    } catch (...) {
      for (int64_t t = 0; t < s; ++t)
        if (w.count[t] > 0) caches[t]->drop_pending();
      throw;
    }
  }

  grow_to(w.x, static_cast<size_t>(T * d));
  // Row i writes the next pending slot of its sequence and sees its ancestors' slots (and its
  // own), flattened.
  w.slots.resize(static_cast<size_t>(T));
  w.count.assign(static_cast<size_t>(n_seq), 0);
  for (int64_t i = 0; i < T; ++i) {
    const auto s = static_cast<size_t>(batch.sequence(i));
    w.slots[i] = static_cast<int32_t>(caches[s]->size() + w.count[s]++);
  }
  w.visible.clear();
  w.visible_begin.assign(static_cast<size_t>(T + 1), 0);
  for (int64_t i = 0; i < T; ++i) {
    batch.visible_rows(i, w.rows);
    for (int32_t r : w.rows) w.visible.push_back(w.slots[r]);
    w.visible_begin[i + 1] = static_cast<int64_t>(w.visible.size());
  }
  for (int64_t i = 0; i < T; ++i) embed(batch.tokens[i], &w.x[i * d]);

  const DecoderRows rows{.n = T,
                         .caches = caches,
                         .sequence = batch.sequences.empty() ? nullptr : batch.sequences.data(),
                         .positions = batch.positions.data(),
                         .slots = w.slots.data(),
                         .visible = w.visible.data(),
                         .visible_begin = w.visible_begin.data()};
  out.captured.resize(capture.rows.size() * capture.layers.size() * static_cast<size_t>(d));
  stack_->forward(layer_weights_, rows, w.x.data(), pool,
                  {.layers = capture.layers, .rows = capture.rows, .out = out.captured.data()});
  forward_calls_.fetch_add(1, std::memory_order_relaxed);

  out.hidden.resize(static_cast<size_t>(T * d));
  for (int64_t i = 0; i < T; ++i)
    rmsnorm(&w.x[i * d], final_norm_.data(), c.rms_norm_eps, &out.hidden[i * d], d);

  const auto n_logits = static_cast<int64_t>(logit_rows.size());
  grow_to(w.rows_hidden, static_cast<size_t>(n_logits * d));
  for (int64_t j = 0; j < n_logits; ++j)
    std::memcpy(&w.rows_hidden[j * d], &out.hidden[logit_rows[j] * d], d * sizeof(float));
  out.logits.resize(static_cast<size_t>(n_logits * V));
  if (n_logits > 0) matmul(w.rows_hidden.data(), n_logits, lm_head_, out.logits.data(), pool);
}

}  // namespace eagle2

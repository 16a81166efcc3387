#include "draft/eagle_head.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <set>

#include "core/error.h"
#include "core/quant_blocks.h"
#include "core/regular_file.h"
#include "draft/matrix_quantize.h"
#include "kernels/cpu.h"
#include "kernels/matmul.h"
#include "kernels/ops.h"
#include "model/checkpoint_checks.h"

namespace eagle2 {

namespace {

std::string read_text(const std::string& path) {
  return read_regular_file(path, read_limit::kJson, "a JSON config");
}

}  // namespace

const TensorView& EagleHead::need(const std::map<std::string, TensorView>& t,
                                  const std::string& where, const std::string& name,
                                  const std::vector<int64_t>& shape) {
  auto it = t.find(name);
  if (it == t.end()) fail(where, ": tensor '", name, "' not found");
  if (it->second.shape != shape)
    fail(where, ": tensor '", name, "' has shape ", shape_string(it->second.shape), ", expected ",
         shape_string(shape));
  require_finite(it->second, where, name);  // every tensor the head binds is used
  return it->second;
}

std::unique_ptr<EagleHead> EagleHead::load(const std::string& dir, const LlamaModel& target) {
  if (!std::filesystem::is_directory(dir)) fail(dir, ": draft head directory not found");
  const std::string st = dir + "/model.safetensors", bin = dir + "/pytorch_model.bin";
  if (std::filesystem::exists(st)) return load_files(dir + "/config.json", st, target);
  if (std::filesystem::exists(bin)) return load_files(dir + "/config.json", bin, target);
  fail(dir, ": no model.safetensors or pytorch_model.bin in the draft head folder");
}

std::unique_ptr<EagleHead> EagleHead::load_files(const std::string& config_path,
                                                 const std::string& weights_path,
                                                 const LlamaModel& target) {
  std::unique_ptr<EagleHead> h(new EagleHead());
  const HeadConfig hc = parse_head_config(read_text(config_path), config_path);
  h->cfg_ = hc.llama;
  const LlamaConfig& t = target.config();
  const LlamaConfig& c = h->cfg_;
  if (hc.target_hidden_size && *hc.target_hidden_size != t.hidden_size)
    fail(config_path, ": draft head \"target_hidden_size\" ", *hc.target_hidden_size,
         " does not match the target's hidden_size ", t.hidden_size);
  if (c.hidden_size != t.hidden_size)
    fail(config_path, ": draft head hidden_size ", c.hidden_size, " does not match the target's ",
         t.hidden_size);
  if (c.vocab_size != t.vocab_size)
    fail(config_path, ": draft head vocab_size ", c.vocab_size, " does not match the target's ",
         t.vocab_size);
  if (c.num_layers != 1)
    fail(config_path, ": an EAGLE head has one decoder layer (num_hidden_layers ", c.num_layers,
         ")");

  const bool is_bin =
      weights_path.size() >= 4 && weights_path.compare(weights_path.size() - 4, 4, ".bin") == 0;
  if (is_bin)
    h->torch_store_ = std::make_unique<TorchCheckpoint>(weights_path);
  else
    h->st_store_ = std::make_unique<TensorStore>(TensorStore::open_files({weights_path}));
  const std::map<std::string, TensorView>& tensors =
      is_bin ? h->torch_store_->tensors() : h->st_store_->tensors();

  // EAGLE-3 by config.json, by its draft -> target map, or by an fc over three target widths
  // (an EAGLE-1/2 fc reads two: the embedding and one feature).
  const auto fc = tensors.find("fc.weight");
  const bool eagle3 = hc.says_eagle3 || tensors.count("d2t") ||
                      (fc != tensors.end() && fc->second.shape.size() == 2 &&
                       fc->second.shape[1] == 3 * t.hidden_size);
  if (eagle3) {
    h->bind_eagle3(hc, tensors, weights_path, config_path, target);
    return h;
  }
  if (c.num_heads != t.num_heads || c.num_kv_heads != t.num_kv_heads)
    fail(config_path, ": draft head has ", c.num_heads, " attention heads / ", c.num_kv_heads,
         " key/value heads, the target ", t.num_heads, " / ", t.num_kv_heads,
         " (an EAGLE head is made for one target)");
  h->bind(tensors, weights_path, target);
  if (hc.fc_bias != h->has_fc_bias())
    fail(weights_path, hc.fc_bias ? ": config.json says \"bias\": true but fc.bias is missing"
                                  : ": fc.bias is present but config.json says \"bias\": false");
  return h;
}

void EagleHead::check_embedding_copy(const std::map<std::string, TensorView>& t,
                                     const std::string& where, const LlamaModel& target,
                                     std::set<std::string>& used) {
  auto it = t.find("embed_tokens.weight");
  if (it == t.end()) return;
  used.insert(it->first);
  if (it->second.shape != target.embedding().shape)
    fail(where, ": tensor 'embed_tokens.weight' has shape ", shape_string(it->second.shape),
         ", but the target's embedding is ", shape_string(target.embedding().shape));
}

void EagleHead::bind(const std::map<std::string, TensorView>& t, const std::string& where,
                     const LlamaModel& target) {
  target_ = &target;
  const LlamaConfig& c = cfg_;
  const int64_t d = c.hidden_size, hd = c.head_dim, I = c.intermediate_size;
  const int64_t qd = c.num_heads * hd, kvd = c.num_kv_heads * hd;
  for (const char* bad : {"layers.0.self_attn.q_proj.bias", "layers.0.input_layernorm.weight"})
    if (t.count(bad)) fail(where, ": unexpected tensor '", bad, "' for an EAGLE-1/2 head");
  std::set<std::string> used;  // every tensor bound, for the leftover check at the end
  auto take = [&](const std::string& name, const std::vector<int64_t>& shape) -> const TensorView& {
    used.insert(name);
    return need(t, where, name, shape);
  };
  check_embedding_copy(t, where, target, used);
  fc_ = as_matrix(take("fc.weight", {d, 2 * d}));
  if (t.count("fc.bias")) fc_bias_ = to_f32(take("fc.bias", {d}));
  proj_ = bind_decoder_projections(take, "layers.0.", d, qd, kvd, I);
  mlp_norm_ = to_f32(take("layers.0.post_attention_layernorm.weight", {d}));
  // A leftover tensor means the checkpoint is not the head config.json describes (another
  // architecture, or more layers than the one an EAGLE-1/2 head has).
  if (const TensorView* extra = first_unused_tensor(t, used))
    fail(where, ": unexpected tensor '", extra->name, "' for an EAGLE-1/2 head");
  n_params_ = 0;
  for (const auto& [name, tv] : t)
    if (name != "embed_tokens.weight") n_params_ += tv.numel();
  layer_ = {.proj = &proj_, .input_norm = nullptr, .post_attention_norm = mlp_norm_.data()};
  stack_.emplace(c);
  feature_width_ = d;
}

KvCache EagleHead::make_cache(int64_t capacity) const {
  return KvCache(1, cfg_.num_kv_heads * cfg_.head_dim, capacity);
}

void EagleHead::forward(const Rows& rows, KvCache& kv, float* out, ThreadPool& pool) {
  KvCache* const caches[] = {&kv};
  forward(rows, caches, out, pool);
}

void EagleHead::forward(const Rows& rows, std::span<KvCache* const> caches, float* out,
                        ThreadPool& pool) {
  const LlamaConfig& c = cfg_;
  const auto n = static_cast<int64_t>(rows.tokens.size());
  if (n == 0) return;
  if (rows.positions.size() != rows.tokens.size() || rows.slots.size() != rows.tokens.size() ||
      rows.visible_begin.size() != rows.tokens.size() + 1 ||
      (!rows.sequence.empty() && rows.sequence.size() != rows.tokens.size()))
    fail("draft head: the rows' tokens, positions, slots, sequences and visible offsets disagree");
  if (kind_ == Kind::Eagle3) return forward_eagle3(rows, caches, out, pool);
  const int64_t d = c.hidden_size;
  Workspace& w = ws_;
  grow_to(w.cat, static_cast<size_t>(n * 2 * d));
  grow_to(w.x, static_cast<size_t>(n * d));

  // x = fc(concat(embed(token), hidden)): the embedding comes first, as in the reference.
  for (int64_t i = 0; i < n; ++i) {
    const int32_t tok = rows.tokens[i];
    if (tok < 0 || tok >= c.vocab_size)
      fail("draft head: token id ", tok, " outside the vocabulary");
    target_->embed(tok, &w.cat[i * 2 * d]);
    std::memcpy(&w.cat[i * 2 * d + d], rows.hidden + i * d, d * sizeof(float));
  }
  matmul(w.cat.data(), n, fc_, w.x.data(), pool);
  if (!fc_bias_.empty())
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < d; ++j) w.x[i * d + j] += fc_bias_[j];

  // Then the target's decoder layer without its input norm; the result is the predicted feature
  // (no final norm).
  const DecoderRows decoder_rows{.n = n,
                                 .caches = caches,
                                 .sequence = rows.sequence.empty() ? nullptr : rows.sequence.data(),
                                 .positions = rows.positions.data(),
                                 .slots = rows.slots.data(),
                                 .visible = rows.visible.data(),
                                 .visible_begin = rows.visible_begin.data()};
  stack_->forward(std::span(&layer_, 1), decoder_rows, w.x.data(), pool);
  std::memcpy(out, w.x.data(), static_cast<size_t>(n * d) * sizeof(float));
}

void EagleHead::forward_causal(const float* features, std::span<const int32_t> tokens, KvCache& kv,
                               float* out, ThreadPool& pool) {
  const auto n = static_cast<int64_t>(tokens.size());
  if (n == 0) return;
  const int64_t base = kv.size();
  kv.begin_batch(n);
  std::vector<int32_t> positions(n), slots(n), visible;
  std::vector<int64_t> begin(n + 1, 0);
  visible.reserve(static_cast<size_t>(n * (n + 1) / 2));
  for (int64_t i = 0; i < n; ++i) {
    positions[i] = slots[i] = static_cast<int32_t>(base + i);
    for (int64_t j = 0; j <= i; ++j) visible.push_back(static_cast<int32_t>(base + j));
    begin[i + 1] = static_cast<int64_t>(visible.size());
  }
  Rows rows{features, tokens, positions, slots, visible, begin};
  rows.from_features = true;
  forward(rows, kv, out, pool);
  kv.keep_all();
}

std::optional<DType> EagleHead::weights_type_for(const LlamaModel& target) {
  const std::vector<std::string> types = target.weight_dtypes();
  auto has = [&](const char* t) { return std::find(types.begin(), types.end(), t) != types.end(); };
  for (const char* t : {"Q4_0", "Q4_1", "Q4_K", "IQ4_NL", "IQ4_XS", "Q3_K", "Q2_K"})
    if (has(t)) return DType::Q4_0;
  for (const char* t : {"Q8_0", "Q5_0", "Q5_1", "Q5_K"})
    if (has(t)) return DType::Q8_0;
  return std::nullopt;
}

void EagleHead::quantize_weights(DType type) {
  for (Matrix* W : {&fc_, &proj_.wq, &proj_.wk, &proj_.wv, &proj_.wo, &proj_.w_gate, &proj_.w_up,
                    &proj_.w_down})
    quantize_matrix(*W, type, quantized_);
  if (kind_ == Kind::Eagle3) quantize_matrix(own_lm_head_, type, quantized_);
}

void EagleHead::upcast_weights() {
  for (Matrix* W : {&fc_, &proj_.wq, &proj_.wk, &proj_.wv, &proj_.wo, &proj_.w_gate, &proj_.w_up,
                    &proj_.w_down, &own_lm_head_}) {
    if (W->dtype == DType::F32 || W->data == nullptr) continue;
    upcast_.push_back(matrix_to_f32(*W));
    *W = Matrix{DType::F32, W->rows, W->cols, upcast_.back().data()};
  }
}

void EagleHead::require_restrictable() const {
  if (kind_ == Kind::Eagle3)
    fail("--draft-vocab: this is an EAGLE-3 head with its own draft vocabulary of ",
         draft_vocab_size(),
         " tokens (draft_vocab_size); --draft-vocab applies to EAGLE-1/2 heads");
}

void EagleHead::restrict_vocab(std::vector<int32_t> ids) {
  require_restrictable();
  const int64_t V = cfg_.vocab_size;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] < 0 || ids[i] >= V)
      fail("draft vocabulary: token id ", ids[i], " outside [0, ", V, ")");
    if (i > 0 && ids[i] <= ids[i - 1]) fail("draft vocabulary: ids must be strictly increasing");
  }
  draft_ids_ = std::move(ids);
  draft_rows_.clear();
  if (draft_ids_.empty()) return;
  const Matrix& full = target_->lm_head();
  const size_t row_bytes = dtype_bytes(full.dtype, full.cols);  // whole blocks for a quantized head
  draft_rows_.resize(draft_ids_.size() * row_bytes);
  for (size_t i = 0; i < draft_ids_.size(); ++i)
    row_blocks(full, draft_ids_[i], &draft_rows_[i * row_bytes]);  // any layout (core/tensor.h)
  draft_lm_head_ =
      Matrix{full.dtype, static_cast<int64_t>(draft_ids_.size()), full.cols, draft_rows_.data()};
}

int64_t EagleHead::draft_vocab_size() const {
  if (kind_ == Kind::Eagle3) return own_lm_head_.rows;
  return draft_ids_.empty() ? cfg_.vocab_size : static_cast<int64_t>(draft_ids_.size());
}

void EagleHead::draft_logprobs(const float* h, int64_t n, float* out, ThreadPool& pool) {
  if (kind_ == Kind::Eagle3) return draft_logprobs_eagle3(h, n, out, pool);
  const int64_t V = draft_vocab_size();
  matmul(h, n, draft_ids_.empty() ? target_->lm_head() : draft_lm_head_, out, pool);
  // log_softmax in float32, like the reference's nn.LogSoftmax.
  for (int64_t i = 0; i < n; ++i) {
    float* row = out + i * V;
    const float lse = log_sum_exp(row, V);
    for (int64_t v = 0; v < V; ++v) row[v] -= lse;
  }
}

}  // namespace eagle2

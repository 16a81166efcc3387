// The EAGLE-3 side of EagleHead (eagle_head.h): binding the reference's layout, the draft layer
// over [embedding | hidden] and the logits over the head's own draft vocabulary. The layout and
// the conventions are SafeAILab/EAGLE's EAGLE-3 `Model` (eagle/model/cnets.py), as
// ../shared/golden/EAGLE3.md records them from running it.
#include <cstring>
#include <set>

#include "core/error.h"
#include "draft/eagle_head.h"
#include "kernels/matmul.h"
#include "kernels/ops.h"
#include "model/checkpoint_checks.h"

namespace eagle2 {

void EagleHead::bind_eagle3(const HeadConfig& hc, const std::map<std::string, TensorView>& t,
                            const std::string& where, const std::string& config_path,
                            const LlamaModel& target) {
  kind_ = Kind::Eagle3;
  target_ = &target;
  const LlamaConfig& c = cfg_;
  const int64_t d = c.hidden_size, hd = c.head_dim, I = c.intermediate_size;
  const int64_t qd = c.num_heads * hd, kvd = c.num_kv_heads * hd;
  feature_layers_ = eagle3_feature_layers(hc, target.config().num_layers, config_path);
  feature_width_ = static_cast<int64_t>(feature_layers_.size()) * target.config().hidden_size;

  std::set<std::string> used;  // every tensor bound, for the leftover check at the end
  auto take = [&](const std::string& name, const std::vector<int64_t>& shape) -> const TensorView& {
    used.insert(name);
    return need(t, where, name, shape);
  };
  check_embedding_copy(t, where, target, used);
  if (auto it = t.find("fc.weight");
      it != t.end() && it->second.shape != std::vector<int64_t>{d, feature_width_})
    fail(where, ": tensor 'fc.weight' has shape ", shape_string(it->second.shape), ", expected [",
         d, ", ", feature_width_, "] (", feature_layers_.size(),
         " target layers' features of the target's hidden size ", target.config().hidden_size, ")");
  fc_ = as_matrix(take("fc.weight", {d, feature_width_}));
  // q/k/v read the 2d-wide [input_layernorm(embedding) | hidden_norm(x)].
  proj_ = bind_decoder_projections(take, "midlayer.", d, qd, kvd, I, 2 * d);
  input_norm_ = to_f32(take("midlayer.input_layernorm.weight", {d}));
  hidden_norm_ = to_f32(take("midlayer.hidden_norm.weight", {d}));
  mlp_norm_ = to_f32(take("midlayer.post_attention_layernorm.weight", {d}));
  final_norm_ = to_f32(take("norm.weight", {d}));

  const int64_t n_draft = hc.draft_vocab_size.value_or(c.vocab_size);
  if (auto it = t.find("lm_head.weight");
      it != t.end() && !it->second.shape.empty() && it->second.shape[0] != n_draft)
    fail(where, ": tensor 'lm_head.weight' has ", it->second.shape[0],
         " rows, but draft_vocab_size is ", n_draft,
         hc.draft_vocab_size ? "" : " (config.json gives none: vocab_size)");
  own_lm_head_ = as_matrix(take("lm_head.weight", {n_draft, d}));
  bind_draft_map(t, where, used);

  // A leftover tensor means the checkpoint is not the head config.json describes (fc.bias: an
  // EAGLE-3 fc has none; more layers than one).
  if (const TensorView* extra = first_unused_tensor(t, used))
    fail(where, ": unexpected tensor '", extra->name, "' for an EAGLE-3 head");
  n_params_ = 0;
  for (const auto& [name, tv] : t)
    if (name != "embed_tokens.weight" && name != "d2t" && name != "t2d") n_params_ += tv.numel();
  layer_ = {.proj = &proj_, .input_norm = nullptr, .post_attention_norm = mlp_norm_.data()};
  stack_.emplace(c);
}

// d2t: draft index i drafts target token i + d2t[i]; t2d (optional): true exactly at those tokens.
void EagleHead::bind_draft_map(const std::map<std::string, TensorView>& t, const std::string& where,
                               std::set<std::string>& used) {
  const int64_t V = cfg_.vocab_size, n_draft = own_lm_head_.rows;
  draft_ids_.clear();
  auto d2t = t.find("d2t");
  if (d2t == t.end()) {
    // The reference maps only when the draft vocabulary is smaller than the target's.
    if (n_draft != V)
      fail(where, ": tensor 'd2t' not found (draft_vocab_size ", n_draft, " < vocab_size ", V,
           " needs the draft -> target map)");
  } else {
    used.insert("d2t");
    const TensorView& m = d2t->second;
    if (m.dtype != DType::I64)
      fail(where, ": tensor 'd2t' has dtype ", dtype_name(m.dtype), ", expected I64");
    if (m.shape.size() != 1 || m.shape[0] != n_draft)
      fail(where, ": tensor 'd2t' has shape ", shape_string(m.shape), ", but draft_vocab_size is ",
           n_draft);
    std::vector<int64_t> target_of(static_cast<size_t>(V), -1);  // draft index of each id
    draft_ids_.resize(static_cast<size_t>(n_draft));
    for (int64_t i = 0; i < n_draft; ++i) {
      int64_t off;
      std::memcpy(&off, static_cast<const unsigned char*>(m.data) + i * 8, 8);
      // i + off in [0, V), written so that no offset can overflow.
      if (off < -i || off >= V - i)
        fail(where, ": tensor 'd2t' maps draft id ", i, " (offset ", off,
             ") to a token outside the target's vocabulary [0, ", V, ")");
      int64_t& seen = target_of[static_cast<size_t>(i + off)];
      if (seen >= 0)
        fail(where, ": tensor 'd2t' maps draft ids ", seen, " and ", i, " to the same token ",
             i + off);
      seen = i;
      draft_ids_[static_cast<size_t>(i)] = static_cast<int32_t>(i + off);
    }
  }
  auto t2d = t.find("t2d");
  if (t2d == t.end()) return;
  used.insert("t2d");
  const TensorView& m = t2d->second;
  if (m.dtype != DType::BOOL)
    fail(where, ": tensor 't2d' has dtype ", dtype_name(m.dtype), ", expected BOOL");
  if (m.shape != std::vector<int64_t>{V})
    fail(where, ": tensor 't2d' has shape ", shape_string(m.shape), ", expected [", V,
         "] (the target's vocabulary)");
  std::vector<unsigned char> mapped(static_cast<size_t>(V), draft_ids_.empty() ? 1 : 0);
  for (int32_t id : draft_ids_) mapped[static_cast<size_t>(id)] = 1;
  const auto* flags = static_cast<const unsigned char*>(m.data);
  for (int64_t id = 0; id < V; ++id) {
    if (flags[id] > 1)
      fail(where, ": tensor 't2d' holds byte ", int{flags[id]}, " at token ", id, ", not a bool");
    if (flags[id] != mapped[static_cast<size_t>(id)])
      fail(where, ": tensor 't2d' disagrees with d2t at token ", id,
           " (t2d: ", flags[id] ? "true" : "false", "; d2t ",
           mapped[static_cast<size_t>(id)] ? "maps a draft id to it" : "maps no draft id to it",
           ")");
  }
}

void EagleHead::fc_forward(const float* features, int64_t n, float* out, ThreadPool& pool) {
  if (kind_ != Kind::Eagle3)
    fail("draft head: fc_forward is for EAGLE-3 heads (an EAGLE-1/2 fc also reads the embedding)");
  if (n > 0) matmul(features, n, fc_, out, pool);
}

void EagleHead::forward_eagle3(const Rows& rows, std::span<KvCache* const> caches, float* out,
                               ThreadPool& pool) {
  const LlamaConfig& c = cfg_;
  const auto n = static_cast<int64_t>(rows.tokens.size());
  const int64_t d = c.hidden_size;
  Workspace& w = ws_;
  grow_to(w.cat, static_cast<size_t>(n * 2 * d));
  grow_to(w.x, static_cast<size_t>(n * d));

  // x: fc of the target's features on catch-up rows; later steps continue from the parent's
  // output h, which is already hidden wide (the reference skips fc by the input's width).
  if (rows.from_features)
    fc_forward(rows.hidden, n, w.x.data(), pool);
  else
    std::memcpy(w.x.data(), rows.hidden, static_cast<size_t>(n * d) * sizeof(float));
  // The attention input: the embedding first, each half with its own norm.
  for (int64_t i = 0; i < n; ++i) {
    const int32_t tok = rows.tokens[i];
    if (tok < 0 || tok >= c.vocab_size)
      fail("draft head: token id ", tok, " outside the vocabulary");
    float* a = &w.cat[i * 2 * d];
    target_->embed(tok, a);
    rmsnorm(a, input_norm_.data(), c.rms_norm_eps, a, d);
    rmsnorm(&w.x[i * d], hidden_norm_.data(), c.rms_norm_eps, a + d, d);
  }
  // The one decoder layer on the stream x (the residual is x itself, not its norm).
  const DecoderRows decoder_rows{.n = n,
                                 .caches = caches,
                                 .sequence = rows.sequence.empty() ? nullptr : rows.sequence.data(),
                                 .positions = rows.positions.data(),
                                 .slots = rows.slots.data(),
                                 .visible = rows.visible.data(),
                                 .visible_begin = rows.visible_begin.data(),
                                 .attn_input = w.cat.data()};
  stack_->forward(std::span(&layer_, 1), decoder_rows, w.x.data(), pool);
  std::memcpy(out, w.x.data(), static_cast<size_t>(n * d) * sizeof(float));
}

void EagleHead::draft_logprobs_eagle3(const float* h, int64_t n, float* out, ThreadPool& pool) {
  const int64_t d = cfg_.hidden_size, V = own_lm_head_.rows;
  grow_to(ws_.xn, static_cast<size_t>(n * d));
  for (int64_t i = 0; i < n; ++i)
    rmsnorm(h + i * d, final_norm_.data(), cfg_.rms_norm_eps, &ws_.xn[i * d], d);
  matmul(ws_.xn.data(), n, own_lm_head_, out, pool);
  for (int64_t i = 0; i < n; ++i) {  // log_softmax in float32, as the reference
    float* row = out + i * V;
    const float lse = log_sum_exp(row, V);
    for (int64_t v = 0; v < V; ++v) row[v] -= lse;
  }
}

}  // namespace eagle2

// The EAGLE draft heads. Head position j holds the pair (f_j, x_{j+1}) of a target feature and
// the next token.
// - EAGLE-1/2 (the EAGLE-1 head, reused by EAGLE-2; ../shared/docs/EAGLE2.md section 2):
//   x = fc(concat(embed(x_{j+1}), f_j)), then one LLaMA decoder layer without its input norm; the
//   output predicts f_{j+1} (the target's final-norm state), and the target's lm_head turns it
//   into draft logits.
// - EAGLE-3 (docs/SPECULATIVE.md "EAGLE-3 heads"): f_j is the inputs of three target layers
//   concatenated; x = fc(f_j) on rows that carry target features, else the head's own output of
//   the parent row; q/k/v read [input_layernorm(embed(x_{j+1})) | hidden_norm(x)] (2 x hidden)
//   while the residual stream is x; the output h (pre-norm) gives draft logits through the head's
//   own norm and lm_head over its draft vocabulary, whose index i is target token i + d2t[i].
// One class for both, so drafters, policies and the API hold either (kind() tells them apart).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "core/thread_pool.h"
#include "draft/eagle3_config.h"
#include "io/safetensors.h"
#include "io/torch_checkpoint.h"
#include "model/decoder_stack.h"
#include "model/kv_cache.h"
#include "model/llama_config.h"
#include "model/llama_model.h"

namespace eagle2 {

class EagleHead {
 public:
  enum class Kind { Eagle, Eagle3 };  // EAGLE-1/2, EAGLE-3

  // A head folder: config.json plus model.safetensors (preferred) or pytorch_model.bin.
  // The head is checked against the target: hidden size, vocabulary, embedding shape (and for
  // EAGLE-3 the feature layers and the draft vocabulary's map into the target's). The kind is
  // EAGLE-3 when config.json says so (architecture LlamaForCausalLMEagle3 or an EAGLE-3 field),
  // the weights hold d2t, or fc.weight reads three target widths; else EAGLE-1/2.
  static std::unique_ptr<EagleHead> load(const std::string& dir, const LlamaModel& target);
  // An explicit weights file (.safetensors or a PyTorch .bin).
  static std::unique_ptr<EagleHead> load_files(const std::string& config_path,
                                               const std::string& weights_path,
                                               const LlamaModel& target);

  const LlamaConfig& config() const { return cfg_; }
  Kind kind() const { return kind_; }
  bool has_fc_bias() const { return !fc_bias_.empty(); }
  // What the target hands the head per position: for EAGLE-1/2 its final-norm state (hidden
  // wide; feature_layers() empty); for EAGLE-3 the inputs of feature_layers() (0-based target
  // layers, raw residual stream) concatenated in that order (layers x target hidden wide).
  int64_t feature_width() const { return feature_width_; }
  std::span<const int32_t> feature_layers() const { return feature_layers_; }
  int64_t parameter_count() const { return n_params_; }

  // The head's own KV cache (one layer).
  KvCache make_cache(int64_t capacity) const;

  // One batch of head rows. Row i takes hidden[i] (the feature or head output it continues from)
  // and tokens[i], sits at positions[i], and sees the cache's committed slots plus the slots in
  // visible[visible_begin[i] .. visible_begin[i+1]) (increasing; its own slot last). Row i's
  // keys/values are written to slot slots[i] (>= kv.size(), inside the reserved pending area).
  struct Rows {
    const float* hidden = nullptr;  // [n, d] ([n, feature_width()]: see from_features)
    std::span<const int32_t> tokens;
    std::span<const int32_t> positions;
    std::span<const int32_t> slots;
    std::span<const int32_t> visible;
    std::span<const int64_t> visible_begin;  // n + 1 offsets
    // With several caches: row i's sequence (an index into them); empty: all rows in the first.
    std::span<const int32_t> sequence = {};
    // EAGLE-3: true when hidden holds target features ([n, feature_width()], fc applies: the
    // catch-up rows), false when it holds head outputs ([n, d], fc skipped: later draft steps).
    // EAGLE-1/2 heads read both alike ([n, d]).
    bool from_features = false;
  };
  // out: [n, d] head outputs (predicted features; no final norm).
  void forward(const Rows& rows, KvCache& kv, float* out, ThreadPool& pool);
  // The same over rows of several sequences, each with its own head cache (slots and visible
  // slots are then in the row's own cache): one matmul per weight for all rows, attention per
  // sequence, every row bit-identical to running its sequence alone.
  void forward(const Rows& rows, std::span<KvCache* const> caches, float* out, ThreadPool& pool);

  // Causal catch-up: appends the pairs (features[i], tokens[i]) at positions kv.size() + i to the
  // committed cache. features: [n, feature_width()]. out: [n, d].
  void forward_causal(const float* features, std::span<const int32_t> tokens, KvCache& kv,
                      float* out, ThreadPool& pool);

  // EAGLE-3: x = fc(features) for n rows of target features ([n, feature_width()] -> [n, d]), the
  // first step of forward() on catch-up rows. Error for an EAGLE-1/2 head (its fc also reads the
  // token embedding).
  void fc_forward(const float* features, int64_t n, float* out, ThreadPool& pool);

  // Quantizes the head's own matrices (fc, the decoder layer's seven projections and an EAGLE-3
  // head's own lm_head) to `type` (Q8_0 or Q4_0, ggml's reference rounding), in memory the head
  // owns; an EAGLE-1/2 head's draft lm_head is the target's and keeps its type. Why: drafting is
  // a chain of one-row head forwards, each reading every head weight, so on a quantized target a
  // bf16 head costs as much per step as the target itself. Drafts change a little; what is
  // accepted is still the target's choice (lossless).
  // Matrices whose rows are not whole blocks stay as they are.
  void quantize_weights(DType type);
  // What a head on this target is quantized to by default: Q4_0 for a target with matrices of
  // 4 bits or fewer (Q4_0, Q4_1, Q4_K, IQ4_NL, IQ4_XS, Q3_K, Q2_K: Q4_K_M, Q3_K_M, ... files),
  // else Q8_0 for one with 5 to 8 bits (Q8_0, Q5_0, Q5_1, Q5_K), nothing (nullopt) for a float
  // one. The head then costs what the
  // target costs per weight, so drafting keeps its share of a cycle.
  static std::optional<DType> weights_type_for(const LlamaModel& target);
  // The head matrices' dtype name after any quantize_weights ("BF16", "Q8_0", ...; mixed: the
  // fc's).
  std::string weights_dtype() const { return dtype_name(fc_.dtype); }
  // Every head matrix (those quantize_weights covers) converted to F32 in memory the head owns,
  // so that matmuls keep f32 activations (bf16 weights round them to bf16: kernels/matmul.h): how
  // a reference that upcasts bf16 weights to float32 runs, for comparisons at float32 tolerances.
  void upcast_weights();

  // Restricts drafting to these token ids (ascending, each in [0, V)): the draft lm_head becomes
  // those rows of the target's (draft_vocab.h). An empty list restores the full vocabulary.
  // EAGLE-1/2 only: an EAGLE-3 head has its own draft vocabulary (Error, require_restrictable).
  void restrict_vocab(std::vector<int32_t> ids);
  // Error "--draft-vocab: this is an EAGLE-3 head with its own draft vocabulary ..." for an
  // EAGLE-3 head; nothing for an EAGLE-1/2 one. Callers that read a draft_vocab.tsv first ask
  // here, so the user sees why rather than a missing file.
  void require_restrictable() const;
  // Tokens the head can propose, and the token of draft index j (j itself when unrestricted).
  int64_t draft_vocab_size() const;
  int32_t draft_token(int64_t j) const {
    return draft_ids_.empty() ? static_cast<int32_t>(j) : draft_ids_[static_cast<size_t>(j)];
  }

  // Draft log-probabilities over the draft vocabulary: log_softmax(draft lm_head(h)) for n rows
  // of head outputs (EAGLE-3: log_softmax(lm_head(norm(h))) with the head's own norm and lm_head).
  // out: [n, draft_vocab_size()]; entry j is token draft_token(j).
  void draft_logprobs(const float* h, int64_t n, float* out, ThreadPool& pool);

 private:
  EagleHead() = default;
  EagleHead(const EagleHead&) = delete;  // layer_ points into proj_ and mlp_norm_
  EagleHead& operator=(const EagleHead&) = delete;
  // The tensor `name` of `shape` (Error naming it when missing, of another shape or not finite).
  static const TensorView& need(const std::map<std::string, TensorView>& t,
                                const std::string& where, const std::string& name,
                                const std::vector<int64_t>& shape);
  void bind(const std::map<std::string, TensorView>& tensors, const std::string& where,
            const LlamaModel& target);
  // A stored embed_tokens.weight is the (frozen) copy of the target's embedding the head trained
  // with: the target's own is read, but the copy must belong to this target (Error otherwise).
  static void check_embedding_copy(const std::map<std::string, TensorView>& tensors,
                                   const std::string& where, const LlamaModel& target,
                                   std::set<std::string>& used);
  // eagle3_head.cpp: the EAGLE-3 layout (names in docs/SPECULATIVE.md), its forward and logits.
  void bind_eagle3(const HeadConfig& hc, const std::map<std::string, TensorView>& tensors,
                   const std::string& where, const std::string& config_path,
                   const LlamaModel& target);
  void bind_draft_map(const std::map<std::string, TensorView>& tensors, const std::string& where,
                      std::set<std::string>& used);
  void forward_eagle3(const Rows& rows, std::span<KvCache* const> caches, float* out,
                      ThreadPool& pool);
  void draft_logprobs_eagle3(const float* h, int64_t n, float* out, ThreadPool& pool);

  Kind kind_ = Kind::Eagle;
  LlamaConfig cfg_;
  const LlamaModel* target_ = nullptr;
  std::unique_ptr<TensorStore> st_store_;
  std::unique_ptr<TorchCheckpoint> torch_store_;
  int64_t n_params_ = 0;
  Matrix fc_;
  DecoderProjections proj_;                            // the head's one decoder layer
  std::vector<int32_t> draft_ids_;                     // empty: the full vocabulary
  std::vector<unsigned char> draft_rows_;              // the kept rows of the target's lm_head
  std::vector<std::vector<unsigned char>> quantized_;  // blocks of quantize_weights' matrices
  Matrix draft_lm_head_;
  std::vector<float> fc_bias_, mlp_norm_;
  DecoderLayerWeights layer_;  // views of proj_ and mlp_norm_ (no input norm)
  std::optional<DecoderStack> stack_;
  std::vector<std::vector<float>> upcast_;  // upcast_weights' F32 copies
  int64_t feature_width_ = 0;
  std::vector<int32_t> feature_layers_;  // EAGLE-3 (EAGLE-1/2: none)
  // EAGLE-3 only.
  std::vector<float> input_norm_, hidden_norm_, final_norm_;  // midlayer's two, and `norm`
  Matrix own_lm_head_;                                        // [draft vocabulary, d]

  struct Workspace {
    std::vector<float> cat, x, xn;
  } ws_;
};

}  // namespace eagle2

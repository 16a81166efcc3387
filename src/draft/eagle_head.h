// The EAGLE draft head (EAGLE-1 head, reused by EAGLE-2; ../shared/docs/EAGLE2.md section 2).
// Head position j holds the pair (f_j, x_{j+1}): x = fc(concat(embed(x_{j+1}), f_j)), then one
// LLaMA decoder layer without its input norm; the output predicts f_{j+1}, and the target's
// lm_head turns it into draft logits.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "core/thread_pool.h"
#include "io/safetensors.h"
#include "io/torch_checkpoint.h"
#include "model/decoder_stack.h"
#include "model/kv_cache.h"
#include "model/llama_config.h"
#include "model/llama_model.h"

namespace eagle2 {

class EagleHead {
 public:
  // A head folder: config.json plus model.safetensors (preferred) or pytorch_model.bin.
  // The head is checked against the target: hidden size, vocabulary, embedding shape.
  static std::unique_ptr<EagleHead> load(const std::string& dir, const LlamaModel& target);
  // An explicit weights file (.safetensors or a PyTorch .bin).
  static std::unique_ptr<EagleHead> load_files(const std::string& config_path,
                                               const std::string& weights_path,
                                               const LlamaModel& target);

  const LlamaConfig& config() const { return cfg_; }
  bool has_fc_bias() const { return !fc_bias_.empty(); }
  int64_t parameter_count() const { return n_params_; }

  // The head's own KV cache (one layer).
  KvCache make_cache(int64_t capacity) const;

  // One batch of head rows. Row i takes hidden[i] (the feature or head output it continues from)
  // and tokens[i], sits at positions[i], and sees the cache's committed slots plus the slots in
  // visible[visible_begin[i] .. visible_begin[i+1]) (increasing; its own slot last). Row i's
  // keys/values are written to slot slots[i] (>= kv.size(), inside the reserved pending area).
  struct Rows {
    const float* hidden = nullptr;  // [n, d]
    std::span<const int32_t> tokens;
    std::span<const int32_t> positions;
    std::span<const int32_t> slots;
    std::span<const int32_t> visible;
    std::span<const int64_t> visible_begin;  // n + 1 offsets
    // With several caches: row i's sequence (an index into them); empty: all rows in the first.
    std::span<const int32_t> sequence = {};
  };
  // out: [n, d] head outputs (predicted features; no final norm).
  void forward(const Rows& rows, KvCache& kv, float* out, ThreadPool& pool);
  // The same over rows of several sequences, each with its own head cache (slots and visible
  // slots are then in the row's own cache): one matmul per weight for all rows, attention per
  // sequence, every row bit-identical to running its sequence alone.
  void forward(const Rows& rows, std::span<KvCache* const> caches, float* out, ThreadPool& pool);

  // Causal catch-up: appends the pairs (features[i], tokens[i]) at positions kv.size() + i to the
  // committed cache. out: [n, d].
  void forward_causal(const float* features, std::span<const int32_t> tokens, KvCache& kv,
                      float* out, ThreadPool& pool);

  // Quantizes the head's own matrices (fc and the decoder layer's seven projections) to `type`
  // (Q8_0 or Q4_0, ggml's reference rounding), in memory the head owns; the draft lm_head is the
  // target's and keeps its type. Why: drafting is a chain of one-row head forwards, each reading
  // every head weight, so on a quantized target a bf16 head costs as much per step as the target
  // itself. Drafts change a little; what is accepted is still the target's choice (lossless).
  // Matrices whose rows are not whole blocks stay as they are.
  void quantize_weights(DType type);
  // What a head on this target is quantized to by default: Q8_0 for a Q8_0 target, Q4_0 for a
  // 4-bit one (Q4_0, Q4_K_M), nothing (nullopt) for a float one. The head then costs what the
  // target costs per weight, so drafting keeps its share of a cycle.
  static std::optional<DType> weights_type_for(const LlamaModel& target);
  // The head matrices' dtype name after any quantize_weights ("BF16", "Q8_0", ...; mixed: the
  // fc's).
  std::string weights_dtype() const { return dtype_name(fc_.dtype); }

  // Restricts drafting to these token ids (ascending, each in [0, V)): the draft lm_head becomes
  // those rows of the target's (draft_vocab.h). An empty list restores the full vocabulary.
  void restrict_vocab(std::vector<int32_t> ids);
  // Tokens the head can propose, and the token of draft index j (j itself when unrestricted).
  int64_t draft_vocab_size() const;
  int32_t draft_token(int64_t j) const { return draft_ids_.empty() ? static_cast<int32_t>(j) : draft_ids_[static_cast<size_t>(j)]; }

  // Draft log-probabilities over the draft vocabulary: log_softmax(draft lm_head(h)) for n rows.
  // out: [n, draft_vocab_size()]; entry j is token draft_token(j).
  void draft_logprobs(const float* h, int64_t n, float* out, ThreadPool& pool);

 private:
  EagleHead() = default;
  EagleHead(const EagleHead&) = delete;  // layer_ points into proj_ and mlp_norm_
  EagleHead& operator=(const EagleHead&) = delete;
  void bind(const std::map<std::string, TensorView>& tensors, const std::string& where,
            const LlamaModel& target);

  LlamaConfig cfg_;
  const LlamaModel* target_ = nullptr;
  std::unique_ptr<TensorStore> st_store_;
  std::unique_ptr<TorchCheckpoint> torch_store_;
  int64_t n_params_ = 0;
  Matrix fc_;
  DecoderProjections proj_;  // the head's one decoder layer
  std::vector<int32_t> draft_ids_;           // empty: the full vocabulary
  std::vector<unsigned char> draft_rows_;    // the kept rows of the target's lm_head
  std::vector<std::vector<unsigned char>> quantized_;  // blocks of quantize_weights' matrices
  Matrix draft_lm_head_;
  std::vector<float> fc_bias_, mlp_norm_;
  DecoderLayerWeights layer_;  // views of proj_ and mlp_norm_ (no input norm)
  std::optional<DecoderStack> stack_;

  struct Workspace {
    std::vector<float> cat, x;
  } ws_;
};

}  // namespace eagle2

// Medusa heads (Cai et al. 2024) and Hydra heads (Ankner et al. 2024): K small heads on the
// target's final-norm feature f_t (the state whose lm_head predicts x_{t+1}), head k (1-based)
// predicting x_{t+1+k}. So with the root r = x_{t+1}, head 1 drafts the root's children (depth 1)
// and head k depth k.
//
//   Medusa head k:  h = f_t;                     h <- h + SiLU(W_l h + b_l) for each layer l;
//   Hydra head k:   h = [f_t, E(x_{t+1}), .. E(x_{t+k})]  ((k + 1) d wide: f_t, the root and the
//                   k - 1 drafted tokens above the node; E = the target's frozen embedding);
//                   the first layer h <- f_t + SiLU(W_0 h + b_0) (W_0: [d, (k + 1) d]), the
//                   others as Medusa's;
//   both:           logits = lm_head(h): the target's own (frozen, shared by every head), or the
//                   head's own when the checkpoint carries one (the published Medusa-1 layout).
//
// Hydra's reference ResBlock adds a learned projection of the whole input as its residual
// (res_connection, another [d, (k + 1) d] matrix); here the residual is f_t itself, which halves a
// head's weights (4 heads at hidden 512 in bf16: 7.3 MB instead of 14.7) and makes head k of Hydra
// Medusa's head k plus the path's embeddings.
//
// Folder: config.json + model.safetensors (Medusa also reads the published
// medusa_lm_head.safetensors). config.json: medusa_num_heads / medusa_num_layers (Hydra:
// hydra_num_heads / hydra_num_layers), and optionally hidden_size / vocab_size, which must be the
// target's (the published Medusa-1 configs name the base model instead). Tensors (F32, F16 or
// BF16), k and l 0-based:
//   medusa_head.{k}.{l}.linear.weight [d, d] and .bias [d]; optionally medusa_head.{k}.{L}.weight
//   [V, d], every head's own lm_head (L = the number of layers). The "medusa_head." prefix may be
//   absent (Medusa-1's medusa_lm_head files store the head list's own state dict).
//   hydra_head.{k}.{l}.linear.weight [d, (k + 2) d] for l = 0 ([d, d] after), .bias [d].
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "core/thread_pool.h"
#include "io/safetensors.h"
#include "model/llama_model.h"

namespace eagle2 {

class MedusaHeads {
 public:
  enum class Kind { Medusa, Hydra };
  // Limits of config.json (a head folder is untrusted input).
  static constexpr int kMaxHeads = 16;
  static constexpr int kMaxLayers = 16;

  // A head folder checked against the target (hidden size, vocabulary) and against `kind` (a
  // Hydra folder given as Medusa heads is one clear error). The target must outlive the heads.
  static std::unique_ptr<MedusaHeads> load(const std::string& dir, const LlamaModel& target,
                                           Kind kind);

  Kind kind() const { return kind_; }
  const char* kind_name() const { return kind_ == Kind::Medusa ? "medusa" : "hydra"; }
  int num_heads() const { return static_cast<int>(heads_.size()); }
  int num_layers() const { return layers_; }
  int64_t hidden_size() const { return d_; }
  int64_t vocab_size() const { return vocab_; }
  bool own_lm_heads() const { return !heads_.empty() && heads_[0].lm_head.rows > 0; }
  int64_t parameter_count() const { return n_params_; }
  const LlamaModel& target() const { return *target_; }
  // Columns of head `head`'s (0-based) input: d for Medusa, (head + 2) d for Hydra.
  int64_t input_width(int head) const;

  // Quantizes the heads' matrices (ResBlocks and own lm_heads; the shared lm_head is the target's
  // and keeps its type) to Q8_0 or Q4_0, as EagleHead::quantize_weights.
  void quantize_weights(DType type);
  std::string weights_dtype() const;  // the first ResBlock's ("BF16", "Q8_0", ...)

  // Caller-owned scratch, so that one loaded set of heads serves many sequences at once.
  struct Scratch {
    std::vector<float> z, x;
  };
  // Head `head`'s state h (before lm_head) for n rows of its input ([n, input_width(head)]):
  // out [n, d].
  void states(int head, const float* input, int64_t n, float* out, Scratch& scratch,
              ThreadPool& pool) const;
  // Draft log-probs log_softmax(lm_head(h)) of n states, row i from head heads[i]: out [n, V].
  // The shared lm_head is one matmul over all rows (its weights read once for every head).
  void logprobs(std::span<const int> heads, const float* states, float* out,
                ThreadPool& pool) const;

 private:
  MedusaHeads() = default;
  MedusaHeads(const MedusaHeads&) = delete;
  MedusaHeads& operator=(const MedusaHeads&) = delete;
  void bind(const std::map<std::string, TensorView>& tensors, const std::string& where);

  struct Layer {
    Matrix w;
    std::vector<float> bias;
  };
  struct Head {
    std::vector<Layer> layers;
    Matrix lm_head;  // rows 0: the target's
  };
  Kind kind_ = Kind::Medusa;
  const LlamaModel* target_ = nullptr;
  int64_t d_ = 0, vocab_ = 0;
  int layers_ = 0;
  int64_t n_params_ = 0;
  std::vector<Head> heads_;
  std::unique_ptr<TensorStore> store_;
  std::vector<std::vector<unsigned char>> quantized_;
};

// The forward of one ResBlock row by row, shared by inference and training so that both compute
// the same bits: out[m] = residual[m] + SiLU(z[m]) for z = the block's linear output ([n, d]).
// residual rows are `residual_stride` floats apart (the input's width: the residual is the first
// d columns of the input).
void res_block_output(const float* z, const float* residual, int64_t residual_stride, int64_t n,
                      int64_t d, float* out);

}  // namespace eagle2

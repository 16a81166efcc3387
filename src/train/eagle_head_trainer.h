// Training an EAGLE head on the target's features (EAGLE2.md sections 2 and 6), exporting it in the
// published format, and measuring it.
//
// The trainable head is exactly the inference head (draft/eagle_head.h):
//   e   = embed(x_{j+1})                 target's embedding, frozen (not a parameter here)
//   x   = fc(concat(e, f_j + noise))     fc [d, 2d] with bias
//   out = decoder layer without input norm (train/decoder_block.h, input_norm = false)
// Loss per counted position: SmoothL1(out, f_{j+1}) + ce_weight * softCE(softmax(lm_head f_{j+1} /
// T), log_softmax(lm_head out / T)), lm_head frozen; T = ce_temperature (1: EAGLE's loss).
//
// Batches: B windows of T head positions each, padded at the end with masked rows (attention is
// causal, so padding after a sequence never reaches its real rows). Windows keep their absolute
// positions for RoPE, as the inference head sees them.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/thread_pool.h"
#include "draft/eagle_head.h"
#include "model/llama_model.h"
#include "speculative/drafter.h"
#include "train/decoder_block.h"
#include "train/head_data.h"
#include "train/linear.h"
#include "train/optimizer.h"
#include "train/parameter.h"
#include "train/train_rng.h"

namespace eagle2::train {

// One training batch: rows are head positions, b-major (row = b * T + t).
struct HeadBatch {
  int64_t batch = 0, seq_len = 0;  // B, T
  std::vector<int32_t> tokens;     // [B*T]   x_{j+1}
  std::vector<int32_t> positions;  // [B*T]   j
  std::vector<float> features;     // [B*T, d] f_j (noise added by the trainer, not here)
  std::vector<float> targets;      // [B*T, d] f_{j+1}
  std::vector<uint8_t> mask;       // [B*T]   1 = a real position

  int64_t rows() const { return batch * seq_len; }
  int64_t counted() const;
};

// Sequence s from head position `start` on, up to T positions, into batch slot b (the rest of
// the slot is masked padding that repeats a valid token and zero features).
void fill_batch_slot(HeadBatch& batch, int64_t b, const HeadSequence& s, int64_t start, int64_t d);
HeadBatch make_batch(const std::vector<const HeadSequence*>& seqs,
                     const std::vector<int64_t>& starts, int64_t T, int64_t d);

struct HeadLoss {
  double total = 0, smooth_l1 = 0, soft_ce = 0;
};

// Initialisation: every matrix ~ U(-1/sqrt(fan_in), 1/sqrt(fan_in)) (PyTorch's nn.Linear
// default, as the reference's freshly built head), fc bias 0, norm weight 1. fc_identity adds the
// identity to fc's feature half ("next feature ~ this feature" as the starting point); measured
// on stories260K it did not help (docs/TRAINING.md), so it is off by default.
struct HeadInit {
  uint64_t seed = 1;
  bool fc_identity = false;
};

class EagleHeadTrainer {
 public:
  // The head takes the target's shapes (hidden, heads, kv heads, MLP width, RoPE).
  EagleHeadTrainer(const LlamaModel& target, const HeadInit& init);
  EagleHeadTrainer(const EagleHeadTrainer&) = delete;
  EagleHeadTrainer& operator=(const EagleHeadTrainer&) = delete;

  const LlamaConfig& config() const { return cfg_; }
  const LlamaModel& target() const { return target_; }
  ParamList params() const { return params_; }

  // Forward over a batch (features noised by the caller if wanted); `pred` gets [B*T, d].
  // With backward, gradients are ADDED into the parameters' grads.
  HeadLoss step(const HeadBatch& batch, const float* features_in, bool backward, ThreadPool& pool,
                float ce_weight = 0.1f, float ce_temperature = 1.0f);
  const std::vector<float>& prediction() const { return pred_; }

  // The published format: dir/config.json (target config, 1 layer, "bias": true) and
  // dir/model.safetensors (the head tensors in `dtype`, F32 or BF16, + embed_tokens.weight copied
  // from the target in its dtype). Creates dir. BF16 halves the bytes a draft step reads.
  void save(const std::string& dir, DType dtype = DType::F32) const;

 private:
  const LlamaModel& target_;
  LlamaConfig cfg_;
  DecoderBlockConfig block_cfg_;
  int64_t d_;
  Parameter fc_w_, fc_b_;
  std::unique_ptr<DecoderBlockWeights> block_;
  std::vector<Parameter*> params_;
  TransposedMatrix lm_head_t_;

  // Saved by the last forward for the backward.
  std::vector<float> emb_;      // [M, d] embed(x_{j+1})
  std::vector<float> emb_cat_;  // [M, 2d] fc input
  std::vector<float> x_;        // [M, d] fc output = the layer's input
  std::vector<float> pred_;     // [M, d]
  std::vector<float> dpred_;    // [M, d] dL/dpred, then dL/dx in place
  DecoderBlockActivations acts_;
  DecoderBlockScratch scratch_;
};

struct HeadTrainOptions {
  int64_t steps = 400;
  int64_t batch = 8;      // windows per step
  int64_t seq_len = 256;  // head positions per window
  double lr = 2e-2;
  int64_t warmup = 20;
  double min_lr_ratio = 0.1;    // cosine decay to lr * this at the last step
  float noise = 0.1f;           // input features + U(-noise, noise) ... times feature_rms (below)
  bool noise_relative = false;  // scale noise by the data's feature RMS
  float weight_decay = 0.0f;
  double clip_norm = 0.5;  // global gradient norm clip (0 = off)
  float ce_weight = 0.1f;
  // The soft loss compares softmax(logits / ce_temperature) of target and head: forward KL at the
  // serving temperature the head is distilled for (train/lm_head_loss.h); 1 is EAGLE's loss.
  float ce_temperature = 1.0f;
  uint64_t seed = 1;
};

struct HeadTrainProgress {
  int64_t step = 0, steps = 0;
  HeadLoss loss;  // this step's
  double lr = 0;
  double grad_norm = 0;
  int64_t positions = 0;  // counted positions so far
  double seconds = 0;
};
using HeadTrainCallback = std::function<void(const HeadTrainProgress&)>;

struct HeadTrainResult {
  HeadLoss first, last;  // losses of the first step and mean of the last 10 % of steps
  double seconds = 0;
  int64_t positions = 0;
  float noise_amplitude = 0;  // the absolute noise half-width actually used
};

HeadTrainResult train_head(EagleHeadTrainer& head, const std::vector<HeadSequence>& data,
                           const HeadTrainOptions& options, ThreadPool& pool,
                           const HeadTrainCallback& progress = nullptr);

// Root-mean-square of all feature values in the data set.
double feature_rms(const std::vector<HeadSequence>& data);

struct HeadAgreement {
  int64_t positions = 0;
  double top1 = 0, top5 = 0, top10 = 0;  // fraction of positions where the target's greedy next
                                         // token is among the draft's top k
  HeadLoss loss;                         // mean loss without noise
};

// Head position j (true features, no noise) drafts x_{j+2}; compared to the target's own greedy
// choice argmax lm_head(f_{j+1}).
HeadAgreement evaluate_agreement(EagleHeadTrainer& head, const std::vector<HeadSequence>& data,
                                 int64_t seq_len, ThreadPool& pool);

// Mean tau (tokens per target forward, bonus included) of EAGLE-2 drafting with `head` over the
// prompts at temperature 0, default dynamic tree (60 tokens, depth 5, top-k 10): cycles-weighted.
double measure_tau(LlamaModel& target, EagleHead& head,
                   const std::vector<std::vector<int32_t>>& prompts, int64_t max_new_tokens,
                   ThreadPool& pool);

// The same with any drafter (begun afresh on each prompt): Medusa and Hydra heads are measured
// with it. The context a measurement over these prompts needs (each prompt, its new tokens and a
// margin; at most the target's) is tau_context.
double measure_tau(LlamaModel& target, Drafter& drafter,
                   const std::vector<std::vector<int32_t>>& prompts, int64_t max_new_tokens,
                   ThreadPool& pool);
int64_t tau_context(const LlamaModel& target, const std::vector<std::vector<int32_t>>& prompts,
                    int64_t max_new_tokens);

}  // namespace eagle2::train

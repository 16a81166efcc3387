// Training an EAGLE head for a target: its training set (token sequences with the target's
// final-norm features, by self-distillation or from given text), the training itself, the head
// written in the published format, and how well it drafts (agreement with the target, tau).
//
// Contract. Units: positions and sequences in tokens, rates in [0, 1], losses in nats, times in
// seconds. Ownership: the data builders and trainers borrow the target model, its tokenizer and
// the threads for each call; a trainer keeps a reference to its target, which must outlive it;
// HeadData owns its sequences and features (floats: positions x hidden, times 3 with EAGLE-3
// feature layers); a trained head is written to a folder (save) and loaded with Head::load.
// Errors: eagle2::Error for options a trainer cannot run with and data that does not fit the
// target (each function's comment names its cases), and unwritable output folders. Callbacks run
// on the calling thread; their exceptions propagate. Threads: one call at a time per target model
// (eagle2/error.h).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "eagle2/drafter.h"
#include "eagle2/head.h"
#include "eagle2/model.h"
#include "eagle2/runtime.h"

namespace eagle2::api {

// Sequences the target ran over, with its feature at every position.
class HeadData {
 public:
  HeadData();
  ~HeadData();
  HeadData(HeadData&&) noexcept;
  HeadData& operator=(HeadData&&) noexcept;

  size_t size() const;  // sequences
  bool empty() const { return size() == 0; }
  int64_t positions() const;   // training positions (each sequence's length - 1, summed)
  double feature_rms() const;  // root-mean-square of every feature value

  struct Impl;  // the library's side of the handle (src/api)
  explicit HeadData(std::unique_ptr<Impl> impl);
  Impl& impl() const { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

using DataProgress = std::function<void(int64_t done, int64_t total)>;

struct SelfDistillOptions {
  int64_t max_new_tokens = 160;
  bool greedy = true;          // one greedy continuation per prompt
  int sampled_per_prompt = 1;  // plus this many at temperature 1
  uint64_t seed = 1;           // sampled continuation s of prompt p uses seed + 1000 p + s
  int64_t max_tokens = 0;      // cap on prompt + continuation (0 = the target's context)
  // Also record each position's inputs of these target layers (an EAGLE-3 head's features:
  // Eagle3Trainer::feature_layers); empty: none.
  std::vector<int32_t> feature_layers;
};

// The target's own continuations of each prompt (token ids, BOS included by the caller).
HeadData self_distill(Model& target, const std::vector<std::vector<int32_t>>& prompts,
                      const SelfDistillOptions& options, Threads& threads,
                      const DataProgress& progress = nullptr);
// Given documents (token ids), cut into pieces of at most max_tokens; pieces after the first start
// with `bos` when bos >= 0. feature_layers as in SelfDistillOptions.
HeadData from_documents(Model& target, const std::vector<std::vector<int32_t>>& documents,
                        int64_t max_tokens, int32_t bos, Threads& threads,
                        const DataProgress& progress = nullptr,
                        const std::vector<int32_t>& feature_layers = {});
// The sequences of the last `eval_sources` prompts/documents go to `eval`, the rest to `train`
// (the continuations of one prompt never straddle the split).
void split_by_source(HeadData all, int64_t eval_sources, HeadData& train, HeadData& eval);

struct HeadInit {
  uint64_t seed = 1;
  bool fc_identity = false;  // start fc's feature half at the identity
};

struct HeadTrainOptions {
  int64_t steps = 400;
  int64_t batch = 8;      // windows per step
  int64_t seq_len = 256;  // head positions per window
  double lr = 2e-2;
  int64_t warmup = 20;
  double min_lr_ratio = 0.1;    // cosine decay to lr * this at the last step
  float noise = 0.1f;           // uniform feature noise half-width
  bool noise_relative = false;  // times the data's feature RMS
  float weight_decay = 0.0f;
  double clip_norm = 0.5;  // global gradient norm clip (0 = off)
  float ce_weight = 0.1f;
  // The distribution loss at a serving temperature T: KL(softmax(target logits / T) ||
  // softmax(draft logits / T)) (train/lm_head_loss.h); 1 is EAGLE's loss.
  float ce_temperature = 1.0f;
  uint64_t seed = 1;
};

struct HeadLoss {
  double total = 0, smooth_l1 = 0, soft_ce = 0;
};

struct HeadTrainProgress {
  int64_t step = 0, steps = 0;
  HeadLoss loss;  // this step's
  double lr = 0;
  double grad_norm = 0;
  int64_t positions = 0;  // counted positions so far
  double seconds = 0;
};

struct HeadTrainResult {
  HeadLoss first, last;  // the first step's loss, and the mean of the last 10 % of steps
  double seconds = 0;
  int64_t positions = 0;
  float noise_amplitude = 0;  // the absolute noise half-width used
};

struct HeadAgreement {
  int64_t positions = 0;
  double top1 = 0, top5 = 0, top10 = 0;  // how often the target's greedy next token is among
                                         // the draft's top k
  HeadLoss loss;                         // without noise
};

// A trainable head of the target's shapes. The target must outlive it.
class HeadTrainer {
 public:
  HeadTrainer(const Model& target, const HeadInit& init);
  ~HeadTrainer();
  HeadTrainer(const HeadTrainer&) = delete;
  HeadTrainer& operator=(const HeadTrainer&) = delete;

  HeadTrainResult train(const HeadData& data, const HeadTrainOptions& options, Threads& threads,
                        const std::function<void(const HeadTrainProgress&)>& progress = nullptr);
  // dir/config.json and dir/model.safetensors (the head tensors in F32 or BF16); creates dir.
  void save(const std::string& dir, DType dtype) const;
  // Head position j (true features) drafts x_{j+2}, against the target's greedy choice.
  HeadAgreement agreement(const HeadData& held_out, int64_t seq_len, Threads& threads);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Mean tau of EAGLE-2 drafting with `head` over the prompts at temperature 0, dynamic tree
// 60/5/10 (cycle-weighted).
double measure_tau(Model& target, Head& head, const std::vector<std::vector<int32_t>>& prompts,
                   int64_t max_new_tokens, Threads& threads);
// Mean tau at temperature 0 of the drafter a spec names (e.g. "medusa:DIR"), made for `target`.
double measure_tau(Model& target, const DrafterSpec& spec,
                   const std::vector<std::vector<int32_t>>& prompts, int64_t max_new_tokens,
                   Threads& threads);

// ---- Medusa and Hydra heads (train-head --arch medusa|hydra; docs/TRAINING.md) ----
// K heads on the target's feature f_t, head k learning the target's own distribution of x_{t+1+k}
// (soft cross-entropy against softmax(lm_head(f_{t+k})), lm_head frozen and shared, the heads'
// losses averaged); Hydra's head k also reads the embeddings of x_{t+1} .. x_{t+k}.
struct MedusaInit {
  bool hydra = false;
  int heads = 4;   // K (at most 16)
  int layers = 1;  // residual blocks per head (at most 16)
  uint64_t seed = 1;
};

struct MedusaLoss {
  double total = 0;              // mean over heads
  std::vector<double> per_head;  // each head's soft cross-entropy
};

struct MedusaTrainProgress {
  int64_t step = 0, steps = 0;
  MedusaLoss loss;  // this step's
  double lr = 0, grad_norm = 0;
  int64_t positions = 0;  // positions seen so far
  double seconds = 0;
};

struct MedusaTrainResult {
  MedusaLoss first, last;  // the first step's, and the mean of the last 10 % of steps
  double seconds = 0;
  int64_t positions = 0;
};

struct MedusaAgreement {
  std::vector<int64_t> positions;  // per head: positions where its target token exists
  std::vector<double> top1, top5;  // per head: the target's greedy token is the head's top 1 / 5
  MedusaLoss loss;
};

// Trainable Medusa or Hydra heads of the target's shapes. The target must outlive them.
class MedusaTrainer {
 public:
  MedusaTrainer(const Model& target, const MedusaInit& init);
  ~MedusaTrainer();
  MedusaTrainer(const MedusaTrainer&) = delete;
  MedusaTrainer& operator=(const MedusaTrainer&) = delete;

  // options as for HeadTrainer::train; noise and ce_weight do not apply.
  MedusaTrainResult train(
      const HeadData& data, const HeadTrainOptions& options, Threads& threads,
      const std::function<void(const MedusaTrainProgress&)>& progress = nullptr);
  // dir/config.json and dir/model.safetensors (F32 or BF16), the folder "medusa:DIR" /
  // "hydra:DIR" loads; creates dir.
  void save(const std::string& dir, DType dtype) const;
  MedusaAgreement agreement(const HeadData& held_out, int64_t seq_len, Threads& threads);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// ---- EAGLE-3 heads (train-head --arch eagle3; docs/TRAINING.md "EAGLE-3 heads") ----
// One decoder layer on the target's layers {2, L/2, L-3} (their inputs, concatenated), trained
// with training-time test: unrolled ttt_steps steps on its own outputs, each step's soft
// cross-entropy against the target's distribution restricted to the draft vocabulary (the
// draft_vocab_size most frequent tokens of the training data), weighted 0.8^s.
struct Eagle3Init {
  uint64_t seed = 1;
  int64_t draft_vocab_size = 1024;  // capped at the target's vocabulary
  int64_t intermediate = 0;         // the MLP width (0: the target's)
  int64_t ttt_steps = 7;            // unrolled steps in training (at least 3)
  // Recipe options beyond the reference (docs/TRAINING.md "EAGLE-3 heads"): the first
  // ttt_warmup optimizer steps are short: they unroll ttt_short_steps steps (1: step 0 alone, a
  // curriculum); after them every ttt_full_every-th step (counted back from the last, and the
  // last 10 % of steps) unrolls ttt_steps and the others are short. state_loss > 0 adds
  // EAGLE-1/2's regression of the head's normed output onto the target's final-norm state.
  int64_t ttt_warmup = 0;
  int64_t ttt_short_steps = 1;
  int64_t ttt_full_every = 1;
  double state_loss = 0.0;
  // The target layers whose inputs the head reads, low to high (empty: the reference's
  // {2, L/2, L-3}); saved as eagle_aux_hidden_state_layer_ids when given.
  std::vector<int32_t> feature_layers;
  // Train fc on each feature layer's inputs divided by their RMS over the training data (the
  // saved fc.weight has the division folded in, so the head reads raw features as published
  // heads do). The raw residual stream is far from unit scale (RMS about 40 on the bundled
  // model); see docs/TRAINING.md "EAGLE-3 heads".
  bool scale_features = false;
  // The teacher: the target's distribution over the draft vocabulary at this temperature (1: as
  // the reference; below 1 sharper; 0: one-hot on the target's argmax). Below 1 the head's
  // probabilities estimate how likely each token is to be the target's greedy choice, which is
  // what greedy verification accepts and what the uncalibrated tree ranks by.
  double teacher_temperature = 1.0;
};

struct Eagle3StepStats {
  double total = 0;           // sum over steps s of 0.8^s (loss[s] + state_loss x its SmoothL1)
  std::vector<double> loss;   // per unrolled step: soft cross-entropy
  std::vector<double> top1;   // per unrolled step: draft argmax == the target's (restricted)
  std::vector<double> state;  // per unrolled step: the state term's SmoothL1 (0 without it)
};

struct Eagle3TrainProgress {
  int64_t step = 0, steps = 0;
  Eagle3StepStats stats;  // this step's
  double lr = 0, grad_norm = 0, seconds = 0;
  int64_t positions = 0;  // counted positions so far
};

struct Eagle3TrainResult {
  Eagle3StepStats first, last;  // the first step's, and the mean of the last 10 % of steps
  double seconds = 0;
  int64_t positions = 0;
};

struct Eagle3Agreement {
  std::vector<int64_t> positions;  // per unrolled step: counted positions
  Eagle3StepStats stats;
};

// An EAGLE-3 head for the target, its draft vocabulary taken from `data` (recorded with
// feature_layers(target)). The target must outlive it.
class Eagle3HeadTrainer {
 public:
  // The target layers whose inputs the head reads: `chosen` checked against the target, or the
  // default {2, L/2, L-3} when empty (Error for targets of fewer than 7 layers).
  static std::vector<int32_t> feature_layers(const Model& target,
                                             const std::vector<int32_t>& chosen = {});
  // The largest Eagle3Init::ttt_warmup for a run of `steps` optimizer steps: all but the last
  // 10 % (at least the last step), which train every unrolled step.
  static int64_t max_ttt_warmup(int64_t steps);

  Eagle3HeadTrainer(const Model& target, const HeadData& data, const Eagle3Init& init);
  ~Eagle3HeadTrainer();
  Eagle3HeadTrainer(const Eagle3HeadTrainer&) = delete;
  Eagle3HeadTrainer& operator=(const Eagle3HeadTrainer&) = delete;

  int64_t draft_vocab_size() const;
  double vocab_coverage() const;  // share of the training tokens the draft vocabulary holds
  int64_t distinct_tokens() const;
  // Per feature layer, the factor fc trains on (Eagle3Init::scale_features: 1 / RMS; else 1).
  std::vector<float> feature_scale() const;

  // options as for HeadTrainer::train; noise and ce_weight do not apply.
  Eagle3TrainResult train(
      const HeadData& data, const HeadTrainOptions& options, Threads& threads,
      const std::function<void(const Eagle3TrainProgress&)>& progress = nullptr);
  // The published EAGLE-3 layout (config.json + model.safetensors with d2t / t2d), F32 or BF16:
  // the folder --draft loads.
  void save(const std::string& dir, DType dtype) const;
  Eagle3Agreement agreement(const HeadData& held_out, int64_t seq_len, Threads& threads);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace eagle2::api

// Training an EAGLE-3 head (issue 15 item 4; docs/TRAINING.md "EAGLE-3 heads"): its draft
// vocabulary from the training data, batches of windows with the target's teacher distributions,
// training-time test (train/eagle3_unrolled.h) with AdamW, the export in the layout EagleHead
// loads (draft/eagle3_config.h), and held-out agreement per unrolled step.
//
// Data: HeadSequence with `aux` = the inputs of the target's layers feature_layers() (the
// reference's default {2, L/2, L-3}) and `features` = the final-norm states, from which the
// teacher is recomputed per batch: softmax over the draft vocabulary's columns of the target's
// lm_head(f_p) (what the target would say at position p, restricted and renormalised, as the
// reference). Recomputing costs one lm_head matmul per window offset; storing the restricted
// distributions instead would take Vd floats per position (0.9 GB for the bundled recipe).
//
// Row mask: the teacher at position p counts when p exists in the sequence AND the target's argmax
// over its FULL vocabulary lies in the draft vocabulary. The second condition is the reference's
// (position_mask = t2d[argmax] * loss_mask) and we keep it: where the target's choice cannot be
// drafted, the restricted distribution teaches the head to rank tokens the target will not pick,
// which wastes capacity on positions that cannot be accepted anyway.
//
// Init: fc and the layer random (nn.Linear's default, as the reference); lm_head = the target's
// lm_head rows of the kept ids: a WARM START (the reference starts it random), because the head's
// output is read through a norm of the target's width and the target's rows already rank tokens
// well from features of that scale, so early steps need not relearn the vocabulary. The embedding
// is the target's, frozen.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/thread_pool.h"
#include "model/llama_model.h"
#include "train/eagle3_unrolled.h"
#include "train/head_data.h"
#include "train/parameter.h"

namespace eagle2::train {

// The draft vocabulary of an EAGLE-3 head trained on `data`: token counts over every token a
// training position predicts (tokens[1..] of each sequence), draft/draft_vocab.h's
// eagle3_draft_ids. coverage = share of those tokens whose id is kept.
struct Eagle3DraftVocab {
  std::vector<int32_t> ids;  // ascending
  double coverage = 0;
  int64_t distinct = 0;  // distinct ids that occurred
};
Eagle3DraftVocab eagle3_draft_vocab(const std::vector<HeadSequence>& data, int64_t vocab_size,
                                    int64_t n);

// The target layers an EAGLE-3 head of `target` reads: {2, L/2, L-3} (Error naming the field for
// targets with fewer than 7 layers).
std::vector<int32_t> eagle3_default_layers(const LlamaModel& target);
// `chosen` checked against the target as the loader checks a config's ids (empty: the default).
std::vector<int32_t> eagle3_layers(const LlamaModel& target, const std::vector<int32_t>& chosen);

struct Eagle3Init {
  uint64_t seed = 1;
  int64_t intermediate = 0;  // the MLP width (0: the target's)
  // The target layers whose inputs the head reads, in concatenation order (empty: the default
  // {2, L/2, L-3}); written to config.json as eagle_aux_hidden_state_layer_ids when given.
  std::vector<int32_t> feature_layers;
  // Per feature layer (concatenation order), a factor the trainer multiplies that layer's inputs
  // by before fc (empty: 1). The export folds it into fc.weight's columns, so the saved head reads
  // the raw features as every EAGLE-3 head does. With 1/RMS (eagle3_feature_scale) fc trains on
  // features of unit scale: the raw residual stream has an RMS of about 40 on the bundled model,
  // so without it each AdamW step of fc moves its output about 40x more than a layer's step on
  // normed inputs, and fc's output outweighs the attention and MLP in the head's residual.
  std::vector<float> feature_scale;
  // The teacher's temperature: softmax(logits / teacher_temperature) over the draft vocabulary
  // (1: the target's own distribution, as the reference; 0: one-hot on the target's argmax).
  // Below 1 the head learns how likely each token is to be the target's CHOICE, which is what
  // greedy verification accepts and what the uncalibrated tree ranks by; sampling verification
  // accepts by overlap with the target's distribution, which 1 teaches.
  float teacher_temperature = 1.0f;
};

// 1 / RMS of each of `groups` feature layers' inputs over `data` (HeadSequence::aux, `hidden`
// wide per layer); 1 for a layer whose values are all zero.
std::vector<float> eagle3_feature_scale(const std::vector<HeadSequence>& data, int64_t groups,
                                        int64_t hidden);

// One batch of B windows of T head positions and S unrolled steps (the storage behind an
// Eagle3Window; layout there).
struct Eagle3Batch {
  int64_t batch = 0, seq_len = 0, steps = 0;
  std::vector<float> features;     // [B*T, F]
  std::vector<int32_t> positions;  // [B*T]
  std::vector<int32_t> tokens;     // [B, T+S]
  std::vector<float> teacher;      // [B, T+S, Vd]
  std::vector<uint8_t> counted;    // [B, T+S]
  std::vector<float> states;       // [B, T+S, C] the target's final-norm states (zero past the end)
  // [B] rows of each window that can count: up to its sequence's second-to-last position (the
  // last has no next token), at most T. The loss runs only these (Eagle3Window::lengths), so a
  // window cut short by its sequence's end does not pay for its padding.
  std::vector<int64_t> lengths;
  // The view for the loss; state_weight > 0 adds the optional state term (eagle3_unrolled.h).
  Eagle3Window window(float state_weight = 0.0f) const;
};

class Eagle3Trainer {
 public:
  // draft_ids: ascending, distinct, in [0, V). The head takes the target's width, heads, kv heads,
  // head_dim, RoPE and norm eps.
  Eagle3Trainer(const LlamaModel& target, std::vector<int32_t> draft_ids, const Eagle3Init& init);
  Eagle3Trainer(const Eagle3Trainer&) = delete;
  Eagle3Trainer& operator=(const Eagle3Trainer&) = delete;

  const Eagle3Config& config() const { return cfg_; }
  const LlamaModel& target() const { return target_; }
  const std::vector<int32_t>& draft_ids() const { return draft_ids_; }
  const std::vector<int32_t>& feature_layers() const { return layers_; }
  const std::vector<float>& feature_scale() const { return feature_scale_; }
  Eagle3Weights& weights() { return *w_; }
  ParamList params() const { return params_; }

  // Windows (sequence, start) of `data` into `batch` (T positions, S steps each), teachers
  // computed with the target's lm_head. Error when a sequence lacks aux features of this head.
  void fill(Eagle3Batch& batch, const std::vector<HeadSequence>& data,
            const std::vector<std::pair<int32_t, int64_t>>& windows, int64_t T, int64_t S,
            ThreadPool& pool) const;

  // Forward (and with backward, gradients ADDED to the parameters) over a filled batch, with the
  // optional state term at state_weight > 0.
  Eagle3Loss step(const Eagle3Batch& batch, bool backward, ThreadPool& pool,
                  float state_weight = 0.0f);

  // dir/config.json (the target's LLaMA fields, 1 layer, the MLP width, draft_vocab_size, the
  // feature layers, architectures ["LlamaForCausalLMEagle3"]) and dir/model.safetensors (fc,
  // midlayer.*, norm, lm_head in dtype F32 or BF16; d2t I64; t2d BOOL; no embed_tokens).
  void save(const std::string& dir, DType dtype) const;

 private:
  const LlamaModel& target_;
  std::vector<int32_t> draft_ids_;
  std::vector<int32_t> layers_;
  std::vector<float> feature_scale_;  // [layers_.size()] (Eagle3Init::feature_scale; 1 if absent)
  float teacher_temperature_ = 1.0f;  // Eagle3Init::teacher_temperature
  Eagle3Config cfg_;
  std::unique_ptr<Eagle3Weights> w_;
  std::vector<Parameter*> params_;
  Eagle3Unrolled state_;
};

struct Eagle3StepStats {
  double total = 0;           // sum_s 0.8^s (loss[s] + state_weight x the state term)
  std::vector<double> loss;   // [S] soft-CE of step s
  std::vector<double> top1;   // [S] counted rows whose draft argmax is the teacher's
  std::vector<double> state;  // [S] the state term's SmoothL1 before its weight (0 without it)
};

// The largest Eagle3TrainOptions::ttt_warmup for `steps` optimizer steps: the last 10 % (at
// least one step) always unroll every step.
int64_t max_ttt_warmup(int64_t steps);

struct Eagle3TrainOptions {
  int64_t steps = 400, batch = 8, seq_len = 256, warmup = 20;
  int64_t ttt_steps = 7;  // S (>= 3)
  // A curriculum: the first ttt_warmup optimizer steps are short (ttt_short_steps unrolled steps:
  // by default step 0's loss alone, at about 1/S of the cost), the rest as ttt_full_every says. At
  // most the steps before the last 10 %.
  int64_t ttt_warmup = 0;
  // Unrolled steps of a short optimizer step, in [1, ttt_steps].
  int64_t ttt_short_steps = 1;
  // After the warmup, only every ttt_full_every-th optimizer step (counted back from the last) is
  // full; the others are short. The last 10 % are always full. 1: every step after the warmup.
  // Deep unrolling then trains all along the learning-rate schedule at a fraction of its cost.
  int64_t ttt_full_every = 1;
  // Weight of the optional state term (eagle3_unrolled.h; 0: the reference's token loss only).
  double state_weight = 0.0;
  double lr = 2e-2, min_lr_ratio = 0.1, clip_norm = 0.5;
  float weight_decay = 0.0f;
  uint64_t seed = 1;
};

// How many steps optimizer step `step` (0-based) unrolls under the options' schedule.
int64_t ttt_unrolled_at(const Eagle3TrainOptions& o, int64_t step);

struct Eagle3TrainProgress {
  int64_t step = 0, steps = 0;
  Eagle3StepStats stats;  // this step's
  double lr = 0, grad_norm = 0, seconds = 0;
  int64_t positions = 0;  // counted step-0 rows so far
};

struct Eagle3TrainResult {
  Eagle3StepStats first, last;  // the first step's; the mean of the last 10 % of steps
  double seconds = 0;
  int64_t positions = 0;
};

Eagle3TrainResult train_eagle3(
    Eagle3Trainer& head, const std::vector<HeadSequence>& data, const Eagle3TrainOptions& options,
    ThreadPool& pool, const std::function<void(const Eagle3TrainProgress&)>& progress = nullptr);

// Held-out: every window of seq_len positions, unrolled `steps` steps; per step the counted rows
// and their mean loss and top-1 agreement with the target's restricted argmax.
struct Eagle3Agreement {
  std::vector<int64_t> positions;
  Eagle3StepStats stats;
};
Eagle3Agreement evaluate_eagle3(Eagle3Trainer& head, const std::vector<HeadSequence>& data,
                                int64_t seq_len, int64_t steps, ThreadPool& pool);

}  // namespace eagle2::train

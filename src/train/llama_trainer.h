// Training a LLaMA model from scratch on a token stream: random windows of T + 1 tokens from a
// seeded RNG, AdamW with linear warmup and cosine decay, gradient clipping by global norm,
// held-out loss on fixed windows, and checkpoints from which a resumed run is bit-identical to an
// uninterrupted one (weights, moments, step and the window RNG all restored).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/thread_pool.h"
#include "model/llama_config.h"
#include "train/llama_train_model.h"
#include "train/optimizer.h"
#include "train/train_rng.h"

namespace eagle2::train {

struct LlamaTrainSettings {
  int64_t batch = 8;          // B sequences per step
  int64_t seq_len = 128;      // T tokens each (<= max_position_embeddings)
  int64_t steps = 1000;       // optimizer steps in the whole run
  double lr = 1e-3;           // peak learning rate
  int64_t warmup = 100;       // linear warmup steps
  double min_lr = 1e-4;       // reached by the cosine at the last step
  float weight_decay = 0.1f;  // on matrices and the embedding, not on norm weights
  float beta1 = 0.9f;
  float beta2 = 0.95f;
  float clip = 1.0f;  // global gradient-norm clip; 0 = none
  float init_std = 0.02f;
  uint64_t seed = 0;         // weights and window sampling
  int64_t eval_batches = 4;  // held-out loss over this many batches of fixed windows

  void validate() const;  // Error on non-positive sizes or negative rates
};

struct StepStats {
  double loss = 0;       // mean training loss of the step's batch
  double grad_norm = 0;  // before clipping
  double lr = 0;
};

class LlamaTrainer {
 public:
  // train_tokens needs at least seq_len + 1 tokens; held_out may be empty (no evaluation).
  // Weights are initialised from settings.seed.
  LlamaTrainer(const LlamaConfig& model_config, const LlamaTrainSettings& settings,
               std::vector<int32_t> train_tokens, std::vector<int32_t> held_out_tokens);

  // One optimizer step on a fresh batch of random windows.
  StepStats step(ThreadPool& pool);
  int64_t steps_done() const { return step_; }
  bool finished() const { return step_ >= s_.steps; }

  // Mean loss over eval_batches batches of windows evenly spaced over the held-out stream (the
  // same windows every time; the training RNG is not touched). NaN when there is no held-out data.
  double held_out_loss(ThreadPool& pool);
  bool has_held_out() const;

  // Checkpoint (train/checkpoint.h) plus the model config and run settings, checked on resume:
  // resuming with a different model shape or settings that change the trajectory is an Error.
  void save_checkpoint(const std::string& path) const;
  void load_checkpoint(const std::string& path);

  LlamaTrainModel& model() { return *model_; }
  const LlamaTrainSettings& settings() const { return s_; }
  int64_t tokens_per_step() const { return s_.batch * s_.seq_len; }

 private:
  std::string fingerprint() const;

  LlamaTrainSettings s_;
  std::unique_ptr<LlamaTrainModel> model_;
  std::unique_ptr<AdamW> opt_;
  LrSchedule schedule_;
  std::vector<int32_t> train_, held_out_;
  TrainRng rng_;
  int64_t step_ = 0;
  std::vector<int32_t> inputs_, targets_;  // [B*T]
};

}  // namespace eagle2::train

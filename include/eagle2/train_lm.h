// Training a LLaMA model from scratch: a SentencePiece tokenizer trained on the corpus, then the
// model on the tokenized corpus, written in the Hugging Face layout Model::load reads
// (config.json, model.safetensors, tokenizer.model) plus checkpoint.safetensors for resuming.
//
// Contract. Units: steps, tokens, seconds (eta_s), tokens/s; losses in nats per token. Ownership:
// run_train_lm borrows the config and threads for the call and writes only under
// options.out_dir (config.json, model.safetensors, tokenizer.model, checkpoint.safetensors,
// train_log.tsv, loss_curve.svg). Errors: eagle2::Error naming the file and key for a config
// with an unknown, missing or mistyped key, a missing path or a folder without files, a
// tokenizer whose vocabulary is not the config's, a resume without out_dir's tokenizer.model
// or checkpoint.safetensors. The events run on the calling thread; an
// exception thrown by one propagates out of the call. Threads: one run at a time per out_dir.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "eagle2/runtime.h"

namespace eagle2::api {

// The run's JSON configuration ("model", "tokenizer" and "train" sections; configs/tiny-lm.json).
// Unknown keys are errors, so a typo never falls back to a default silently.
class TrainLmConfig {
 public:
  static TrainLmConfig load(const std::string& path);
  ~TrainLmConfig();
  TrainLmConfig(TrainLmConfig&&) noexcept;
  TrainLmConfig& operator=(TrainLmConfig&&) noexcept;

  struct Impl;  // the library's side of the handle (src/api)
  explicit TrainLmConfig(std::unique_ptr<Impl> impl);
  Impl& impl() const { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

struct TrainLmOptions {
  std::vector<std::string> corpus;    // UTF-8 text files or folders of them (corpus.h)
  std::vector<std::string> held_out;  // optional, likewise
  std::string out_dir;
  bool resume = false;     // continue from out_dir/checkpoint.safetensors
  int64_t stop_after = 0;  // stop (checkpointed) once this many steps are done; 0 = to the end
  // A SentencePiece tokenizer.model to reuse instead of training one (e.g. a draft model that
  // must share its target's tokens): copied to out_dir, its vocabulary must be the config's.
  std::string tokenizer;
};

struct TrainLmProgress {
  int64_t step = 0;   // steps done
  int64_t steps = 0;  // of the whole run
  double loss = 0;    // this step's mean training loss
  double lr = 0;
  double tokens_per_s = 0;  // over this process's steps so far
  double eta_s = 0;
};

// What the run reports while it runs (each optional).
struct TrainLmEvents {
  std::function<void(const std::string&)> message;          // phase lines ("tokenizer: ...")
  std::function<void(const TrainLmProgress&)> step;         // after every step
  std::function<void(int64_t step, double loss)> held_out;  // after every evaluation
};

struct TrainLmResult {
  int64_t steps_done = 0;  // of the whole run (resumed ones included)
  int64_t steps_run = 0;   // by this call
  int64_t train_tokens = 0;
  int64_t held_out_tokens = 0;
  double last_loss = 0;      // of the last step run (NaN if none ran)
  double held_out_loss = 0;  // latest evaluation (NaN without held-out data)
  double tokens_per_s = 0;
};

TrainLmResult run_train_lm(const TrainLmConfig& config, const TrainLmOptions& options,
                           const TrainLmEvents& events, Threads& threads);

}  // namespace eagle2::api

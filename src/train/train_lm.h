// The train-lm pipeline: a SentencePiece tokenizer trained on the corpus, then a LLaMA model
// trained from scratch on the tokenized corpus, exported in the Hugging Face layout
// (config.json, model.safetensors, tokenizer.model) that LlamaModel and Tokenizer load.
// The CLI (`eagle2 train-lm`) is a thin shell over run_train_lm(); tests call it directly.
//
// Output folder:
//   tokenizer.model         trained first; reused as is by --resume
//   config.json, model.safetensors   the exported model (at every checkpoint and at the end)
//   checkpoint.safetensors  the training state (train/checkpoint.h), for --resume
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "core/thread_pool.h"
#include "model/llama_config.h"
#include "tokenizer/sp_trainer.h"
#include "train/llama_trainer.h"

namespace eagle2::train {

// Read from a JSON file with three sections (every key optional but the model's sizes; unknown
// keys are Errors, so a typo never silently falls back to a default):
//   "model":     hidden, layers, heads, kv_heads, intermediate, vocab, ctx, tie, rope_theta,
//                rms_eps
//   "tokenizer": character_coverage, max_lines
//   "train":     batch, seq_len, steps, lr, warmup, min_lr, weight_decay, beta1, beta2, clip,
//                init_std, seed, eval_every, eval_batches, checkpoint_every, held_out_fraction,
//                dtype ("f32" or "bf16", of the exported weights)
// The tokenizer's vocabulary size is the model's vocab.
struct TrainLmConfig {
  LlamaConfig model;
  SpTrainOptions tokenizer;
  LlamaTrainSettings train;
  int64_t eval_every = 0;        // held-out loss every this many steps (0: only at the end)
  int64_t checkpoint_every = 0;  // checkpoint + export every this many steps (0: only at the end)
  // Without held-out files, this tail fraction of the training tokens is held out instead.
  double held_out_fraction = 0.05;
  DType export_dtype = DType::F32;

  static TrainLmConfig parse(const std::string& json_text, const std::string& where);
  static TrainLmConfig load(const std::string& path);
};

// Files and folders -> files: a folder stands for all regular files below it (recursively),
// sorted by path; each file is one document (a BOS in front). Error on a missing path or a folder
// without files.
std::vector<std::string> expand_text_paths(const std::vector<std::string>& paths);

struct TrainLmOptions {
  std::vector<std::string> corpus;    // UTF-8 text files or folders of them (expand_text_paths)
  std::vector<std::string> held_out;  // optional, likewise
  std::string out_dir;
  bool resume = false;     // continue from out_dir/checkpoint.safetensors
  int64_t stop_after = 0;  // stop (checkpointed) once this many steps are done; 0 = run to the end
  std::string tokenizer;   // a tokenizer.model to reuse (copied to out_dir) instead of training one
};

struct TrainLmProgress {
  int64_t step = 0;   // steps done
  int64_t steps = 0;  // of the whole run
  StepStats stats;
  double tokens_per_s = 0;  // over this process's steps so far
  double eta_s = 0;
};

struct TrainLmEvents {
  std::function<void(const std::string&)> message;          // phase lines ("tokenizer: ...")
  std::function<void(const TrainLmProgress&)> step;         // after every step
  std::function<void(int64_t step, double loss)> held_out;  // after every evaluation
};

struct TrainLmResult {
  int64_t steps_done = 0;    // of the whole run (resumed ones included)
  int64_t steps_run = 0;     // by this call
  int64_t train_tokens = 0;  // size of the tokenized training stream
  int64_t held_out_tokens = 0;
  double last_loss = 0;      // training loss of the last step run (NaN if none ran)
  double held_out_loss = 0;  // latest evaluation (NaN without held-out data)
  double tokens_per_s = 0;
};

TrainLmResult run_train_lm(const TrainLmConfig& config, const TrainLmOptions& options,
                           const TrainLmEvents& events, ThreadPool& pool);

// Tokens of the files, each encoded whole with a BOS in front, concatenated.
std::vector<int32_t> tokenize_files(const std::string& tokenizer_path,
                                    const std::vector<std::string>& paths);

}  // namespace eagle2::train

#include "train/llama_trainer.h"

#include <cmath>
#include <limits>
#include <sstream>

#include "core/error.h"
#include "train/checkpoint.h"

namespace eagle2::train {

namespace {

uint64_t fnv1a(const std::vector<int32_t>& tokens) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (int32_t t : tokens) {
    h ^= static_cast<uint32_t>(t);
    h *= 0x100000001b3ull;
  }
  return h;
}

}  // namespace

void LlamaTrainSettings::validate() const {
  if (batch <= 0 || seq_len <= 0 || steps <= 0)
    fail("train settings: batch (", batch, "), seq_len (", seq_len, ") and steps (", steps,
         ") must be positive");
  if (!(lr > 0) || min_lr < 0 || warmup < 0 || weight_decay < 0 || clip < 0 || !(init_std > 0))
    fail(
        "train settings: lr must be positive; min_lr, warmup, weight_decay, clip non-negative; "
        "init_std positive");
  if (!(beta1 >= 0 && beta1 < 1 && beta2 >= 0 && beta2 < 1))
    fail("train settings: betas must lie in [0, 1)");
  if (eval_batches < 0) fail("train settings: eval_batches must be non-negative");
}

LlamaTrainer::LlamaTrainer(const LlamaConfig& model_config, const LlamaTrainSettings& settings,
                           std::vector<int32_t> train_tokens, std::vector<int32_t> held_out_tokens)
    : s_(settings),
      train_(std::move(train_tokens)),
      held_out_(std::move(held_out_tokens)),
      rng_(settings.seed ^ 0x6a09e667f3bcc909ull) {
  s_.validate();
  model_ = std::make_unique<LlamaTrainModel>(model_config);
  const LlamaConfig& c = model_->config();
  if (s_.seq_len > c.max_position_embeddings)
    fail("train settings: seq_len ", s_.seq_len, " exceeds the model's max_position_embeddings ",
         c.max_position_embeddings);
  if (static_cast<int64_t>(train_.size()) < s_.seq_len + 1)
    fail("training data: ", train_.size(), " tokens, need at least seq_len + 1 = ", s_.seq_len + 1);
  for (const std::vector<int32_t>* stream : {&train_, &held_out_})
    for (int32_t t : *stream)
      if (t < 0 || t >= c.vocab_size)
        fail("training data: token id ", t, " is outside the vocabulary [0, ", c.vocab_size, ")");

  model_->init(s_.seed, s_.init_std);
  AdamWConfig ac;
  ac.beta1 = s_.beta1;
  ac.beta2 = s_.beta2;
  ac.weight_decay = s_.weight_decay;
  opt_ = std::make_unique<AdamW>(ac, model_->params());
  schedule_ = LrSchedule{s_.lr, s_.warmup, s_.steps, LrDecay::Cosine, s_.min_lr};
  inputs_.resize(static_cast<size_t>(s_.batch * s_.seq_len));
  targets_.resize(inputs_.size());
}

StepStats LlamaTrainer::step(ThreadPool& pool) {
  const int64_t B = s_.batch, T = s_.seq_len;
  // Window starts in [0, n - T - 1]: each window needs T inputs plus the next token as target.
  const uint64_t n_starts = static_cast<uint64_t>(train_.size()) - static_cast<uint64_t>(T);
  for (int64_t b = 0; b < B; ++b) {
    const auto start = static_cast<int64_t>(rng_.next_u64() % n_starts);
    for (int64_t t = 0; t < T; ++t) {
      inputs_[b * T + t] = train_[start + t];
      targets_[b * T + t] = train_[start + t + 1];
    }
  }
  zero_grads(model_->params());
  StepStats st;
  st.loss = model_->forward_backward(inputs_.data(), targets_.data(), B, T, true, pool);
  st.grad_norm =
      s_.clip > 0 ? clip_grad_norm(model_->params(), s_.clip, pool)
                  : clip_grad_norm(model_->params(), std::numeric_limits<double>::infinity(), pool);
  st.lr = schedule_.at(step_);
  opt_->step(static_cast<float>(st.lr), pool);
  ++step_;
  return st;
}

bool LlamaTrainer::has_held_out() const {
  return static_cast<int64_t>(held_out_.size()) >= 2 && s_.eval_batches > 0;
}

double LlamaTrainer::held_out_loss(ThreadPool& pool) {
  if (!has_held_out()) return std::numeric_limits<double>::quiet_NaN();
  // A short held-out stream gets shorter windows rather than none.
  const int64_t T = std::min<int64_t>(s_.seq_len, static_cast<int64_t>(held_out_.size()) - 1);
  const int64_t B = s_.batch;
  const int64_t n_windows = B * s_.eval_batches;
  const int64_t span = static_cast<int64_t>(held_out_.size()) - T;  // number of valid starts
  std::vector<int32_t> in(static_cast<size_t>(B * T)), tg(in.size());
  double total = 0;
  for (int64_t e = 0; e < s_.eval_batches; ++e) {
    for (int64_t b = 0; b < B; ++b) {
      const int64_t w = e * B + b;
      const int64_t start = n_windows > 1 ? w * (span - 1) / (n_windows - 1) : 0;
      for (int64_t t = 0; t < T; ++t) {
        in[b * T + t] = held_out_[start + t];
        tg[b * T + t] = held_out_[start + t + 1];
      }
    }
    total += model_->forward_backward(in.data(), tg.data(), B, T, false, pool);
  }
  return total / static_cast<double>(s_.eval_batches);
}

std::string LlamaTrainer::fingerprint() const {
  std::ostringstream f;
  f.precision(17);
  f << "batch=" << s_.batch << " seq_len=" << s_.seq_len << " steps=" << s_.steps << " lr=" << s_.lr
    << " warmup=" << s_.warmup << " min_lr=" << s_.min_lr << " weight_decay=" << s_.weight_decay
    << " beta1=" << s_.beta1 << " beta2=" << s_.beta2 << " clip=" << s_.clip << " seed=" << s_.seed
    << " data=" << train_.size() << ":" << fnv1a(train_);
  return f.str();
}

void LlamaTrainer::save_checkpoint(const std::string& path) const {
  TrainState st;
  st.step = step_;
  st.rng_state = rng_.state();
  st.extra["model_config"] = model_->config().to_json();
  st.extra["run"] = fingerprint();
  train::save_checkpoint(path, *opt_, st);
}

void LlamaTrainer::load_checkpoint(const std::string& path) {
  const TrainState st = train::load_checkpoint(path, *opt_);
  const auto get = [&](const char* key) {
    const auto it = st.extra.find(key);
    if (it == st.extra.end()) fail(path, ": not a train-lm checkpoint (no '", key, "' entry)");
    return it->second;
  };
  if (LlamaConfig::parse(get("model_config"), path).to_json() != model_->config().to_json())
    fail(path, ": the checkpoint's model config differs from this run's");
  if (get("run") != fingerprint())
    fail(path, ": the checkpoint was made with other settings or data (", get("run"),
         "), this run has (", fingerprint(), ")");
  step_ = st.step;
  rng_.set_state(st.rng_state);
}

}  // namespace eagle2::train

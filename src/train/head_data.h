// The training set of an EAGLE head (EAGLE2.md sections 1 and 6): token sequences together with the
// target's final-norm features f_j at every position. A sequence of T tokens gives T - 1 training
// positions: head position j takes (f_j, x_{j+1}) and learns to predict f_{j+1}.
//
// EAGLE-3 heads read other target states instead: the inputs of chosen decoder layers, recorded
// as `aux` when the layers are asked for (the same prefill computes both).
//
// Two sources: given text (the reference's recipe: responses kept fixed), or self-distillation,
// where the target continues each prompt itself (greedy and sampled at temperature 1), so the head
// learns the distribution it will have to draft at inference time.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "core/thread_pool.h"
#include "model/llama_model.h"
#include "train/train_rng.h"

namespace eagle2::train {

struct HeadSequence {
  std::vector<int32_t> tokens;  // [T]: x_0 .. x_{T-1}
  std::vector<float> features;  // [T, d]: f_0 .. f_{T-1} (final-norm target states)
  // [T, k * d] when k feature layers were asked for (ForwardCapture: each position's inputs of
  // those decoder layers, concatenated in the order asked); empty otherwise.
  std::vector<float> aux;
  int64_t source = 0;  // the prompt / document it came from (held-out splits go by source)

  int64_t length() const { return static_cast<int64_t>(tokens.size()); }
};

// Runs the target over `tokens` from an empty cache and records every position's feature (and
// its inputs of `feature_layers` as aux, when given). Error for fewer than 2 tokens, more than
// the model's context, or a layer the target does not have.
HeadSequence record_features(LlamaModel& target, std::span<const int32_t> tokens, ThreadPool& pool,
                             std::span<const int32_t> feature_layers = {});

struct SelfDistillOptions {
  int64_t max_new_tokens = 160;
  bool greedy = true;                   // one greedy continuation per prompt
  int sampled_per_prompt = 1;           // plus this many at temperature 1
  uint64_t seed = 1;                    // sampled continuation s of prompt p uses seed + 1000 p + s
  int64_t max_tokens = 0;               // cap on prompt + continuation (0 = the target's context)
  std::vector<int32_t> feature_layers;  // recorded as HeadSequence::aux when not empty
};

// (done, total) after each continuation.
using DataProgress = std::function<void(int64_t done, int64_t total)>;

// Continuations of each prompt (token ids, BOS included by the caller) by the target, recorded
// with their features. Prompts longer than the cap are cut; empty continuations (immediate EOS)
// still give the prompt's own positions.
std::vector<HeadSequence> self_distill(LlamaModel& target,
                                       const std::vector<std::vector<int32_t>>& prompts,
                                       const SelfDistillOptions& options, ThreadPool& pool,
                                       const DataProgress& progress = nullptr);

// Given documents (token ids), each cut into pieces of at most max_tokens (0 = the target's
// context); pieces after the first start with `bos` when bos >= 0, as a fresh context would.
// feature_layers as in record_features.
std::vector<HeadSequence> from_documents(LlamaModel& target,
                                         const std::vector<std::vector<int32_t>>& documents,
                                         int64_t max_tokens, int32_t bos, ThreadPool& pool,
                                         const DataProgress& progress = nullptr,
                                         std::span<const int32_t> feature_layers = {});

// Sends every sequence whose source is among the last `eval_sources` distinct sources (in order
// of first appearance) to `eval`, the rest to `train`, so that the continuations of one prompt
// never straddle the split.
void split_by_source(std::vector<HeadSequence> all, int64_t eval_sources,
                     std::vector<HeadSequence>& train, std::vector<HeadSequence>& eval);

// Training positions (sum of length - 1).
int64_t count_positions(const std::vector<HeadSequence>& seqs);

// The training windows of the head trainers (EAGLE, Medusa, Hydra): windows of `length`
// positions that cover every position with a next token once per epoch, handed out in a fresh
// shuffled order each epoch (Fisher-Yates with the trainer's rng, drawn when an epoch starts, so a
// trainer's other draws keep their place in its stream).
class HeadWindows {
 public:
  struct Window {
    int32_t seq;
    int64_t start;
  };
  // Error "train-head: no training positions" when no sequence has two tokens.
  HeadWindows(const std::vector<HeadSequence>& data, int64_t length);
  size_t size() const { return windows_.size(); }
  const Window& next(TrainRng& rng);

 private:
  std::vector<Window> windows_;
  std::vector<size_t> order_;
  size_t cursor_;
};

}  // namespace eagle2::train

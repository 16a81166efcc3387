#include "train/head_data.h"

#include <algorithm>
#include <set>

#include "core/error.h"
#include "speculative/generation.h"

namespace eagle2::train {

namespace {

int64_t resolve_cap(const LlamaModel& target, int64_t max_tokens) {
  const int64_t ctx = target.config().max_position_embeddings;
  return max_tokens > 0 ? std::min(max_tokens, ctx) : ctx;
}

}  // namespace

HeadSequence record_features(LlamaModel& target, std::span<const int32_t> tokens, ThreadPool& pool,
                             std::span<const int32_t> feature_layers) {
  const auto n = static_cast<int64_t>(tokens.size());
  if (n < 2) fail("head data: a sequence needs at least 2 tokens (got ", n, ")");
  KvCache kv = target.make_cache(n);
  ForwardResult out;
  const std::vector<int32_t> ids(tokens.begin(), tokens.end());
  // Batch invariance makes these features bit-identical to the ones the decoder computes token
  // by token, so the chunk size is only a speed choice.
  prefill(target, kv, ids, 128, out, pool, feature_layers);
  HeadSequence s;
  s.tokens = ids;
  s.features = std::move(out.hidden);
  s.aux = std::move(out.captured);
  return s;
}

std::vector<HeadSequence> self_distill(LlamaModel& target,
                                       const std::vector<std::vector<int32_t>>& prompts,
                                       const SelfDistillOptions& options, ThreadPool& pool,
                                       const DataProgress& progress) {
  const int64_t cap = resolve_cap(target, options.max_tokens);
  const int per_prompt = (options.greedy ? 1 : 0) + std::max(0, options.sampled_per_prompt);
  if (per_prompt == 0) fail("self-distillation: no greedy and no sampled continuations asked for");
  const int64_t total = static_cast<int64_t>(prompts.size()) * per_prompt;
  std::vector<HeadSequence> out;
  out.reserve(static_cast<size_t>(total));
  int64_t done = 0;
  for (size_t p = 0; p < prompts.size(); ++p) {
    std::vector<int32_t> prompt = prompts[p];
    if (static_cast<int64_t>(prompt.size()) > cap - 1) prompt.resize(static_cast<size_t>(cap - 1));
    if (prompt.empty()) fail("self-distillation: prompt ", p, " is empty");
    for (int c = 0; c < per_prompt; ++c) {
      const bool greedy = options.greedy && c == 0;
      GenerationOptions g;
      g.max_new_tokens =
          std::min<int64_t>(options.max_new_tokens, cap - static_cast<int64_t>(prompt.size()));
      g.sampling.temperature = greedy ? 0.0f : 1.0f;
      g.sampling.seed = options.seed + 1000 * static_cast<uint64_t>(p) + static_cast<uint64_t>(c);
      std::vector<int32_t> seq = prompt;
      if (g.max_new_tokens > 0) {
        KvCache kv = target.make_cache(static_cast<int64_t>(prompt.size()) + g.max_new_tokens);
        generate_plain(target, kv, prompt, g, pool, [&](int32_t t) {
          seq.push_back(t);
          return true;
        });
      }
      if (seq.size() >= 2) {
        HeadSequence s = record_features(target, seq, pool, options.feature_layers);
        s.source = static_cast<int64_t>(p);
        out.push_back(std::move(s));
      }
      if (progress) progress(++done, total);
    }
  }
  return out;
}

std::vector<HeadSequence> from_documents(LlamaModel& target,
                                         const std::vector<std::vector<int32_t>>& documents,
                                         int64_t max_tokens, int32_t bos, ThreadPool& pool,
                                         const DataProgress& progress,
                                         std::span<const int32_t> feature_layers) {
  const int64_t cap = resolve_cap(target, max_tokens);
  if (cap < 3) fail("head data: sequences of ", cap, " tokens are too short to train on");
  std::vector<HeadSequence> out;
  for (size_t d = 0; d < documents.size(); ++d) {
    const std::vector<int32_t>& doc = documents[d];
    size_t begin = 0;
    while (begin + 1 < doc.size()) {
      std::vector<int32_t> piece;
      if (begin > 0 && bos >= 0) piece.push_back(bos);
      const size_t room = static_cast<size_t>(cap) - piece.size();
      const size_t end = std::min(doc.size(), begin + room);
      piece.insert(piece.end(), doc.begin() + static_cast<std::ptrdiff_t>(begin),
                   doc.begin() + static_cast<std::ptrdiff_t>(end));
      if (piece.size() >= 2) {
        HeadSequence s = record_features(target, piece, pool, feature_layers);
        s.source = static_cast<int64_t>(d);
        out.push_back(std::move(s));
      }
      begin = end;
    }
    if (progress) progress(static_cast<int64_t>(d) + 1, static_cast<int64_t>(documents.size()));
  }
  return out;
}

void split_by_source(std::vector<HeadSequence> all, int64_t eval_sources,
                     std::vector<HeadSequence>& train, std::vector<HeadSequence>& eval) {
  std::vector<int64_t> order;
  std::set<int64_t> seen;
  for (const HeadSequence& s : all)
    if (seen.insert(s.source).second) order.push_back(s.source);
  const auto n_eval =
      static_cast<size_t>(std::clamp<int64_t>(eval_sources, 0, static_cast<int64_t>(order.size())));
  const std::set<int64_t> held(order.end() - static_cast<std::ptrdiff_t>(n_eval), order.end());
  train.clear();
  eval.clear();
  for (HeadSequence& s : all) (held.count(s.source) ? eval : train).push_back(std::move(s));
}

int64_t count_positions(const std::vector<HeadSequence>& seqs) {
  int64_t n = 0;
  for (const HeadSequence& s : seqs) n += std::max<int64_t>(0, s.length() - 1);
  return n;
}

HeadWindows::HeadWindows(const std::vector<HeadSequence>& data, int64_t length) {
  for (size_t s = 0; s < data.size(); ++s)
    for (int64_t st = 0; st < data[s].length() - 1; st += length)
      windows_.push_back({static_cast<int32_t>(s), st});
  if (windows_.empty()) fail("train-head: no training positions");
  order_.resize(windows_.size());
  cursor_ = order_.size();
}

const HeadWindows::Window& HeadWindows::next(TrainRng& rng) {
  if (cursor_ == order_.size()) {
    for (size_t i = 0; i < order_.size(); ++i) order_[i] = i;
    for (size_t i = order_.size() - 1; i > 0; --i)
      std::swap(order_[i], order_[rng.next_u64() % (i + 1)]);
    cursor_ = 0;
  }
  return windows_[order_[cursor_++]];
}

}  // namespace eagle2::train

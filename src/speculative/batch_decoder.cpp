#include "speculative/batch_decoder.h"

#include <algorithm>
#include <chrono>
#include <cstring>

#include "core/error.h"
#include "core/stopwatch.h"
#include "speculative/cycle_checks.h"

namespace eagle2 {

struct BatchDecoder::Sequence {
  Sequence(std::vector<int32_t> p, const GenerationOptions& o, std::unique_ptr<Drafter> dr,
           KvCache cache)
      : prompt(std::move(p)), options(o), drafter(std::move(dr)), kv(std::move(cache)) {}
  std::vector<int32_t> prompt;
  GenerationOptions options;
  std::unique_ptr<Drafter> drafter;
  KvCache kv;
  SpeculativeStats stats;
  std::vector<int32_t> tokens;
  int32_t root = 0;
  bool started = false, finished = false;
  DraftTree tree;
  SteadyClock::time_point decode_start;
};

BatchDecoder::BatchDecoder(LlamaModel& model, std::shared_ptr<KvPool> kv_pool, int64_t context,
                           ThreadPool& pool)
    : model_(model), kv_pool_(std::move(kv_pool)), context_(context), pool_(pool) {
  // Checks the pool and the context against the model once, as make_cache will for each sequence.
  model_.make_cache(kv_pool_, context_);
}

BatchDecoder::~BatchDecoder() = default;

int64_t BatchDecoder::add(std::vector<int32_t> prompt, const GenerationOptions& options,
                          std::unique_ptr<Drafter> drafter) {
  options.sampling.validate();
  if (prompt.empty()) fail("the prompt is empty");
  if (static_cast<int64_t>(prompt.size()) > context_)
    fail("the prompt has ", prompt.size(), " tokens but the context holds ", context_,
         " (raise --ctx)");
  auto s = std::make_unique<Sequence>(std::move(prompt), options, std::move(drafter),
                                      model_.make_cache(kv_pool_, context_));
  // Plain decoding is the speculative loop with the root alone: the same code path, one row.
  if (!s->drafter) s->drafter = std::make_unique<NoDrafter>();
  s->stats.prompt_tokens = static_cast<int64_t>(s->prompt.size());
  sequences_.push_back(std::move(s));
  return static_cast<int64_t>(sequences_.size()) - 1;
}

BatchDecoder::Sequence& BatchDecoder::at(int64_t id) {
  if (id < 0 || id >= static_cast<int64_t>(sequences_.size()) || !sequences_[id])
    fail("batch decoder: no sequence ", id);
  return *sequences_[static_cast<size_t>(id)];
}

const BatchDecoder::Sequence& BatchDecoder::at(int64_t id) const {
  if (id < 0 || id >= static_cast<int64_t>(sequences_.size()) || !sequences_[id])
    fail("batch decoder: no sequence ", id);
  return *sequences_[static_cast<size_t>(id)];
}

bool BatchDecoder::finished(int64_t id) const {
  return at(id).finished;
}
const std::vector<int32_t>& BatchDecoder::tokens(int64_t id) const {
  return at(id).tokens;
}
const SpeculativeStats& BatchDecoder::stats(int64_t id) const {
  return at(id).stats;
}

int64_t BatchDecoder::live() const {
  int64_t n = 0;
  for (const auto& s : sequences_)
    if (s && !s->finished) ++n;
  return n;
}

void BatchDecoder::remove(int64_t id) {
  at(id);
  sequences_[static_cast<size_t>(id)].reset();
}

// The same rule as speculative_generate's: EOS ends the sequence without being emitted.
bool BatchDecoder::emit(Sequence& s, int32_t token) {
  if (s.options.stop_at_eos && is_eos(model_.config(), token)) {
    s.stats.stopped_at_eos = true;
    return false;
  }
  ++s.stats.new_tokens;
  s.tokens.push_back(token);
  return s.stats.new_tokens < s.options.max_new_tokens;
}

void BatchDecoder::finish(Sequence& s) {
  s.finished = true;
  if (s.started) s.stats.decode_seconds = seconds_since(s.decode_start);
  s.kv.truncate(0);  // its blocks go back to the pool now, not when it is removed
  s.drafter.reset();
}

// The prompts of all newcomers in one forward per round of chunks (each sequence advances by its
// own prefill_chunk, its rows attached to its own cache), then for each the root from its last
// prompt row's logits at output position 0 and the drafter's start: what speculative_generate
// does before its first cycle, bit for bit (batch invariance).
void BatchDecoder::start(const std::vector<Sequence*>& newcomers) {
  const int64_t V = model_.config().vocab_size, d = model_.config().hidden_size;
  const auto t0 = SteadyClock::now();
  const size_t n = newcomers.size();
  std::vector<std::vector<float>> hidden(n), last_logits(n);
  std::vector<int64_t> done(n, 0);
  std::vector<KvCache*> caches;
  for (Sequence* s : newcomers) caches.push_back(&s->kv);
  ForwardResult out;
  // If a round fails (the pool ran out of blocks), the newcomers start again from nothing at the
  // next step rather than from a half-filled cache.
  try {
    for (bool more = true; more;) {
      Batch batch;
      std::vector<int32_t> logit_rows;
      std::vector<size_t> ends_here;  // sequences whose last prompt row is in this round
      std::vector<std::pair<size_t, int64_t>> span;  // per sequence in the round: (first row, rows)
      for (size_t j = 0; j < n; ++j) {
        const Sequence& s = *newcomers[j];
        const auto len = static_cast<int64_t>(s.prompt.size());
        const int64_t chunk =
            std::min(std::max<int64_t>(1, s.options.prefill_chunk), len - done[j]);
        span.emplace_back(static_cast<size_t>(batch.size()), chunk);
        if (chunk == 0) continue;
        batch.append(Batch::causal(std::span(s.prompt).subspan(done[j], chunk),
                                   static_cast<int32_t>(done[j])),
                     static_cast<int32_t>(j));
        if (done[j] + chunk == len) {
          logit_rows.push_back(static_cast<int32_t>(batch.size() - 1));
          ends_here.push_back(j);
        }
      }
      model_.forward(batch, caches, logit_rows, out, pool_);
      more = false;
      for (size_t j = 0; j < n; ++j) {
        const auto [first, rows] = span[j];
        if (rows == 0) continue;
        caches[j]->keep_all();
        hidden[j].insert(hidden[j].end(), out.hidden.begin() + static_cast<int64_t>(first) * d,
                         out.hidden.begin() + (static_cast<int64_t>(first) + rows) * d);
        done[j] += rows;
        more = more || done[j] < static_cast<int64_t>(newcomers[j]->prompt.size());
      }
      for (size_t r = 0; r < ends_here.size(); ++r)
        last_logits[ends_here[r]].assign(out.logits.begin() + static_cast<int64_t>(r) * V,
                                         out.logits.begin() + static_cast<int64_t>(r + 1) * V);
    }
  } catch (...) {
    for (KvCache* kv : caches) kv->truncate(0);
    throw;
  }
  const double prefill_seconds = seconds_since(t0);
  for (size_t j = 0; j < n; ++j) {
    Sequence& s = *newcomers[j];
    s.stats.prefill_seconds = prefill_seconds;  // each waited for the shared prefill
    s.started = true;
    s.decode_start = SteadyClock::now();
    bool go = s.options.max_new_tokens > 0;
    if (go) {
      s.root = sample_token(last_logits[j].data(), V, s.options.sampling, 0);
      go = emit(s, s.root);
    }
    if (!go) {
      finish(s);
      continue;
    }
    const auto td = SteadyClock::now();
    s.drafter->begin(s.prompt, hidden[j].data(), s.root);
    s.stats.draft_seconds += seconds_since(td);
  }
}

int64_t BatchDecoder::step() {
  std::vector<Sequence*> newcomers;
  for (auto& s : sequences_)
    if (s && !s->started && !s->finished) newcomers.push_back(s.get());
  if (!newcomers.empty()) start(newcomers);

  // Every live sequence drafts; its tree becomes its rows of the one verify batch.
  const int64_t V = model_.config().vocab_size, d = model_.config().hidden_size;
  std::vector<Sequence*> batch_of;
  std::vector<KvCache*> caches;
  std::vector<int64_t> first_row;
  Batch batch;
  for (auto& p : sequences_) {
    if (!p || p->finished) continue;
    Sequence& s = *p;
    const int64_t n = s.kv.size(), room = s.kv.capacity() - n;
    if (room < 1) {
      s.stats.stopped_at_context = true;
      finish(s);
      continue;
    }
    const auto td = SteadyClock::now();
    s.drafter->draft(room, s.tree);
    s.stats.draft_seconds += seconds_since(td);
    check_drafted_tree(s.tree, V, s.root, room, s.drafter->name());
    first_row.push_back(batch.size());
    batch.append(Batch::tree(s.tree.tokens, s.tree.parents, static_cast<int32_t>(n)),
                 static_cast<int32_t>(batch_of.size()));
    batch_of.push_back(&s);
    caches.push_back(&s.kv);
  }
  if (batch_of.empty()) return live();

  const auto tv = SteadyClock::now();
  std::vector<int32_t> rows(static_cast<size_t>(batch.size()));
  for (size_t i = 0; i < rows.size(); ++i) rows[i] = static_cast<int32_t>(i);
  ForwardResult out;
  model_.forward(batch, caches, rows, out, pool_);
  const double forward_seconds = seconds_since(tv);

  std::vector<float> path_features;
  for (size_t j = 0; j < batch_of.size(); ++j) {
    Sequence& s = *batch_of[j];
    const float* logits = out.logits.data() + first_row[j] * V;
    const float* hidden = out.hidden.data() + first_row[j] * d;
    const Verdict verdict = s.options.sampling.greedy()
                                ? verify_greedy(s.tree, logits, V)
                                : verify_sampling(s.tree, logits, V, s.options.sampling,
                                                  static_cast<uint64_t>(s.stats.new_tokens));
    check_verdict(verdict, s.tree, V);
    s.kv.keep(verdict.path);
    // Each sequence waited for the whole shared forward: that is its verify time.
    s.stats.verify_seconds += forward_seconds;
    ++s.stats.cycles;
    ++s.stats.target_forwards;
    s.stats.drafted_tokens += s.tree.size() - 1;
    const auto a = static_cast<size_t>(verdict.accepted());
    if (s.stats.accept_histogram.size() <= a) s.stats.accept_histogram.resize(a + 1, 0);
    ++s.stats.accept_histogram[a];

    bool go = true;
    for (size_t k = 1; k < verdict.path.size() && go; ++k)
      go = emit(s, s.tree.tokens[static_cast<size_t>(verdict.path[k])]);
    if (go) go = emit(s, verdict.bonus);
    if (!go) {
      finish(s);
      continue;
    }
    path_features.resize(verdict.path.size() * static_cast<size_t>(d));
    for (size_t k = 0; k < verdict.path.size(); ++k)
      std::memcpy(&path_features[k * d], hidden + verdict.path[k] * d, d * sizeof(float));
    const auto td = SteadyClock::now();
    s.drafter->accept(s.tree, verdict.path, path_features.data(), verdict.bonus);
    s.stats.draft_seconds += seconds_since(td);
    s.root = verdict.bonus;
  }
  return live();
}

}  // namespace eagle2

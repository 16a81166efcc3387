#include "speculative/batch_decoder.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <new>

#include "core/error.h"
#include "core/stopwatch.h"
#include "speculative/batch_decoder_sequence.h"
#include "speculative/batch_drafting.h"
#include "speculative/cycle_checks.h"
#include "speculative/eagle_drafter.h"
#include "speculative/feature_capture.h"

namespace eagle2 {

BatchDecoder::BatchDecoder(LlamaModel& model, std::shared_ptr<KvPool> kv_pool, int64_t context,
                           ThreadPool& pool, std::shared_ptr<const BatchCostModel> batch_cost)
    : model_(model),
      kv_pool_(std::move(kv_pool)),
      context_(context),
      pool_(pool),
      batch_cost_(std::move(batch_cost)) {
  // Checks the pool and the context against the model once, as make_cache will for each sequence.
  model_.make_cache(kv_pool_, context_);
}

BatchDecoder::~BatchDecoder() = default;

int64_t BatchDecoder::add(std::vector<int32_t> prompt, const GenerationOptions& options,
                          std::unique_ptr<Drafter> drafter) {
  options.sampling.validate();
  if (options.test_fault == GenerationOptions::TestFault::Admission) throw std::bad_alloc();
  if (prompt.empty()) fail("the prompt is empty");
  if (static_cast<int64_t>(prompt.size()) > context_)
    fail("the prompt has ", prompt.size(), " tokens but the context holds ", context_,
         " (raise --ctx)");
  auto s = std::make_unique<Sequence>(std::move(prompt), options, std::move(drafter),
                                      model_.make_cache(kv_pool_, context_));
  // Plain decoding is the speculative loop with the root alone: the same code path, one row.
  if (!s->drafter) s->drafter = std::make_unique<NoDrafter>();
  if (options.test_fault == GenerationOptions::TestFault::Drafting)
    if (auto* eagle = dynamic_cast<EagleDrafter*>(s->drafter.get()))
      eagle->inject_expansion_fault(options.test_fault_after_cycles);
  // Asked once, before the prefill: the prompt's chunks capture these layers.
  const std::span<const int32_t> layers = s->drafter->feature_layers();
  s->feature_layers.assign(layers.begin(), layers.end());
  s->stats.prompt_tokens = static_cast<int64_t>(s->prompt.size());
  s->id = static_cast<int64_t>(sequences_.size());
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
bool BatchDecoder::failed(int64_t id) const {
  return at(id).failed;
}
const std::vector<int32_t>& BatchDecoder::tokens(int64_t id) const {
  return at(id).tokens;
}
const SpeculativeStats& BatchDecoder::stats(int64_t id) const {
  return at(id).stats;
}
const std::vector<uint8_t>& BatchDecoder::drafted(int64_t id) const {
  return at(id).drafted;
}
const std::vector<RowLogprobs>& BatchDecoder::logprobs(int64_t id) const {
  return at(id).logprobs;
}

int64_t BatchDecoder::live() const {
  int64_t n = 0;
  for (const auto& s : sequences_)
    if (s && !s->finished) ++n;
  return n;
}

void BatchDecoder::cancel(int64_t id) {
  Sequence& s = at(id);
  if (!s.finished) finish(s);
}

void BatchDecoder::remove(int64_t id) {
  at(id);
  sequences_[static_cast<size_t>(id)].reset();
}

// The same rule as speculative_generate's: EOS ends the sequence without being emitted.
bool BatchDecoder::emit(Sequence& s, int32_t token, uint8_t drafted, const float* logits) {
  if (s.options.stop_at_eos && is_eos(model_.config(), token)) {
    s.stats.stopped_at_eos = true;
    return false;
  }
  ++s.stats.new_tokens;
  s.tokens.push_back(token);
  s.drafted.push_back(drafted);
  if (s.options.logprobs >= 0)
    s.logprobs.push_back(row_logprobs(
        logits, model_.config().vocab_size,
        std::min<int32_t>(s.options.logprobs, static_cast<int32_t>(model_.config().vocab_size)),
        token));
  return s.stats.new_tokens < s.options.max_new_tokens;
}

void BatchDecoder::finish(Sequence& s) {
  s.finished = true;
  if (s.started) s.stats.decode_seconds = seconds_since(s.decode_start);
  s.kv.truncate(0);  // its blocks go back to the pool now, not when it is removed
  s.drafter.reset();
}

// The prompt is in: the first token from its last row's logits at output position 0, then the
// drafter's start. What speculative_generate does before its first cycle, bit for bit (batch
// invariance).
void BatchDecoder::begin_decoding(Sequence& s, const float* last_logits) {
  const int64_t V = model_.config().vocab_size;
  s.started = true;
  s.decode_start = SteadyClock::now();
  bool go = s.options.max_new_tokens > 0;
  if (go) {
    s.root = sample_token(last_logits, V, s.options.sampling, 0);
    go = emit(s, s.root, 0, last_logits);
  }
  if (go) {
    const auto td = SteadyClock::now();
    s.drafter->set_sampling(s.options.sampling);
    s.drafter->begin(s.prompt, s.prompt_features.data(), s.root);
    s.stats.draft_seconds += seconds_since(td);
  }
  s.prompt_features = {};
  if (!go) finish(s);
}

// Verifies s's tree (its rows' logits and features), keeps the accepted path in its cache, emits
// the path and the bonus, and tells the drafter.
void BatchDecoder::verify(Sequence& s, const float* logits, const FeatureRows& features,
                          double forward_seconds) {
  const int64_t V = model_.config().vocab_size;
  const Verdict verdict = s.options.sampling.greedy()
                              ? verify_greedy(s.tree, logits, V)
                              : verify_sampled_tree(s.tree, logits, V, s.options.sampling,
                                                    static_cast<uint64_t>(s.stats.new_tokens));
  check_verdict(verdict, s.tree, V);
  s.kv.keep(verdict.path);
  // Each sequence waited for the whole shared forward: that is its verify time.
  s.stats.verify_seconds += forward_seconds;
  ++s.stats.cycles;
  ++s.stats.target_forwards;
  s.stats.drafted_tokens += s.tree.size() - 1;
  s.stats.count_sources(s.tree, verdict.path);
  const auto a = static_cast<size_t>(verdict.accepted());
  if (s.stats.accept_histogram.size() <= a) s.stats.accept_histogram.resize(a + 1, 0);
  ++s.stats.accept_histogram[a];
  last_step_.accepted.push_back(static_cast<int64_t>(a));

  const int64_t before = s.stats.new_tokens;
  bool go = true;
  // Each token was chosen from its parent node's row: the accepted path's tokens from the rows
  // of the nodes before them, the bonus from the last accepted node's.
  auto row = [&](int32_t node) { return logits + static_cast<int64_t>(node) * V; };
  // A drafted token's flag carries its node's sources where the tree records them (hybrid trees).
  for (size_t k = 1; k < verdict.path.size() && go; ++k) {
    const auto node = static_cast<size_t>(verdict.path[k]);
    const uint8_t from = s.tree.sources.empty() ? 0 : s.tree.sources[node];
    go = emit(s, s.tree.tokens[node], static_cast<uint8_t>(kDraftedToken | (from << 1)),
              row(verdict.path[k - 1]));
  }
  if (go) go = emit(s, verdict.bonus, 0, row(verdict.path.back()));
  last_step_.committed += s.stats.new_tokens - before;
  if (!go) {
    finish(s);
    return;
  }
  path_features_.clear();
  for (int32_t node : verdict.path) features.append(node, path_features_);
  const auto td = SteadyClock::now();
  if (s.drafter->wants_target_tokens()) {
    argmax_per_node(logits, s.tree.size(), V, target_argmax_);
    s.drafter->target_tokens(target_argmax_);
  }
  s.drafter->accept(s.tree, verdict.path, path_features_.data(), verdict.bonus);
  injected_fault(s, GenerationOptions::TestFault::Verification);
  const double accept_seconds = seconds_since(td);
  s.stats.draft_seconds += accept_seconds;
  last_step_.draft_seconds += accept_seconds;
  s.root = verdict.bonus;
}

int64_t BatchDecoder::step_sequences() {
  const int64_t V = model_.config().vocab_size, d = model_.config().hidden_size;

  // 1. Drafting. Sequences whose tree size is fixed complete at once; those with a choosable size
  // wait for the batch-wide choice (step 2), which needs every other row of the step known.
  // Whether choosable drafters draft in this step (the batch pauses them while drafting loses).
  const bool drafting = !batch_cost_ || batch_pacing_.drafting_step();
  std::vector<Sequence*> decoding, prefilling, choosing;
  std::vector<Drafter::Proposal> proposals;  // parallel to choosing
  decoding.reserve(sequences_.size());
  choosing.reserve(sequences_.size());
  proposals.reserve(sequences_.size());
  int64_t fixed_rows = 0, choosing_rows = 0;
  double step_draft_seconds = 0, choosing_draft_seconds = 0;
  // A tree of fixed size drafted (in `seconds`, for `room` tokens at most): its rows are fixed.
  auto drafted = [&](Sequence& s, int64_t room, double seconds) {
    s.stats.draft_seconds += seconds;
    last_step_.draft_seconds += seconds;
    check_drafted_tree(s.tree, V, s.root, room, s.drafter->name());
    fixed_rows += s.tree.size();
  };
  // A proposal made (in `seconds`): a choosable one waits for the budget, any other completes.
  auto take = [&](Sequence& s, const Drafter::Proposal& proposal, int64_t room, double seconds) {
    step_draft_seconds += proposal.draft_seconds;
    s.stats.draft_seconds += seconds;
    last_step_.draft_seconds += seconds;
    decoding.push_back(&s);
    if (proposal.choosable) {
      choosing.push_back(&s);
      proposals.push_back(proposal);
      choosing_draft_seconds += seconds;
      return;
    }
    const auto td = SteadyClock::now();
    s.drafter->complete(room, s.tree);
    drafted(s, room, seconds_since(td));
  };
  // A sequence whose drafting failed leaves the step's lists (take() may have failed between its
  // pushes, a proposal's copy: choosing one longer than proposals), so step 2 never calls its
  // drafter (reset by fail_alone).
  auto drop_drafting = [&](Sequence& s, std::exception_ptr error) {
    std::erase(decoding, &s);
    const auto it = std::find(choosing.begin(), choosing.end(), &s);
    if (it != choosing.end()) {
      const auto j = it - choosing.begin();
      choosing.erase(it);
      if (j < static_cast<std::ptrdiff_t>(proposals.size())) proposals.erase(proposals.begin() + j);
    }
    fail_alone(s, std::move(error));
  };
  // EAGLE-2 dynamic trees on one head are drafted in lockstep (batch_drafting.h), per head.
  std::map<EagleHead*, std::vector<std::pair<Sequence*, int64_t>>> lockstep;
  int64_t participants = 0;
  auto survivors = [&] { return participants - static_cast<int64_t>(failed_in_step_.size()); };
  for (auto& p : sequences_) {
    if (!p || p->finished || (alone_ && p.get() != alone_)) continue;
    Sequence& s = *p;
    ++participants;
    if (!s.started) {
      prefilling.push_back(&s);
      continue;
    }
    const int64_t room = s.kv.capacity() - s.kv.size();
    if (room < 1) {
      s.stats.stopped_at_context = true;
      finish(s);
      continue;
    }
    // Drafting commits nothing of the target, and each sequence drafts its own tree: a drafter
    // that fails fails its sequence alone (its drafter's state is unknown), before the forward.
    try {
      const auto td = SteadyClock::now();
      auto* eagle = batch_cost_ ? dynamic_cast<EagleDrafter*>(s.drafter.get()) : nullptr;
      const int64_t limit = batch_cost_ && !drafting && s.drafter->choosable() ? 1 : room;
      if (eagle && eagle->lockstep_capable(eagle->head())) {
        lockstep[&eagle->head()].emplace_back(&s, limit);
        continue;
      }
      injected_fault(s, GenerationOptions::TestFault::Drafting);
      if (!batch_cost_) {
        s.drafter->draft(room, s.tree);
        drafted(s, room, seconds_since(td));
        decoding.push_back(&s);
        continue;
      }
      const Drafter::Proposal proposal = s.drafter->propose(limit);
      take(s, proposal, room, seconds_since(td));
    } catch (...) {
      drop_drafting(s, std::current_exception());
    }
  }
  for (auto& [head, group] : lockstep) {
    std::vector<EagleDrafter*> drafters;
    std::vector<int64_t> limits;
    for (auto [s, limit] : group) {
      drafters.push_back(static_cast<EagleDrafter*>(s->drafter.get()));
      limits.push_back(limit);
    }
    std::vector<Drafter::Proposal> made;
    const auto td = SteadyClock::now();
    try {
      propose_in_lockstep(drafters, limits, *head, pool_, made);
    } catch (...) {
      // Which drafter broke cannot be told: each drafts this cycle again alone, from the state
      // abandon_lockstep() leaves (as before the lockstep, its committed catch-up kept), and only
      // one that fails alone fails (the others' trees are their own: tokens never depend on it).
      for (auto [s, limit] : group) {
        try {
          const auto ta = SteadyClock::now();
          auto* eagle = static_cast<EagleDrafter*>(s->drafter.get());
          eagle->abandon_lockstep();
          const Drafter::Proposal proposal = eagle->propose(limit);
          take(*s, proposal, s->kv.capacity() - s->kv.size(), seconds_since(ta));
        } catch (...) {
          drop_drafting(*s, std::current_exception());
        }
      }
      continue;
    }
    const double share = seconds_since(td) / static_cast<double>(group.size());
    for (size_t j = 0; j < group.size(); ++j) {
      Sequence& s = *group[j].first;
      try {
        take(s, made[j], s.kv.capacity() - s.kv.size(), share);
      } catch (...) {
        drop_drafting(s, std::current_exception());
      }
    }
  }
  std::vector<int64_t> chunk(prefilling.size());
  for (size_t j = 0; j < prefilling.size(); ++j) {
    const Sequence& s = *prefilling[j];
    chunk[j] = std::min(std::max<int64_t>(1, s.options.prefill_chunk),
                        static_cast<int64_t>(s.prompt.size()) - s.prefilled);
    fixed_rows += chunk[j];
  }

  // 2. The batch-wide tree budget.
  BatchBudget budget;
  if (!choosing.empty()) {
    std::vector<SequenceCandidates> candidates;
    for (const Drafter::Proposal& p : proposals)
      candidates.push_back({p.values_desc, p.min_tokens, p.max_tokens});
    const auto n_steps = static_cast<int64_t>(decoding.size() + prefilling.size());
    budget = choose_batch_budget(candidates, n_steps, fixed_rows,
                                 static_cast<double>(decoding.size() - choosing.size()),
                                 step_draft_seconds, *batch_cost_);
    std::vector<Sequence*> completed;
    for (size_t j = 0; j < choosing.size(); ++j) {
      Sequence& s = *choosing[j];
      try {
        const auto td = SteadyClock::now();
        s.drafter->complete(budget.total_tokens[j], s.tree);
        const double completing = seconds_since(td);
        choosing_draft_seconds += completing;
        s.stats.draft_seconds += completing;
        last_step_.draft_seconds += completing;
        check_drafted_tree(s.tree, V, s.root, proposals[j].max_tokens, s.drafter->name());
        choosing_rows += s.tree.size();
        completed.push_back(&s);
      } catch (...) {
        std::erase(decoding, &s);
        fail_alone(s, std::current_exception());
      }
    }
    choosing = std::move(completed);
  }
  if (decoding.empty() && prefilling.empty()) return survivors();

  // 3. One forward: every tree, then every prompt chunk. The rows of sequences whose drafters
  // read layer inputs (EAGLE-3 heads) are captured too, the union of their layers (every tree
  // row: which ones verification keeps is not known yet); other sequences cost no capture.
  Batch batch;
  std::vector<KvCache*> caches;
  std::vector<int32_t> logit_rows, capture_layers, capture_rows;
  std::vector<int64_t> first_row, first_logit, first_capture;
  auto capture = [&](const Sequence& s) {
    first_capture.push_back(static_cast<int64_t>(capture_rows.size()));
    if (s.feature_layers.empty()) return;
    add_capture_layers(capture_layers, s.feature_layers);
    for (int64_t r = first_row.back(); r < batch.size(); ++r)
      capture_rows.push_back(static_cast<int32_t>(r));
  };
  for (Sequence* s : decoding) {
    first_row.push_back(batch.size());
    first_logit.push_back(static_cast<int64_t>(logit_rows.size()));
    batch.append(Batch::tree(s->tree.tokens, s->tree.parents, static_cast<int32_t>(s->kv.size())),
                 static_cast<int32_t>(caches.size()));
    for (int64_t r = first_row.back(); r < batch.size(); ++r)
      logit_rows.push_back(static_cast<int32_t>(r));
    capture(*s);
    caches.push_back(&s->kv);
  }
  for (size_t j = 0; j < prefilling.size(); ++j) {
    Sequence& s = *prefilling[j];
    first_row.push_back(batch.size());
    batch.append(Batch::causal(std::span(s.prompt).subspan(static_cast<size_t>(s.prefilled),
                                                           static_cast<size_t>(chunk[j])),
                               static_cast<int32_t>(s.prefilled)),
                 static_cast<int32_t>(caches.size()));
    const bool last = s.prefilled + chunk[j] == static_cast<int64_t>(s.prompt.size());
    first_logit.push_back(last ? static_cast<int64_t>(logit_rows.size()) : -1);
    if (last) logit_rows.push_back(static_cast<int32_t>(batch.size() - 1));
    capture(s);
    caches.push_back(&s.kv);
  }
  const auto tv = SteadyClock::now();
  ForwardResult out;
  try {
    model_.forward(batch, caches, logit_rows, out, pool_,
                   ForwardCapture{.layers = capture_layers, .rows = capture_rows});
  } catch (...) {
    // Nothing of the step is kept: the trees are drafted again and the chunks run again.
    for (KvCache* kv : caches) kv->drop_pending();
    failed_in_forward_ = true;
    throw;
  }
  const double forward_seconds = seconds_since(tv);
  last_step_.sequences = static_cast<int64_t>(caches.size());
  last_step_.rows = batch.size();
  last_step_.forward_seconds = forward_seconds;

  // 4. Verification and the prompts' progress, each sequence's on its own (a failure fails that
  // sequence alone). A failure outside them (the pacing's judgement) leaves no cache with rows of
  // this forward pending; those already verified have committed theirs, so the step is not one to
  // retry (last_failure_in_forward() stays false).
  try {
    [&] {
      auto features_of = [&](const Sequence& s, size_t at) {
        return FeatureRows{.out = &out,
                           .captured_layers = capture_layers,
                           .layers = s.feature_layers,
                           .d = d,
                           .hidden_base = first_row[at],
                           .capture_base = first_capture[at]};
      };
      int64_t choosing_committed = 0;
      bool choosing_failed = false;  // a choosable sequence failed in verification
      // Each sequence is verified on its own: one that fails (check_verdict, its cache, its
      // drafter's accept) fails alone; the others' verification reads only their own rows.
      for (size_t j = 0; j < decoding.size(); ++j) {
        Sequence& s = *decoding[j];
        const int64_t before = s.stats.new_tokens, committed_before = last_step_.committed;
        const size_t accepted_before = last_step_.accepted.size();
        try {
          verify(s, out.logits.data() + first_logit[j] * V, features_of(s, j), forward_seconds);
        } catch (...) {
          // Its tokens never reach anyone (its request fails): the report does not count them.
          last_step_.accepted.resize(accepted_before);
          last_step_.committed = committed_before;
          if (std::find(choosing.begin(), choosing.end(), &s) != choosing.end())
            choosing_failed = true;
          fail_alone(s, std::current_exception());
          continue;
        }
        if (std::find(choosing.begin(), choosing.end(), &s) != choosing.end())
          choosing_committed += s.stats.new_tokens - before;
      }
      // A step in which a choosable sequence failed says nothing of whether drafting pays (its
      // tokens are lost, its rows were paid): it is not judged.
      if (!choosing.empty() && !choosing_failed) {
        // Judged on the model's forward cost (as the budget was chosen) and the measured drafting:
        // this step against the same step with the choosable sequences' roots alone.
        const auto n_seq = static_cast<int64_t>(caches.size());
        const double seconds = choosing_draft_seconds + batch_cost_->seconds(n_seq, batch.size());
        const double plain_seconds = batch_cost_->seconds(
            n_seq, batch.size() - (choosing_rows - static_cast<int64_t>(choosing.size())));
        batch_pacing_.judge(static_cast<double>(choosing_committed), seconds,
                            static_cast<double>(choosing.size()), plain_seconds);
      }
      for (size_t j = 0; j < prefilling.size(); ++j) {
        Sequence& s = *prefilling[j];
        const size_t at = decoding.size() + j;
        try {
          s.kv.keep_all();
          const FeatureRows features = features_of(s, at);
          for (int64_t r = 0; r < chunk[j]; ++r) features.append(r, s.prompt_features);
          s.prefilled += chunk[j];
          s.stats.prefill_seconds += forward_seconds;  // it waited for the whole shared forward
          last_step_.prefill_rows += chunk[j];
          if (first_logit[at] >= 0) begin_decoding(s, out.logits.data() + first_logit[at] * V);
        } catch (...) {
          fail_alone(s, std::current_exception());
        }
      }
    }();
  } catch (...) {
    for (KvCache* kv : caches) kv->drop_pending();
    throw;
  }
  return survivors();
}

}  // namespace eagle2

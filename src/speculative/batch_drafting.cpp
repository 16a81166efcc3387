#include "speculative/batch_drafting.h"

#include <chrono>

#include "core/stopwatch.h"

namespace eagle2 {

void propose_in_lockstep(std::span<EagleDrafter* const> drafters,
                         std::span<const int64_t> max_tokens, EagleHead& head, ThreadPool& pool,
                         std::vector<Drafter::Proposal>& proposals) {
  const auto t0 = SteadyClock::now();
  const int64_t d = head.config().hidden_size, V = head.draft_vocab_size();
  std::vector<EagleDrafter*> active;
  for (size_t i = 0; i < drafters.size(); ++i)
    if (drafters[i]->begin_lockstep(max_tokens[i])) active.push_back(drafters[i]);

  // The catch-up: every sequence's pending pairs, causally, in one forward.
  HeadRowBatch batch;
  std::vector<int64_t> first_row;
  for (EagleDrafter* dr : active) {
    first_row.push_back(batch.size());
    dr->add_catch_up_rows(batch);
  }
  std::vector<float> out;
  if (batch.size() > 0) {
    out.resize(static_cast<size_t>(batch.size() * d));
    head.forward(batch.rows(), batch.caches, out.data(), pool);
  }
  for (size_t j = 0; j < active.size(); ++j) active[j]->caught_up(out.data() + first_row[j] * d);

  // The tree levels: each round, one head forward over every Expand step's fed nodes and one
  // draft lm_head over every row whose children are wanted.
  std::vector<float> hidden, logp;
  for (;;) {
    batch = HeadRowBatch{};
    std::vector<EagleDrafter*> wanting, expanding;
    first_row.clear();
    for (EagleDrafter* dr : active) {
      const DraftStep::Kind kind = dr->lockstep_step().kind;
      if (kind == DraftStep::Kind::Expand) {
        first_row.push_back(batch.size());
        dr->add_expand_rows(batch);
        expanding.push_back(dr);
      }
      if (kind == DraftStep::Kind::Expand || kind == DraftStep::Kind::RootChildren)
        wanting.push_back(dr);
    }
    if (wanting.empty()) break;
    if (batch.size() > 0) {
      out.resize(static_cast<size_t>(batch.size() * d));
      head.forward(batch.rows(), batch.caches, out.data(), pool);
      for (size_t j = 0; j < expanding.size(); ++j)
        expanding[j]->expanded(out.data() + first_row[j] * d);
    }
    hidden.clear();
    first_row.clear();
    for (EagleDrafter* dr : wanting) {
      first_row.push_back(static_cast<int64_t>(hidden.size()) / d);
      const std::span<const float> h = dr->step_hidden();
      hidden.insert(hidden.end(), h.begin(), h.end());
    }
    const int64_t rows = static_cast<int64_t>(hidden.size()) / d;
    logp.resize(static_cast<size_t>(rows * V));
    head.draft_logprobs(hidden.data(), rows, logp.data(), pool);
    for (size_t j = 0; j < wanting.size(); ++j)
      wanting[j]->supply_logprobs(logp.data() + first_row[j] * V);
  }
  const double share = active.empty() ? 0 : seconds_since(t0) / static_cast<double>(active.size());
  proposals.resize(drafters.size());
  for (size_t i = 0; i < drafters.size(); ++i) proposals[i] = drafters[i]->lockstep_proposal(share);
}

}  // namespace eagle2

// EagleDrafter's propose() in phases, for drafting in lockstep with other sequences on the same
// head (speculative/batch_drafting.h): one head forward per tree level for all of them. Kept apart
// from eagle_drafter.cpp (drafting alone) so each file stays one concern.
#include <algorithm>
#include <cstring>

#include "core/error.h"
#include "speculative/eagle_drafter.h"

namespace eagle2 {

bool EagleDrafter::lockstep_capable(const EagleHead& head) const {
  return &head == &head_ && opt_.shape == EagleDrafterOptions::Shape::Dynamic;
}

bool EagleDrafter::begin_lockstep(int64_t max_tokens) {
  pacing_before_lockstep_ = pacing_;
  lockstep_open_ = true;
  if (!start_cycle(max_tokens)) return false;
  start_dynamic_tree();
  return true;
}

void EagleDrafter::add_catch_up_rows(HeadRowBatch& batch) {
  const auto n = static_cast<int64_t>(pending_tokens_.size());
  lockstep_rows_ = n;
  if (n == 0) return;
  const int64_t base = kv_.size();
  kv_.begin_batch(n);
  const auto seq = static_cast<int32_t>(batch.caches.size());
  batch.caches.push_back(&kv_);
  batch.from_features = true;
  batch.hidden.insert(batch.hidden.end(), pending_features_.begin(), pending_features_.end());
  for (int64_t i = 0; i < n; ++i) {
    batch.tokens.push_back(pending_tokens_[static_cast<size_t>(i)]);
    batch.positions.push_back(static_cast<int32_t>(base + i));
    batch.slots.push_back(static_cast<int32_t>(base + i));
    for (int64_t j = 0; j <= i; ++j) batch.visible.push_back(static_cast<int32_t>(base + j));
    batch.visible_begin.push_back(static_cast<int64_t>(batch.visible.size()));
    batch.sequence.push_back(seq);
  }
}

void EagleDrafter::caught_up(const float* outputs) {
  if (lockstep_rows_ > 0) {
    kv_.keep_all();
    last_out_.assign(outputs + (lockstep_rows_ - 1) * d_, outputs + lockstep_rows_ * d_);
    pending_features_.clear();
    pending_tokens_.clear();
  }
  if (last_out_.empty()) fail("draft head: draft() before begin()");
}

void EagleDrafter::add_expand_rows(HeadRowBatch& batch) {
  injected_expansion_fault();
  const DraftStep step = dynamic_builder_.next();
  const std::vector<FedNode>& nodes = dynamic_builder_.fed();
  const int64_t stable = kv_.size(), first = static_cast<int64_t>(step.first);
  const int64_t n_new = static_cast<int64_t>(nodes.size()) - first;
  lockstep_rows_ = n_new;
  kv_.begin_batch(static_cast<int64_t>(nodes.size()));  // all of this cycle's fed nodes
  const auto seq = static_cast<int32_t>(batch.caches.size());
  batch.caches.push_back(&kv_);
  for (int64_t i = 0; i < n_new; ++i) {
    const FedNode& node = nodes[static_cast<size_t>(first + i)];
    const float* h = node.parent_fed < 0 ? last_out_.data() : &fed_out_[node.parent_fed * d_];
    batch.hidden.insert(batch.hidden.end(), h, h + d_);
    batch.tokens.push_back(node.token);
    batch.positions.push_back(static_cast<int32_t>(stable + node.depth - 1));
    batch.slots.push_back(static_cast<int32_t>(stable + first + i));
    const size_t at = batch.visible.size();
    for (int32_t f = static_cast<int32_t>(first + i); f >= 0; f = nodes[f].parent_fed)
      batch.visible.push_back(static_cast<int32_t>(stable + f));
    std::reverse(batch.visible.begin() + static_cast<std::ptrdiff_t>(at), batch.visible.end());
    batch.visible_begin.push_back(static_cast<int64_t>(batch.visible.size()));
    batch.sequence.push_back(seq);
  }
}

void EagleDrafter::expanded(const float* outputs) {
  const size_t first = dynamic_builder_.next().first;
  fed_out_.resize(dynamic_builder_.fed().size() * static_cast<size_t>(d_));
  std::memcpy(&fed_out_[first * static_cast<size_t>(d_)], outputs,
              static_cast<size_t>(lockstep_rows_ * d_) * sizeof(float));
}

std::span<const float> EagleDrafter::step_hidden() const {
  const DraftStep step = dynamic_builder_.next();
  if (step.kind == DraftStep::Kind::RootChildren) return last_out_;
  return std::span<const float>(fed_out_).subspan(step.first * static_cast<size_t>(d_),
                                                  step.rows * static_cast<size_t>(d_));
}

void EagleDrafter::supply_logprobs(const float* logp) {
  const DraftStep step = dynamic_builder_.next();
  const int64_t V = head_.draft_vocab_size();
  const size_t n = step.rows * static_cast<size_t>(step.k);
  top_tokens_.resize(n);
  top_logp_.resize(n);
  for (size_t r = 0; r < step.rows; ++r) {
    top_k_of(logp + static_cast<int64_t>(r) * V, V, step.k, &top_tokens_[r * step.k],
             &top_logp_[r * step.k]);
    for (int j = 0; j < step.k; ++j)
      top_tokens_[r * step.k + j] = head_.draft_token(top_tokens_[r * step.k + j]);
  }
  supply_top_k(dynamic_builder_, step, snapshot_used_ ? &snapshot_ : nullptr);
}

Drafter::Proposal EagleDrafter::lockstep_proposal(double draft_seconds) {
  lockstep_open_ = false;
  if (!root_only_) lockstep_seconds_ = draft_seconds;
  return drafted_proposal();
}

void EagleDrafter::abandon_lockstep() {
  if (!lockstep_open_) return;
  lockstep_open_ = false;
  // start_cycle's skip_cycle counted this cycle (a paused one's pause shrank): propose() counts
  // it again, so the count is undone here. Nothing else of the cycle outlives it: propose()
  // starts its builder, snapshot and head rows afresh; no proposal was handed out.
  pacing_ = pacing_before_lockstep_;
  proposed_ = false;
}

void EagleDrafter::injected_expansion_fault() const {
  if (fault_after_cycles_ >= 0 && completed_cycles_ >= fault_after_cycles_)
    fail("draft head: injected test fault in this sequence's expansion");
}

}  // namespace eagle2

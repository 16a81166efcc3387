// Drafters built on an EAGLE head: the EAGLE-2 dynamic tree, a static tree and a chain. They share
// the head's stable KV cache (entries from true target features, kept across cycles) and its
// catch-up on each cycle's accepted path.
#pragma once

#include <chrono>
#include <memory>

#include "draft/eagle_head.h"
#include "draft/tree_builder.h"
#include "speculative/draft_pacing.h"
#include "speculative/draft_policy.h"
#include "speculative/drafter.h"
#include "speculative/tree_budget.h"

namespace eagle2 {

struct EagleDrafterOptions {
  enum class Shape { Dynamic, Static, Chain } shape = Shape::Dynamic;
  DynamicTreeParams dynamic;   // Dynamic
  TreeChoices choices;         // Static (default mc_sim_7b_63)
  int chain_depth = 5;         // Chain: depth + 1 draft tokens
  int64_t context = 2048;      // head KV capacity (the target's context)
  // Dynamic: each cycle's verify budget is chosen by choose_total_tokens from the policy's cost
  // model and this sequence's measured draft time (dynamic.total_tokens is then unused), and
  // drafting pauses while it does not pay (DraftPacing). Needs a policy with a cost model.
  bool auto_budget = false;
  // Dynamic: rank nodes by the calibrated confidences the policy learns while decoding
  // (AcceptanceCalibration) instead of the raw draft probabilities of the reference EAGLE-2.
  bool calibrate = false;
};

// Mechanism and per-sequence state; the learned policy is shared (draft_policy.h). One drafter
// decodes one sequence at a time: the head's stable KV cache, the features not yet fed and the
// pacing are this sequence's. It drives a tree builder (draft/tree_builder.h): the builder asks for
// the top-k children of nodes, the drafter runs the head and answers, and the calibrated
// confidences and the budget are computed here and handed to the builder as values.
class EagleDrafter : public Drafter {
 public:
  // policy: the (head, temperature) policy to learn into and draft from, usually
  // DraftPolicies::get(head, temperature); nullptr: a private policy without a cost model.
  EagleDrafter(EagleHead& head, ThreadPool& pool, EagleDrafterOptions options,
               std::shared_ptr<DraftPolicy> policy = nullptr);
  std::string name() const override;
  void begin(std::span<const int32_t> context, const float* features, int32_t root) override;
  void draft(int64_t max_tokens, DraftTree& tree) override;
  bool choosable() const override;
  Proposal propose(int64_t max_tokens) override;
  void complete(int64_t total_tokens, DraftTree& tree) override;
  void accept(const DraftTree& tree, std::span<const int32_t> path, const float* features,
              int32_t bonus) override;
  // Forgets this sequence's pacing (pause state, draft-time and rate averages). The policy keeps
  // what it learned; its owner forgets that (DraftPolicy::forget, DraftPolicies::forget).
  void reset() override;

  // Head position and fed-node bookkeeping of the last draft (for --verbose and tests).
  int64_t stable_length() const { return kv_.size(); }
  // The per-cycle draft time the budget chooser assumes (DraftPacing::draft_seconds).
  double draft_seconds_estimate() const;
  // What has been learned of this head's acceptance at this temperature (a snapshot).
  AcceptanceCalibration calibration() const { return policy_->calibration(); }
  const std::shared_ptr<DraftPolicy>& policy() const { return policy_; }
  const DraftPacing& pacing() const { return pacing_; }

 private:
  template <class Builder>
  void answer(Builder& builder, const DraftStep& step, const AcceptanceCalibration* calibration);
  void root_top_k(int k, int32_t* tokens, float* logp);
  void expand_top_k(const std::vector<FedNode>& nodes, size_t first, int k, int32_t* tokens,
                    float* logp);
  void catch_up();

  EagleHead& head_;
  ThreadPool& pool_;
  EagleDrafterOptions opt_;
  std::shared_ptr<DraftPolicy> policy_;
  const VerifyCostModel* cost_ = nullptr;  // the policy's, with an auto budget
  KvCache kv_;
  int64_t d_;
  int32_t root_ = 0;
  // Pairs (feature, next token) not yet in the head's stable cache.
  std::vector<float> pending_features_;
  std::vector<int32_t> pending_tokens_;
  std::vector<float> last_out_;         // head output at the last stable position
  std::vector<float> fed_out_;          // head outputs of this cycle's fed nodes
  std::vector<float> logp_;             // scratch [rows, V]
  std::vector<float> scratch_out_;
  // The answer to the builder's current step: [rows, k] tokens, log-probs, confidences.
  std::vector<int32_t> top_tokens_;
  std::vector<float> top_logp_, top_confidence_;
  DynamicTreeBuilder dynamic_builder_;
  StaticTreeBuilder static_builder_;
  TreeChoices chain_;  // Chain: chain_choices(chain_depth)
  DraftPacing pacing_;
  std::vector<NodeOutcome> outcomes_;  // scratch for accept()
  bool prompt_catch_up_ = false;   // the next draft() catches up on a whole prompt
  // Between propose() and complete(): the cycle's start, its limit and calibration snapshot.
  std::chrono::steady_clock::time_point draft_start_;
  int64_t max_tokens_ = 1;
  AcceptanceCalibration snapshot_;
  bool snapshot_used_ = false, proposed_ = false, choosing_ = false;
  bool root_only_ = false;  // this cycle verifies the root alone (paused, or no room for more)
};

// Top-k of a row of log-probs: descending, ties towards the lower token id. Writes exactly k
// entries; Error unless 1 <= k <= n and every log-prob is finite.
void top_k_of(const float* logp, int64_t n, int k, int32_t* tokens, float* values);

}  // namespace eagle2

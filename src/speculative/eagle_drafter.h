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
  // Sampled: at temperature > 0 each node's children are SAMPLED from the head's processed
  // distribution q (the request's temperature, top-k, top-p) without replacement and verified by
  // the multi-candidate rule (verify_sampling_from_draft: distribution-exact, but not plain
  // sampling's text for the seed); the shape is chosen before any token is drawn, best first by the
  // measured acceptance of each sibling index (eagle_drafter_sampled.cpp). At temperature 0 the
  // same shape holds the head's top-k. dynamic.total_tokens, depth and top_k bound it.
  enum class Shape { Dynamic, Static, Chain, Sampled } shape = Shape::Dynamic;
  DynamicTreeParams dynamic;  // Dynamic, Sampled
  TreeChoices choices;        // Static (default mc_sim_7b_63)
  int chain_depth = 5;        // Chain: depth + 1 draft tokens
  int64_t context = 2048;     // head KV capacity (the target's context)
  // Dynamic: each cycle's verify budget is chosen by choose_total_tokens from the policy's cost
  // model and this sequence's measured draft time (dynamic.total_tokens is then unused), and
  // drafting pauses while it does not pay (DraftPacing). Needs a policy with a cost model.
  bool auto_budget = false;
  // Dynamic: rank nodes by the calibrated confidences the policy learns while decoding
  // (AcceptanceCalibration) instead of the raw draft probabilities of the reference EAGLE-2.
  bool calibrate = false;
  // With calibrate: accept() records each tested node's outcome into the policy's calibration.
  // False when the drafter's owner records them itself (a hybrid tree's nodes come from two
  // sources, each calibrated apart: hybrid_drafter.h).
  bool record_outcomes = true;
  // Dynamic with auto_budget, drafting alone (propose()): stop drafting levels that cannot pay
  // (deeper_level_may_pay). It is decided from measured times, so the pool then depends on the
  // machine's timing; lockstep drafting (batch_drafting.h) drafts every level.
  bool adaptive_depth = true;
};

// Head rows of several sequences gathered for one multi-cache head forward (EagleHead::forward
// over several caches): each drafter appends its rows, tagged with its cache.
struct HeadRowBatch {
  std::vector<float> hidden;  // [rows, d] ([rows, feature width] when from_features)
  std::vector<int32_t> tokens, positions, slots, visible, sequence;
  std::vector<int64_t> visible_begin{0};
  std::vector<KvCache*> caches;
  // Catch-up rows carry target features (an EAGLE-3 head applies its fc to them: Rows).
  bool from_features = false;
  int64_t size() const { return static_cast<int64_t>(tokens.size()); }
  EagleHead::Rows rows() const {
    EagleHead::Rows r{hidden.data(), tokens, positions, slots, visible, visible_begin, sequence};
    r.from_features = from_features;
    return r;
  }
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
  // "eagle2-dynamic" / "eagle-static" / "eagle-chain" with an EAGLE-1/2 head (the names on the
  // stats line are a contract), "eagle3-dynamic" / "eagle3-static" / "eagle3-chain" with an
  // EAGLE-3 head.
  std::string name() const override;
  // The head's feature layers: empty for EAGLE-1/2 (final-norm states), three target layers'
  // inputs for EAGLE-3.
  std::span<const int32_t> feature_layers() const override { return head_.feature_layers(); }
  void set_sampling(const SamplingParams& params) override { sampling_ = params; }
  void begin(std::span<const int32_t> context, const float* features, int32_t root) override;
  void draft(int64_t max_tokens, DraftTree& tree) override;
  bool choosable() const override;
  Proposal propose(int64_t max_tokens) override;
  void complete(int64_t total_tokens, DraftTree& tree) override;
  void accept(const DraftTree& tree, std::span<const int32_t> path, const float* features,
              int32_t bonus) override;
  // Forgets this sequence's pacing (pause state, draft-time and rate averages) and a sampled
  // tree's measured sibling acceptance. The policy keeps
  // what it learned; its owner forgets that (DraftPolicy::forget, DraftPolicies::forget).
  void reset() override;

  // ---- propose() in phases, for drafting in lockstep with other sequences on the same head
  // (speculative/batch_drafting.h): one head forward per tree level for all of them. ----
  // A dynamic tree on this head.
  bool lockstep_capable(const EagleHead& head) const;
  // False when this cycle verifies the root alone (then lockstep_proposal() is final at once).
  bool begin_lockstep(int64_t max_tokens);
  // The pairs not yet in the head's cache, as causal rows of target features (reserved in its
  // cache; the batch's from_features is set); caught_up() takes their outputs ([its rows, d]) and
  // commits them.
  void add_catch_up_rows(HeadRowBatch& batch);
  void caught_up(const float* outputs);
  // The builder's step; at Expand, add_expand_rows() appends the fed nodes to run and expanded()
  // takes their outputs. step_hidden() is the head output each wanted row's children come from
  // (RootChildren: 1 row, Expand: the fed nodes); supply_logprobs() takes their draft log-probs
  // ([rows, draft vocabulary]).
  DraftStep lockstep_step() const { return dynamic_builder_.next(); }
  void add_expand_rows(HeadRowBatch& batch);
  void expanded(const float* outputs);
  std::span<const float> step_hidden() const;
  void supply_logprobs(const float* logp);
  // At ChooseBudget or Done: the proposal; draft_seconds is this sequence's share of the
  // lockstep's time (what its pacing learns).
  Proposal lockstep_proposal(double draft_seconds);
  // After a lockstep that threw (in any drafter's part or the shared head forwards): puts this
  // drafter back as before begin_lockstep(), so that propose() may run the same cycle alone. What
  // the failed lockstep changed is either undone or already consistent: the pacing (a paused
  // cycle counted by start_cycle) is restored; the head rows it reserved are pending, never read
  // across cycles, and every drafting cycle's start drops them; a catch-up that caught_up()
  // committed is in the head's cache and no longer pending (propose() does not feed it again),
  // one that was not is still pending (a paused drafter's too: start_cycle keeps pending pairs).
  // A no-op when no lockstep is open (begin_lockstep() was not reached, or its proposal was made).
  void abandon_lockstep();

  // For tests of fault handling (GenerationOptions::test_fault): once `after_cycles` cycles have
  // completed, every expansion of the head for this drafter (add_expand_rows in lockstep,
  // drafting alone too) throws before it runs, as a failing head forward would.
  void inject_expansion_fault(int64_t after_cycles) { fault_after_cycles_ = after_cycles; }

  // Head position and fed-node bookkeeping of the last draft (for --verbose and tests).
  int64_t stable_length() const { return kv_.size(); }
  // The per-cycle draft time the budget chooser assumes (DraftPacing::draft_seconds).
  double draft_seconds_estimate() const;
  // What has been learned of this head's acceptance at this temperature (a snapshot).
  AcceptanceCalibration calibration() const { return policy_->calibration(); }
  const std::shared_ptr<DraftPolicy>& policy() const { return policy_; }
  EagleHead& head() const { return head_; }
  const DraftPacing& pacing() const { return pacing_; }

  // Shape::Sampled: the draft's uniforms of the cycle whose first drafted token is output
  // position n come from a stream of their own (Rng(sampled_draft_word(seed, n))), another key
  // than verification's position_word(seed, n): the multi-candidate rule needs the draft's picks
  // independent of its acceptance tests.
  static uint64_t sampled_draft_word(uint64_t seed, uint64_t n);
  // Shape::Sampled: the sibling paths of the next cycle's tree for a budget of max_tokens, best
  // first by the product along the path of each sibling index's measured acceptance (ties: shorter
  // path, then lower indices); every path's parent and earlier sibling come before it.
  // With an auto budget (sampled:auto) the counts are the policy's, shared by every sequence of
  // this head and temperature bucket (DraftPolicy::sibling_counts). keys, when given, receives
  // each path's key (the natural log of its estimated acceptance), in the same order.
  TreeChoices sampled_shape(int64_t max_tokens, std::vector<float>* keys = nullptr) const;
  // Shape::Sampled: of the children tried at a node, how often the one at each sibling index was
  // accepted (with a prior of one acceptance in two tries).
  double sibling_acceptance(int index) const;

 private:
  void answer_sampled(const DraftStep& step);
  void attach_draft_q(DraftTree& tree);
  void learn_siblings(const DraftTree& tree, std::span<const int32_t> path);
  void expand_logprobs(const std::vector<FedNode>& nodes, size_t first);
  bool start_cycle(int64_t max_tokens);
  void start_dynamic_tree();
  Proposal drafted_proposal();
  template <class Builder>
  void supply_top_k(Builder& builder, const DraftStep& step,
                    const AcceptanceCalibration* calibration);
  template <class Builder>
  void answer(Builder& builder, const DraftStep& step, const AcceptanceCalibration* calibration);
  bool level_pays();  // auto budget: whether the next level of the dynamic tree can pay
  void measured_level(std::chrono::steady_clock::time_point start);
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
  int64_t d_;       // the head's hidden width: its outputs
  int64_t feat_w_;  // the width of one target feature (head.feature_width(): d_ for EAGLE-1/2)
  int32_t root_ = 0;
  // Pairs (feature, next token) not yet in the head's stable cache ([pairs, feat_w_]).
  std::vector<float> pending_features_;
  std::vector<int32_t> pending_tokens_;
  std::vector<float> last_out_;  // head output at the last stable position
  std::vector<float> fed_out_;   // head outputs of this cycle's fed nodes
  std::vector<float> logp_;      // scratch [rows, V]
  std::vector<float> scratch_out_;
  // The answer to the builder's current step: [rows, k] tokens, log-probs, confidences.
  std::vector<int32_t> top_tokens_;
  std::vector<float> top_logp_, top_confidence_;
  DynamicTreeBuilder dynamic_builder_;
  StaticTreeBuilder static_builder_;
  TreeChoices chain_;  // Chain: chain_choices(chain_depth)
  DraftPacing pacing_;
  std::vector<NodeOutcome> outcomes_;  // scratch for accept()
  bool prompt_catch_up_ = false;       // the next draft() catches up on a whole prompt
  // Between propose() and complete(): the cycle's start, its limit and calibration snapshot.
  std::chrono::steady_clock::time_point draft_start_;
  int64_t max_tokens_ = 1;
  AcceptanceCalibration snapshot_;
  bool snapshot_used_ = false, proposed_ = false, choosing_ = false;
  bool root_only_ = false;  // this cycle verifies the root alone (paused, or no room for more)
  double lockstep_seconds_ = -1;  // >= 0: the proposal was drafted in lockstep, in this share
  double level_seconds_ = -1;     // moving average of one expansion level's time (< 0: none yet)
  int64_t lockstep_rows_ = 0;     // rows this drafter put in the current head batch
  // Between begin_lockstep() and lockstep_proposal(): the pacing before the cycle started, for
  // abandon_lockstep().
  bool lockstep_open_ = false;
  DraftPacing pacing_before_lockstep_;
  int64_t completed_cycles_ = 0;     // complete() calls
  int64_t fault_after_cycles_ = -1;  // inject_expansion_fault (< 0: none)
  // Shape::Sampled.
  SamplingParams sampling_;
  int64_t emitted_ = 0;  // tokens emitted since begin(), root included: the root's position + 1
  Rng sample_rng_;       // this cycle's draft stream
  // The draft's processed q over the draft vocabulary at each node whose children were drawn
  // this cycle: node index, then its row ([draft vocabulary]).
  std::vector<int32_t> q_nodes_;
  std::vector<double> q_rows_;
  std::vector<int64_t> sibling_tried_, sibling_accepted_;  // per sibling index
  void injected_expansion_fault() const;
};

// Top-k of a row of log-probs: descending, ties towards the lower token id. Writes exactly k
// entries; Error unless 1 <= k <= n and every log-prob is finite.
void top_k_of(const float* logp, int64_t n, int k, int32_t* tokens, float* values);

}  // namespace eagle2

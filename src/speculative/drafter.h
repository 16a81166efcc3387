// What the speculative decoder needs from a drafter: a tree of candidate tokens under the root
// each cycle, and the outcome of verification afterwards. EAGLE-2 dynamic trees, static trees,
// chains, prompt lookup, no drafting, and scripted trees in tests all sit behind this interface so
// that they are compared (and tested) through the same decoding loop.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "draft/draft_tree.h"
#include "sampling/logits_processor.h"

namespace eagle2 {

class Drafter {
 public:
  virtual ~Drafter() = default;
  virtual std::string name() const = 0;

  // How the sequence is decoded (temperature, top-k, top-p, seed), told before begin(). A drafter
  // that samples its draft from its own distribution (SpsDrafter at temperature > 0) processes it
  // with the same settings; deterministic drafters ignore it.
  virtual void set_sampling(const SamplingParams& params) { (void)params; }

  // Which target features begin() and accept() get per position. Empty (the default): the
  // target's final-norm states ([hidden] per position). Otherwise the inputs of these decoder
  // layers (0-based, raw residual stream), concatenated in this order ([layers * hidden] per
  // position): an EAGLE-3 head's low, middle and high layers. Asked by the decoding loops before
  // the prompt's prefill, which then capture those layers in the same target forwards
  // (ForwardCapture); it must not change while the drafter decodes a sequence.
  virtual std::span<const int32_t> feature_layers() const { return {}; }

  // After prefill: context = x_0..x_{n-1} (now in the target's cache), features = the target's
  // features of x_0..x_{n-1} ([n, width], see feature_layers), root = x_n (sampled from the last
  // position's logits).
  virtual void begin(std::span<const int32_t> context, const float* features, int32_t root) = 0;

  // A tree rooted at the current root with at most max_tokens nodes, root included
  // (max_tokens >= 1; it is smaller near the end of the context).
  virtual void draft(int64_t max_tokens, DraftTree& tree) = 0;

  // Drafting in two phases, for a tree size chosen across all the sequences of a step
  // (speculative/batch_budget.h). propose() drafts the candidates; when this drafter's tree size
  // is choosable (an EAGLE-2 dynamic tree with an auto budget, not paused) it returns their values
  // best first (natural-log acceptance estimates: a tree of T tokens keeps the first T - 1); then
  // complete() writes the tree of total_tokens (clamped to [min_tokens, max_tokens]). For any
  // other drafter the proposal is fixed, complete() ignores total_tokens and writes what draft()
  // would. propose(m) + complete(T) with the drafter's own choice of T is draft(m).
  struct Proposal {
    bool choosable = false;
    std::span<const float> values_desc;  // valid until complete()
    int64_t min_tokens = 1;              // e.g. the calibration's exploration floor
    int64_t max_tokens = 1;
    double draft_seconds = 0;  // what this drafter expects a cycle's drafting to take
  };
  // Whether propose() may return a choosable proposal (its tree size is the batch's to choose,
  // and a batch may pause its drafting: propose(1) then drafts nothing).
  virtual bool choosable() const { return false; }
  virtual Proposal propose(int64_t max_tokens) {
    proposed_max_ = max_tokens;
    return Proposal{false, {}, 1, max_tokens, 0};
  }
  virtual void complete(int64_t total_tokens, DraftTree& tree) {
    (void)total_tokens;
    draft(proposed_max_, tree);
  }

  // Drafters that learn from what the target itself predicts at every node of the tree, not only
  // on the accepted path (lookahead decoding's Jacobi window: lookahead_drafter.h) say so here;
  // after verification and before accept() the decoding loop then hands them the target's argmax
  // at each node, in tree order (argmax_per_node in verify.h). The greedy token at every
  // temperature: it only shapes future drafts, and a deterministic draft verified by position-keyed
  // sampling stays lossless. Not called when the cycle ends the generation (no accept() follows).
  virtual bool wants_target_tokens() const { return false; }
  virtual void target_tokens(std::span<const int32_t> argmax_per_node) { (void)argmax_per_node; }

  // Verification kept `path` (tree node indices, starting with the root 0); features holds the
  // target's features of each path node ([path.size(), width], see feature_layers); `bonus` is
  // the next root.
  virtual void accept(const DraftTree& tree, std::span<const int32_t> path, const float* features,
                      int32_t bonus) = 0;

  // Forgets this drafter's per-sequence state carried across generations (an EAGLE drafter's
  // pause state and timing averages), so that the next begin() starts as a freshly made drafter
  // of the same policy. begin() alone keeps that state on purpose: it carries over from one prompt
  // to the next. What is learned per (head, temperature) (the acceptance calibration) is shared by
  // many drafters and is not cleared here: its owner forgets it (DraftPolicies::forget).
  virtual void reset() {}

 private:
  int64_t proposed_max_ = 1;
};

// Plain decoding through the speculative loop: the tree is the root alone.
class NoDrafter : public Drafter {
 public:
  std::string name() const override { return "none"; }
  void begin(std::span<const int32_t>, const float*, int32_t root) override { root_ = root; }
  void draft(int64_t, DraftTree& tree) override { tree.reset(root_); }
  void accept(const DraftTree&, std::span<const int32_t>, const float*, int32_t bonus) override {
    root_ = bonus;
  }

 private:
  int32_t root_ = 0;
};

}  // namespace eagle2

// Building draft trees from a draft model's top-k predictions: EAGLE-2's dynamic tree, the
// EAGLE-1 static tree and the chain. A builder is a state machine that the drafter drives: it says
// what it needs next (a DraftStep: the root's children, or the children of nodes to feed, or the
// cycle's budget), the drafter runs the draft model and hands the answer back, until the tree is
// done. Data flows one way: the builder never calls the drafter, so it holds no callbacks and is
// tested on scripted log-prob tables exactly as the drafter uses it.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <vector>

#include "draft/draft_tree.h"
#include "draft/tree_choices.h"

namespace eagle2 {

// A node to run through the draft model: its token, and the index (into the same list of fed
// nodes, in feeding order) of its parent, -1 when its parent is the root.
struct FedNode {
  int32_t token;
  int32_t parent_fed;  // -1: child of the root
  int32_t depth;       // >= 1
};

// What a builder needs next.
struct DraftStep {
  enum class Kind {
    RootChildren,  // the root's top-k children (from the draft model's state at the root)
    Expand,        // feed fed()[first..] (all at one depth, parents fed earlier); each one's top-k
    ChooseBudget,  // dynamic with a chosen budget: pick T from values_desc(), answer choose_budget
    Done,          // finish() writes the tree
  };
  Kind kind = Kind::Done;
  int k = 0;         // children wanted per node (RootChildren, Expand)
  size_t first = 0;  // Expand: the nodes to feed are fed()[first..]
  size_t rows = 0;   // nodes whose children are wanted: 1 for the root, fed().size() - first
};

struct DynamicTreeParams {
  int top_k = 10;         // K
  int depth = 5;          // expansion forwards after level 1 (the tree has depth + 1 levels)
  int total_tokens = 60;  // verify batch size, root included (a fixed budget)
  // The EAGLE-2 paper's ablation (docs/SPECULATIVE.md "The ablation"). What ranks nodes, both
  // for expansion and for the rerank: the value (EAGLE-2), or each node's own confidence alone
  // ("without the value").
  enum class Ranking { Value, OwnConfidence };
  Ranking ranking = Ranking::Value;
  // false ("without reranking"): the tree is the nodes selected for expansion, level by level.
  bool rerank = true;
};

// EAGLE-2 (EAGLE2.md section 3): level 1 = top-K root children; D expansions of the K best
// frontier nodes by value (K*K candidates each, all joining the pool); rerank the pool to the best
// T - 1 by value (ties: lower pool index, i.e. shallower / earlier) and flatten in pool order.
// A frontier node whose value is at or below the pool's (T - 1)-th best value is not expanded: no
// descendant of it could be kept, so the tree is the same with fewer draft rows (T = the budget, or
// max_tokens when it is chosen): an Expand step may ask for fewer than K rows, and the levels end
// early when no frontier node is left.
//
// A node's value is the sum along its path of what supply() was given as confidences: the raw
// draft log-probs (the reference EAGLE-2) or, e.g., calibrated log-confidences
// (speculative/tree_budget.h). They change which nodes are expanded and kept, never what is
// accepted; each node also records its raw draft log-prob and sibling rank.
//
// The ablation (DynamicTreeParams): with Ranking::OwnConfidence each level's K nodes to expand
// are those of the highest own confidence, and the rerank keeps best first by own confidence
// among the nodes whose parent is the root or already kept (a child may now outrank its parent,
// and the kept set must stay a tree). Without rerank the tree keeps the nodes selected for
// expansion in level order (level 1, each expanded level's K, the last level's K best), the first
// T - 1 of them. Either way the tree records path values, which estimate acceptance.
class DynamicTreeBuilder {
 public:
  // Fixed: T = params.total_tokens. Chosen: once the pool is known the builder asks for T
  // (a ChooseBudget step), e.g. from the hardware's cost curve (speculative/tree_budget.h).
  // Either way T is capped by max_tokens (the room left in the context).
  enum class Budget { Fixed, Chosen };
  void start(int32_t root, const DynamicTreeParams& params, int64_t max_tokens,
             Budget budget = Budget::Fixed);
  DraftStep next() const { return step_; }
  // Every node fed so far this cycle, in feeding order (Expand steps append to it).
  const std::vector<FedNode>& fed() const { return fed_; }
  // Answers a RootChildren or Expand step: rows x k children, row-major, each row best first
  // (log-prob descending, ties towards the lower token id). `confidence` has the same shape, <= 0,
  // and is what values sum; empty = the log-probs themselves. Error on a size mismatch or when no
  // such step is pending.
  void supply(std::span<const int32_t> tokens, std::span<const float> logp,
              std::span<const float> confidence = {});
  // At an Expand step: the values of the pool so far (any order) and of the frontier the step
  // would expand, for deciding whether the level is worth drafting (deeper_level_may_pay). Each
  // is valid until the next call of the same function.
  std::span<const float> pool_values();
  std::span<const float> frontier_values();
  // At an Expand step of a Chosen budget: no more levels; the pool drafted so far is reranked and
  // the next step is ChooseBudget. Error otherwise.
  void stop_expanding();
  // At a ChooseBudget step: the value of every node a tree may keep, in the order it keeps them
  // (the i-th is the i-th node a tree of T > i + 1 keeps): by value for EAGLE-2, so best first;
  // for the ablation its own order, still of path values, so that exp(value) still estimates
  // each node's acceptance. Valid until choose_budget().
  std::span<const float> values_desc() const { return values_desc_; }
  // Answers a ChooseBudget step; T is clamped to [1, max_tokens].
  void choose_budget(int64_t total_tokens);
  // At Done: writes the tree (the root alone when the budget leaves no room).
  void finish(DraftTree& tree);

 private:
  // A candidate of the pool; pool order = level 1, then each expansion's rows x K block (row-major
  // by fed node, then child rank).
  struct Candidate {
    int32_t token;
    float logp;        // draft log-prob given the parent
    int32_t rank;      // among the parent's top-k
    float value;       // path sum of confidences
    float confidence;  // its own, as supplied
    int32_t parent;    // pool index, -1 = root
    int32_t depth;
    int32_t fed = -1;          // index in fed_ once expanded
    int32_t first_child = -1;  // pool index of its K children once expanded
  };
  void select_level(size_t begin);
  void drop_hopeless_frontier();
  void feed_frontier();
  void rerank();
  std::vector<int32_t> best_first_by_confidence(size_t n) const;

  DraftStep step_;
  int32_t root_ = 0;
  DynamicTreeParams params_;
  int64_t max_tokens_ = 1, budget_ = 1;
  Budget budget_kind_ = Budget::Fixed;
  int expansions_ = 0;  // Expand steps answered
  std::vector<Candidate> pool_;
  std::vector<int32_t> frontier_;  // pool indices to expand next
  // Without rerank: every level's selected nodes (the frontiers and the last level's K best), in
  // level order, each level best first.
  std::vector<int32_t> selected_;
  std::vector<FedNode> fed_;
  std::vector<int32_t> keep_;  // pool indices kept, in rerank order until finish()
  std::vector<float> values_desc_;
  std::vector<float> pool_values_, frontier_values_;  // scratch of the two functions above
  bool active_ = false;                               // started and not yet finished
};

// A static tree (TreeChoices), level by level: each level's parents are fed together and asked for
// the top k (the largest sibling rank at that level + 1, among the paths still in). Paths that do
// not fit in max_tokens (in (length, ranks) order) are dropped. Never asks for a budget.
class StaticTreeBuilder {
 public:
  void start(int32_t root, const TreeChoices& choices, int64_t max_tokens);
  DraftStep next() const { return step_; }
  const std::vector<FedNode>& fed() const { return fed_; }
  // The tree nodes whose children the current step asks for, one per row (the root, 0, for
  // RootChildren): a drafter that records something per parent node (a sampled tree's draft
  // distribution, DraftTree::draft_q) finds its node here. finish() keeps these indices.
  std::span<const int32_t> step_parents() const { return parents_; }
  // Answers a RootChildren or Expand step (rows x k children, as for the dynamic tree). A token
  // < 0 means the node has no such child: it and every path under it are left out of the tree
  // (a sampled tree whose q ran out of tokens before its sibling slots did); the other nodes
  // keep their ranks.
  void supply(std::span<const int32_t> tokens, std::span<const float> logp);
  void finish(DraftTree& tree);

 private:
  void plan_level();

  DraftStep step_;
  DraftTree tree_;
  TreeChoices sorted_;
  std::map<std::vector<int>, int32_t> node_of_;  // path -> tree node (the root is the empty path)
  std::vector<int32_t> fed_of_;                  // per tree node: its index in fed_ (-1: not fed)
  std::vector<FedNode> fed_;
  std::vector<int32_t> parents_;  // tree nodes whose children this level adds, in tree order
  size_t level_begin_ = 0, level_end_ = 0;  // this level's paths in sorted_
  size_t depth_ = 0;
  bool active_ = false;
};

}  // namespace eagle2

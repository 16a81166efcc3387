// Building draft trees from a draft model's top-k predictions: EAGLE-2's dynamic tree, the
// EAGLE-1 static tree and the chain. The builders see the draft model only through DraftOracle,
// so that they can be tested on scripted log-prob tables.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "draft/draft_tree.h"

namespace eagle2 {

// A node the oracle is asked to expand: its token, and the index (into the same list of
// previously fed nodes, in feeding order) of its parent, -1 when its parent is the root.
struct FedNode {
  int32_t token;
  int32_t parent_fed;  // -1: child of the root
  int32_t depth;       // >= 1
};

class DraftOracle {
 public:
  virtual ~DraftOracle() = default;
  // The k most likely children of the root: tokens and natural-log probabilities, sorted by
  // log-prob descending, ties towards the lower token id.
  virtual void root_top_k(int k, int32_t* tokens, float* logp) = 0;
  // Feeds nodes[first..] (all at the same depth; their parents were fed earlier) and returns each
  // one's top-k children (row-major [n_new, k], same ordering rule).
  virtual void expand_top_k(const std::vector<FedNode>& nodes, size_t first, int k,
                            int32_t* tokens, float* logp) = 0;
};

struct DynamicTreeParams {
  int top_k = 10;         // K
  int depth = 5;          // expansion forwards after level 1 (the tree has depth + 1 levels)
  int total_tokens = 60;  // verify batch size, root included
  // Optional per-cycle budget: given the pool's values best first (rerank order) and the cycle's
  // max_tokens, returns the verify batch size T (root included; clamped to [1, max_tokens]).
  // Replaces total_tokens when set (src/speculative/tree_budget.h sizes trees to the hardware).
  using ChooseTotal =
      std::function<int64_t(std::span<const float> values_desc, int64_t max_tokens)>;
  ChooseTotal choose_total = nullptr;
  // Optional: the log-confidence of a child given its draft log-prob and its rank among its
  // siblings (0 = the draft's top choice), e.g. learned acceptance (speculative/tree_budget.h).
  // Values then sum these instead of the raw log-probs, which changes which nodes are expanded
  // and kept, never what is accepted. Must return <= 0. Unset: the reference EAGLE-2 (values =
  // sums of draft log-probs).
  std::function<float(float logp, int rank)> confidence = nullptr;
};

// EAGLE-2 (EAGLE2.md section 3): level 1 = top-K root children; D expansions of the K best
// frontier nodes by value (K*K candidates each, all joining the pool); rerank the pool to the best
// total_tokens - 1 by value (ties: lower pool index, i.e. shallower / earlier) and flatten in pool
// order. `max_tokens` caps total_tokens (or choose_total's answer) for this cycle (room left in
// the context).
void build_dynamic_tree(DraftOracle& oracle, int32_t root, const DynamicTreeParams& params,
                        int64_t max_tokens, DraftTree& tree);

// A static tree given as paths of sibling ranks ([0, 1] = the 2nd child of the 1st child of the
// root); prefixes of every path must be listed before it. Paths that do not fit in max_tokens
// (in the given order) are dropped.
using TreeChoices = std::vector<std::vector<int>>;
void build_static_tree(DraftOracle& oracle, int32_t root, const TreeChoices& choices,
                       int64_t max_tokens, DraftTree& tree);

// EAGLE-1's mc_sim_7b_63 shape (26 tokens with the root).
const TreeChoices& mc_sim_7b_63();
// A chain of depth + 1 draft tokens (top-1 at every level), as choices.
TreeChoices chain_choices(int depth);
// Parses a JSON list of paths, e.g. "[[0], [1], [0, 0]]"; Error on malformed input or a path
// whose prefix is missing.
TreeChoices parse_tree_choices(const std::string& json_text, const std::string& where);

}  // namespace eagle2

// Medusa's tree (Cai et al. 2024): the draft heads predict each depth independently of the path
// above it (head d sees only the target's feature at the root's parent), so a node's draft
// probability is the product of its tokens' head probabilities, and the best tree of n nodes is
// the n best paths of the product space. Medusa ships a fixed tree chosen offline from measured
// head accuracies ("medusa_choices"); here the tree is chosen each cycle from the heads' actual
// log-probs: the best n nodes by value, exactly, by a best-first walk over the product space.
#pragma once

#include <cstdint>
#include <span>

#include "draft/draft_tree.h"

namespace eagle2 {

// One list per depth (head d + 1 answers depth d + 1): the top-k tokens of that head, best first
// (log-prob descending: top_k_of's order), k the same for every depth.
struct ProductLevels {
  int depth = 0;                    // D: levels (heads)
  int k = 0;                        // candidates per level
  std::span<const int32_t> tokens;  // [D, k]
  std::span<const float> logps;     // [D, k], each row non-increasing, every value <= 0 and finite
};

// The best total_tokens - 1 nodes over the product space (root included in total_tokens), written
// under `root`. A node at depth m is a path of ranks (r_1..r_m); its token is tokens[m-1][r_m],
// its value the sum of logps[d-1][r_d] along the path. Order: value descending, then shallower,
// then lexicographically smaller ranks (a strict total order, so the result is unique). A child
// never outranks its parent (log-probs <= 0) nor a node its elder sibling (rows are sorted), so the
// best n always form a tree, and the walk pops them in that order from a heap that holds each
// popped node's first child and next sibling: O(n log n), whatever D and k. Nodes are added in
// pop order: every parent comes before its children and siblings in rank order (the order
// sampling verification tries them). Error on malformed levels (wrong sizes, unsorted rows,
// positive or non-finite log-probs).
void build_product_tree(int32_t root, const ProductLevels& levels, int64_t total_tokens,
                        DraftTree& tree);

}  // namespace eagle2

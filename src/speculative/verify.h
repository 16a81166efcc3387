// Verification of a draft tree against the target's logits at every node (EAGLE2.md section 4).
#pragma once

#include <cstdint>
#include <vector>

#include "draft/draft_tree.h"
#include "sampling/logits_processor.h"
#include "sampling/rng.h"

namespace eagle2 {

struct Verdict {
  std::vector<int32_t> path;  // accepted nodes, root (0) first
  int32_t bonus = 0;          // the target's token after the last accepted node
  int64_t accepted() const { return static_cast<int64_t>(path.size()) - 1; }
};

// Both verifiers first check the tree with validate_draft_tree (Error on a malformed tree).

// Temperature 0: from the root, move to the child equal to argmax(logits(node)) while there is
// one; the bonus is the argmax at the last accepted node. logits: [tree.size(), vocab].
Verdict verify_greedy(const DraftTree& tree, const float* logits, int64_t vocab);

// Temperature > 0: at each node, p = process_logits(logits(node), params); try the children in
// draft-rank order (skipping duplicate tokens), accepting child x with probability p(x) (the
// draft is deterministic, q(x) = 1); on rejection zero p(x) and renormalize. If a child is
// accepted move to it; otherwise draw the bonus from the current p. Every emitted token then has
// exactly the target's (processed) distribution.
Verdict verify_sampling(const DraftTree& tree, const float* logits, int64_t vocab,
                        const SamplingParams& params, Rng& rng);

// Children of every node in increasing index order (= draft-rank order). The tree must be valid
// (validate_draft_tree): parents index the result.
std::vector<std::vector<int32_t>> children_of(const DraftTree& tree);

}  // namespace eagle2

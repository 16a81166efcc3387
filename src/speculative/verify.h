// Verification of a draft tree against the target's logits at every node (EAGLE2.md section 4).
#pragma once

#include <cstdint>
#include <vector>

#include "draft/draft_tree.h"
#include "sampling/logits_processor.h"

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

// Temperature > 0, for drafts whose tokens are deterministic given the context (top-k drafts:
// EAGLE dynamic/static/chain, lookup, scripted trees). The token after the root sits at output
// position first_position (sampling/position_random.h); a node at depth d picks the token at
// position first_position + d. At each node, p = process_logits(logits(node), params) and
// x = sample_with(p, counter_uniform(params.seed, position)): exactly the token plain sampling
// picks at that position from the same logits. If a child holds x (the first such child: duplicate
// siblings are the same token) move to it; otherwise x is the bonus. Lossless, and more: the
// target's logits at a node are bit-identical to a plain forward of its path (batch invariance),
// so with the same seed the output equals plain sampled output token for token, whatever the tree.
Verdict verify_sampling(const DraftTree& tree, const float* logits, int64_t vocab,
                        const SamplingParams& params, uint64_t first_position);

// Temperature > 0, the sequential rejection rule: min(1, p/q) with q = 1 for deterministic drafts
// (kept for drafts sampled from a distribution q, where the rule above does not apply). At each
// node try the children in draft-rank order (skipping duplicate tokens), accepting child x with
// probability p(x); on rejection zero p(x) and renormalize. If a child is accepted move to it;
// otherwise draw the bonus from the current p. This is sampling without replacement from p, so
// every emitted token has the target's (processed) distribution, but which token depends on the
// tree. The numbers at a node come from a stream seeded with position_word(params.seed, position),
// so each position's word is still used once.
Verdict verify_sampling_rejection(const DraftTree& tree, const float* logits, int64_t vocab,
                                  const SamplingParams& params, uint64_t first_position);

// Temperature > 0, for a tree whose children of each node were sampled WITHOUT replacement from
// the draft's processed distribution q at that node (tree.draft_q; a chain: one child each): the
// standard speculative sampling rule (Leviathan et al., Chen et al.) made recursive over siblings
// (multi-candidate: SpecInfer, recursive rejection sampling). At a node with p_1 = p, q_1 = q,
// try the children in order: accept child x_i with probability min(1, p_i(x_i) / q_i(x_i)); on
// rejection p_{i+1} = norm(max(0, p_i - q_i)) and q_{i+1} = q_i without x_i, renormalized (the
// distribution the next sibling was drawn from). If a child is accepted move to it; otherwise
// the bonus is drawn from the last p_i (a node without children: from p). Each emitted token
// then has exactly the target's distribution given its prefix, whatever q is; with one child it
// is the chain rule, draw for draw. The numbers at a position come from a stream seeded with
// position_word(params.seed, position) (used once per position); the draft's own sampling must
// draw from an independent stream (SpsDrafter uses another key). Error unless there is a q row
// per node of the vocabulary's size.
Verdict verify_sampling_from_draft(const DraftTree& tree, const float* logits, int64_t vocab,
                                   const SamplingParams& params, uint64_t first_position);

// The verifier for a tree at temperature > 0: verify_sampling_from_draft when the tree was
// sampled from the draft's distributions (tree.draft_q), verify_sampling otherwise.
Verdict verify_sampled_tree(const DraftTree& tree, const float* logits, int64_t vocab,
                            const SamplingParams& params, uint64_t first_position);

// Children of every node in increasing index order (= draft-rank order), counting only the
// verifiable nodes (DraftTree::verifiable): the others have no children and are no one's child,
// which is how every verifier leaves them alone. The tree must be valid (validate_draft_tree):
// parents index the result.
std::vector<std::vector<int32_t>> children_of(const DraftTree& tree);

// The target's greedy token (argmax, ties to the lowest id) at each of the first `nodes` rows of
// logits ([nodes, vocab]), into out. What a drafter that learns from the target's own outputs at
// every node (Drafter::target_tokens) is given after verification, at every temperature.
void argmax_per_node(const float* logits, int64_t nodes, int64_t vocab, std::vector<int32_t>& out);

}  // namespace eagle2

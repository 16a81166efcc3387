// A draft tree as the verifier sees it: node 0 is the root (the token the target produced last,
// already emitted, not yet cached); parents[i] < i; node i sits at target position n + depth(i).
// Children of a node appear in draft-rank order (most likely first), which is the order in which
// sampling verification tries them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace eagle2 {

struct DraftTree {
  std::vector<int32_t> tokens;
  std::vector<int32_t> parents;  // -1 for the root
  std::vector<float> values;     // sum of draft log-probs along the root-to-node path (root 0);
                                 // a calibrated dynamic tree sums calibrated log-confidences
  std::vector<float> logps;      // the node's own draft log-prob given its parent (root 0)
  std::vector<int32_t> ranks;    // its rank among the draft's top-k children of its parent
                                 // (0 = most likely; -1 for the root and unknown ranks)
  // A sampled draft (speculative sampling with a draft model): row i ([size, draft_q_vocab]) is
  // the draft's processed distribution q at node i, from which node i's child was sampled, so that
  // verification can apply min(1, p/q) (verify_sampling_from_draft). Empty for deterministic
  // drafts (top-k trees, chains of argmax, lookups), which the position-keyed rule verifies.
  // draft_q_rows, when not empty, has one entry per node: the row of draft_q holding that node's q,
  // or -1 for a node without children. draft_q then holds those rows only: an EAGLE tree with
  // sampled siblings (a 128-node tree of a 128k vocabulary would take 131 MB with a row per node).
  std::vector<double> draft_q;
  int64_t draft_q_vocab = 0;
  std::vector<int32_t> draft_q_rows;
  // Nodes [0, verifiable) may be accepted; -1 = all. The nodes from `verifiable` on ride along in
  // the target forward (their logits are computed like any node's) but verification never walks
  // into them: lookahead decoding's Jacobi branch (speculative/lookahead_drafter.h), whose tokens
  // are guesses refined from the target's own outputs. Accepting one would be lossless too (its
  // logits are exact), but the method verifies n-grams only and its measurement must be the
  // method's. Verifiable nodes come first, so every ancestor of a verifiable node is verifiable.
  int64_t verifiable = -1;
  // Which drafters drafted each node, for a tree merged from several (hybrid trees,
  // speculative/hybrid_drafter.h): kFromHead | kFromSuffix bits, both when both drafted the same
  // path. Empty: one source, not recorded. The decoding loops count drafted and accepted nodes
  // per source from it (SpeculativeStats).
  static constexpr uint8_t kFromHead = 1, kFromSuffix = 2;
  std::vector<uint8_t> sources;

  int64_t size() const { return static_cast<int64_t>(tokens.size()); }
  // How many nodes (the first ones) verification may accept.
  int64_t verifiable_size() const { return verifiable < 0 ? size() : verifiable; }
  void reset(int32_t root) {
    verifiable = -1;
    tokens.assign(1, root);
    parents.assign(1, -1);
    values.assign(1, 0.0f);
    logps.assign(1, 0.0f);
    ranks.assign(1, -1);
    draft_q.clear();
    draft_q_vocab = 0;
    draft_q_rows.clear();
    sources.clear();
  }
  // logp defaults to value - values[parent], which is what it is when values are raw sums.
  void add(int32_t token, int32_t parent, float value) {
    add(token, parent, value, parent >= 0 ? value - values[static_cast<size_t>(parent)] : value,
        -1);
  }
  void add(int32_t token, int32_t parent, float value, float logp, int32_t rank) {
    tokens.push_back(token);
    parents.push_back(parent);
    values.push_back(value);
    logps.push_back(logp);
    ranks.push_back(rank);
  }
  std::vector<int32_t> depths() const;
};

// The one structural rule every tree obeys before it is verified: tokens and parents have the same
// non-zero length, parents[0] == -1, 0 <= parents[i] < i for every later node (a single root:
// verification walks children from node 0 and indexes by parent), and every token is in
// [0, vocab), `verifiable` is -1 or in [1, size] (the root is always verifiable), and `sources`
// is empty or has one entry per node. Error
// "<source>: <what is wrong>" otherwise, e.g. source = "drafter 'x' returned an invalid tree".
// A tree from a drafter is untrusted input to the verifier; this is O(size).
void validate_draft_tree(const DraftTree& tree, int64_t vocab, std::string_view source);

}  // namespace eagle2

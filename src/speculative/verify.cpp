#include "speculative/verify.h"

#include <algorithm>

#include "core/error.h"
#include "sampling/position_random.h"
#include "sampling/rng.h"

namespace eagle2 {

std::vector<std::vector<int32_t>> children_of(const DraftTree& tree) {
  std::vector<std::vector<int32_t>> ch(tree.tokens.size());
  // Nodes past tree.verifiable are nobody's child as verification sees the tree: every verifier
  // walks children from the root, so none of them can accept one.
  const auto verifiable = static_cast<size_t>(tree.verifiable_size());
  for (size_t i = 1; i < verifiable; ++i) ch[tree.parents[i]].push_back(static_cast<int32_t>(i));
  return ch;
}

void argmax_per_node(const float* logits, int64_t nodes, int64_t vocab, std::vector<int32_t>& out) {
  out.resize(static_cast<size_t>(nodes));
  for (int64_t i = 0; i < nodes; ++i)
    out[static_cast<size_t>(i)] = argmax(logits + i * vocab, vocab);
}

namespace {

// From the root, the target's token at each level picks the child holding it (the first such
// child) and the walk goes on from there; when no child holds it, that token is the bonus. Greedy
// and position-keyed sampling differ only in how the token is picked: pick(node, depth).
template <class PickToken>
Verdict follow_target_tokens(const DraftTree& tree, int64_t vocab, PickToken&& pick) {
  validate_draft_tree(tree, vocab, "verify: draft tree");
  const auto children = children_of(tree);
  Verdict v;
  v.path.push_back(0);
  for (int32_t node = 0, depth = 0;; ++depth) {
    const int32_t x = pick(node, depth);
    const std::vector<int32_t>& ch = children[static_cast<size_t>(node)];
    const auto it =
        std::find_if(ch.begin(), ch.end(), [&](int32_t c) { return tree.tokens[c] == x; });
    if (it == ch.end()) {
      v.bonus = x;
      return v;
    }
    node = *it;
    v.path.push_back(node);
  }
}

}  // namespace

Verdict verify_greedy(const DraftTree& tree, const float* logits, int64_t vocab) {
  return follow_target_tokens(
      tree, vocab, [&](int32_t node, int32_t) { return argmax(logits + node * vocab, vocab); });
}

Verdict verify_sampling(const DraftTree& tree, const float* logits, int64_t vocab,
                        const SamplingParams& params, uint64_t first_position) {
  return follow_target_tokens(tree, vocab, [&](int32_t node, int32_t depth) {
    const Distribution p = process_logits(logits + node * vocab, vocab, params);
    return sample_with(p,
                       counter_uniform(params.seed, first_position + static_cast<uint64_t>(depth)));
  });
}

Verdict verify_sampling_rejection(const DraftTree& tree, const float* logits, int64_t vocab,
                                  const SamplingParams& params, uint64_t first_position) {
  validate_draft_tree(tree, vocab, "verify: draft tree");
  const auto children = children_of(tree);
  Verdict v;
  int32_t node = 0;
  v.path.push_back(0);
  std::vector<int32_t> tried;
  for (uint64_t position = first_position;; ++position) {
    Rng rng(position_word(params.seed, position));
    Distribution p = process_logits(logits + node * vocab, vocab, params);
    int32_t next = -1;
    tried.clear();
    for (int32_t c : children[node]) {
      const int32_t x = tree.tokens[c];
      if (std::find(tried.begin(), tried.end(), x) != tried.end()) continue;
      tried.push_back(x);
      if (rng.uniform() < p.p[x]) {
        next = c;
        break;
      }
      // Rejected: sample the rest of the way from p without x. If x held all the mass (p(x) = 1
      // cannot be rejected, so this only happens through underflow) p stays as it is.
      p.remove_and_renormalize(x);
    }
    if (next < 0) {
      v.bonus = sample(p, rng);
      return v;
    }
    node = next;
    v.path.push_back(node);
  }
}

Verdict verify_sampling_from_draft(const DraftTree& tree, const float* logits, int64_t vocab,
                                   const SamplingParams& params, uint64_t first_position) {
  validate_draft_tree(tree, vocab, "verify: draft tree");
  const auto size = static_cast<size_t>(tree.size());
  const auto V = static_cast<size_t>(vocab);
  const bool by_row = !tree.draft_q_rows.empty();
  if (tree.draft_q_vocab != vocab ||
      (by_row ? tree.draft_q_rows.size() != size || tree.draft_q.size() % V != 0
              : tree.draft_q.size() != size * V))
    fail("verify: a sampled draft needs its draft distribution at every node (",
         tree.draft_q.size(), " probabilities for ", size, " nodes of vocabulary ", vocab, ")");
  const auto children = children_of(tree);
  // q at a node with children: its row (by_row) or the node's own row.
  const auto q_of = [&](int32_t node) -> const double* {
    const int64_t row = by_row ? tree.draft_q_rows[static_cast<size_t>(node)] : node;
    if (row < 0 || static_cast<size_t>(row) >= tree.draft_q.size() / V)
      fail("verify: a sampled draft has no draft distribution at node ", node,
           ", which has children");
    return &tree.draft_q[static_cast<size_t>(row) * V];
  };
  Verdict v;
  v.path.push_back(0);
  std::vector<double> q;
  for (uint64_t position = first_position;; ++position) {
    const int32_t node = v.path.back();
    const std::vector<int32_t>& ch = children[static_cast<size_t>(node)];
    Rng rng(position_word(params.seed, position));
    Distribution p = process_logits(logits + node * vocab, vocab, params);
    if (!ch.empty()) {
      const double* q0 = q_of(node);
      q.assign(q0, q0 + V);
    }
    int32_t next = -1;
    for (size_t i = 0; i < ch.size(); ++i) {
      const auto x = static_cast<size_t>(tree.tokens[ch[i]]);
      // A sibling q_i could not have drawn (a duplicate of one tried before, or a draft claiming
      // q(x) = 0) is passed over without touching p or q: rejecting it would carry no
      // information, and the residual update below is only right for a token drawn from q_i.
      if (!(q[x] > 0)) continue;
      // Sibling i was drawn from q_i (q without the siblings before it, renormalized): accept
      // with probability min(1, p_i(x) / q_i(x)); u * q(x) < p(x) avoids the division.
      if (rng.uniform() * q[x] < p.p[x]) {
        next = ch[i];
        break;
      }
      // Rejected: the rest of the way must give the residual norm(max(0, p_i - q_i)), whatever x
      // was (its residual is 0: p_i(x) <= q_i(x), or x would have been accepted). Its mass is the
      // probability of a rejection; if rounding leaves none, a rejection had no probability and
      // p_i stays. The next sibling was drawn from q_i without x.
      double mass = 0;
      for (size_t t = 0; t < V; ++t) mass += std::max(0.0, p.p[t] - q[t]);
      if (mass > 0)
        for (size_t t = 0; t < V; ++t) p.p[t] = std::max(0.0, p.p[t] - q[t]) / mass;
      // Divided by the sum left, not by 1 - q(x): where q(x) is within rounding of 1, 1 - q(x)
      // keeps few correct digits of the little mass that is left, the next sibling's q would not
      // be the one it was drawn from (Distribution::remove_and_renormalize divides by the sum),
      // and min(1, p/q) would accept it at the wrong rate.
      q[x] = 0;
      double rest = 0;
      for (const double qt : q) rest += qt;
      if (rest > 0)
        for (double& qt : q) qt /= rest;
    }
    if (next < 0) {
      // No sibling accepted (or none drafted): the bonus from what p has become.
      v.bonus = sample(p, rng);
      return v;
    }
    v.path.push_back(next);
  }
}

Verdict verify_sampled_tree(const DraftTree& tree, const float* logits, int64_t vocab,
                            const SamplingParams& params, uint64_t first_position) {
  return tree.draft_q.empty()
             ? verify_sampling(tree, logits, vocab, params, first_position)
             : verify_sampling_from_draft(tree, logits, vocab, params, first_position);
}

}  // namespace eagle2

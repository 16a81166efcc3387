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
  if (tree.draft_q_vocab != vocab || tree.draft_q.size() != size * static_cast<size_t>(vocab))
    fail("verify: a sampled draft needs its draft distribution at every node (",
         tree.draft_q.size(), " probabilities for ", size, " nodes of vocabulary ", vocab, ")");
  const auto children = children_of(tree);
  Verdict v;
  v.path.push_back(0);
  for (uint64_t position = first_position;; ++position) {
    const int32_t node = v.path.back();
    const std::vector<int32_t>& ch = children[static_cast<size_t>(node)];
    if (ch.size() > 1)
      fail("verify: a sampled draft must be a chain (node ", node, " has ", ch.size(),
           " children)");
    Rng rng(position_word(params.seed, position));
    Distribution p = process_logits(logits + node * vocab, vocab, params);
    if (ch.empty()) {
      v.bonus = sample(p, rng);
      return v;
    }
    const int32_t x = tree.tokens[ch[0]];
    const double* q = &tree.draft_q[static_cast<size_t>(node) * static_cast<size_t>(vocab)];
    // Accept with probability min(1, p(x)/q(x)): u * q(x) < p(x) avoids the division. q(x) > 0
    // since x was drawn from q (a draft that claims otherwise is always rejected).
    if (q[x] > 0 && rng.uniform() * q[x] < p.p[static_cast<size_t>(x)]) {
      v.path.push_back(ch[0]);
      continue;
    }
    // Rejected: the residual norm(max(0, p - q)). Its mass, sum max(0, p - q), is the probability
    // of a rejection; if rounding leaves none (p == q up to rounding), a rejection had no
    // probability and p itself is the right answer.
    Distribution residual;
    residual.p.resize(p.p.size());
    double mass = 0;
    for (size_t t = 0; t < p.p.size(); ++t) {
      residual.p[t] = std::max(0.0, p.p[t] - q[t]);
      mass += residual.p[t];
    }
    if (mass > 0) {
      for (double& r : residual.p) r /= mass;
      v.bonus = sample(residual, rng);
    } else {
      v.bonus = sample(p, rng);
    }
    return v;
  }
}

Verdict verify_sampled_tree(const DraftTree& tree, const float* logits, int64_t vocab,
                            const SamplingParams& params, uint64_t first_position) {
  return tree.draft_q.empty()
             ? verify_sampling(tree, logits, vocab, params, first_position)
             : verify_sampling_from_draft(tree, logits, vocab, params, first_position);
}

}  // namespace eagle2

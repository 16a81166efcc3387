#include "speculative/verify.h"

#include <algorithm>

#include "sampling/position_random.h"
#include "sampling/rng.h"

namespace eagle2 {

std::vector<std::vector<int32_t>> children_of(const DraftTree& tree) {
  std::vector<std::vector<int32_t>> ch(tree.tokens.size());
  for (size_t i = 1; i < tree.tokens.size(); ++i)
    ch[tree.parents[i]].push_back(static_cast<int32_t>(i));
  return ch;
}

Verdict verify_greedy(const DraftTree& tree, const float* logits, int64_t vocab) {
  validate_draft_tree(tree, vocab, "verify: draft tree");
  const auto children = children_of(tree);
  Verdict v;
  int32_t node = 0;
  v.path.push_back(0);
  for (;;) {
    const int32_t best = argmax(logits + node * vocab, vocab);
    int32_t next = -1;
    for (int32_t c : children[node])
      if (tree.tokens[c] == best) {
        next = c;
        break;
      }
    if (next < 0) {
      v.bonus = best;
      return v;
    }
    node = next;
    v.path.push_back(node);
  }
}

Verdict verify_sampling(const DraftTree& tree, const float* logits, int64_t vocab,
                        const SamplingParams& params, uint64_t first_position) {
  validate_draft_tree(tree, vocab, "verify: draft tree");
  const auto children = children_of(tree);
  Verdict v;
  int32_t node = 0;
  v.path.push_back(0);
  for (uint64_t position = first_position;; ++position) {
    const Distribution p = process_logits(logits + node * vocab, vocab, params);
    const int32_t x = sample_with(p, counter_uniform(params.seed, position));
    int32_t next = -1;
    for (int32_t c : children[node])
      if (tree.tokens[c] == x) {
        next = c;
        break;
      }
    if (next < 0) {
      v.bonus = x;
      return v;
    }
    node = next;
    v.path.push_back(node);
  }
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

}  // namespace eagle2

#include "support/broken_verifiers.h"

#include <algorithm>
#include <cmath>

#include "sampling/logits_processor.h"
#include "sampling/position_random.h"
#include "sampling/rng.h"

namespace eagle2::test {

namespace {

// The numbers of a level, drawn like verify_sampling_rejection's, so that each broken rule differs
// from the correct one by its bug only.
Rng level_rng(const SamplingParams& sp, uint64_t position) {
  return Rng(position_word(sp.seed, position));
}

Verdict bonus_untempered(const DraftTree& tree, const float* logits, int64_t V,
                         const SamplingParams& sp, uint64_t first_position) {
  const auto children = children_of(tree);
  Verdict v;
  int32_t node = 0;
  v.path.push_back(0);
  for (uint64_t position = first_position;; ++position) {
    Rng rng = level_rng(sp, position);
    Distribution p = process_logits(logits + node * V, V, sp);
    SamplingParams raw = sp;
    raw.temperature = 1.0f;
    Distribution bonus = process_logits(logits + node * V, V, raw);
    int32_t next = -1;
    for (int32_t c : children[node]) {
      const int32_t x = tree.tokens[c];
      if (rng.uniform() < p.p[x]) {
        next = c;
        break;
      }
      p.remove_and_renormalize(x);
      bonus.remove_and_renormalize(x);
    }
    if (next < 0) {
      v.bonus = sample(bonus, rng);
      return v;
    }
    node = next;
    v.path.push_back(node);
  }
}

Verdict uses_draft_q(const DraftTree& tree, const float* logits, int64_t V,
                     const SamplingParams& sp, uint64_t first_position) {
  const auto children = children_of(tree);
  Verdict v;
  int32_t node = 0;
  v.path.push_back(0);
  for (uint64_t position = first_position;; ++position) {
    Rng rng = level_rng(sp, position);
    Distribution p = process_logits(logits + node * V, V, sp);
    int32_t next = -1;
    for (int32_t c : children[node]) {
      const int32_t x = tree.tokens[c];
      const double q = std::exp(static_cast<double>(tree.values[c] - tree.values[node]));
      if (rng.uniform() < std::min(1.0, p.p[x] / q)) {
        next = c;
        break;
      }
      const double rest = std::max(0.0, p.p[x] - q);
      double total = 0;
      for (int64_t t = 0; t < V; ++t) total += t == x ? rest : p.p[t];
      if (total > 0)
        for (int64_t t = 0; t < V; ++t) p.p[t] = (t == x ? rest : p.p[t]) / total;
    }
    if (next < 0) {
      v.bonus = sample(p, rng);
      return v;
    }
    node = next;
    v.path.push_back(node);
  }
}

Verdict no_renormalization(const DraftTree& tree, const float* logits, int64_t V,
                           const SamplingParams& sp, uint64_t first_position) {
  const auto children = children_of(tree);
  Verdict v;
  int32_t node = 0;
  v.path.push_back(0);
  for (uint64_t position = first_position;; ++position) {
    Rng rng = level_rng(sp, position);
    Distribution p = process_logits(logits + node * V, V, sp);
    int32_t next = -1;
    std::vector<int32_t> tried;
    for (int32_t c : children[node]) {
      const int32_t x = tree.tokens[c];
      if (std::find(tried.begin(), tried.end(), x) != tried.end()) continue;
      tried.push_back(x);
      if (rng.uniform() < p.p[x]) {
        next = c;
        break;
      }
      p.p[x] = 0;
    }
    if (next < 0) {
      double mass = 0;
      for (double q : p.p) mass += q;
      v.bonus = sample(mass > 0 ? p : process_logits(logits + node * V, V, sp), rng);
      return v;
    }
    node = next;
    v.path.push_back(node);
  }
}

// verify_sampling's walk with the position of each level chosen by `position_of(first_position,
// depth, node)`.
template <typename PositionOf>
Verdict keyed_walk(const DraftTree& tree, const float* logits, int64_t V, const SamplingParams& sp,
                   uint64_t first_position, PositionOf position_of) {
  const auto children = children_of(tree);
  Verdict v;
  int32_t node = 0;
  v.path.push_back(0);
  for (uint64_t depth = 0;; ++depth) {
    const Distribution p = process_logits(logits + node * V, V, sp);
    const int32_t x =
        sample_with(p, counter_uniform(sp.seed, position_of(first_position, depth, node)));
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

Verdict one_uniform_per_cycle(const DraftTree& tree, const float* logits, int64_t V,
                              const SamplingParams& sp, uint64_t first_position) {
  return keyed_walk(tree, logits, V, sp, first_position,
                    [](uint64_t first, uint64_t, int32_t) { return first; });
}

Verdict node_index_as_depth(const DraftTree& tree, const float* logits, int64_t V,
                            const SamplingParams& sp, uint64_t first_position) {
  return keyed_walk(
      tree, logits, V, sp, first_position,
      [](uint64_t first, uint64_t, int32_t node) { return first + static_cast<uint64_t>(node); });
}

// The position-keyed walk, except that a child holding the target's argmax is entered outright,
// before the sampled token is looked for.
Verdict accepts_argmax(const DraftTree& tree, const float* logits, int64_t V,
                       const SamplingParams& sp, uint64_t first_position) {
  const auto children = children_of(tree);
  Verdict v;
  int32_t node = 0;
  v.path.push_back(0);
  for (uint64_t position = first_position;; ++position) {
    const float* l = logits + node * V;
    const int32_t best = argmax(l, V);
    const int32_t x = sample_with(process_logits(l, V, sp), counter_uniform(sp.seed, position));
    const std::vector<int32_t>& ch = children[static_cast<size_t>(node)];
    auto holding = [&](int32_t token) {
      const auto it =
          std::find_if(ch.begin(), ch.end(), [&](int32_t c) { return tree.tokens[c] == token; });
      return it == ch.end() ? -1 : *it;
    };
    const int32_t next = holding(best) >= 0 ? holding(best) : holding(x);
    if (next < 0) {
      v.bonus = x;
      return v;
    }
    node = next;
    v.path.push_back(node);
  }
}

}  // namespace

NamedVerifier argmax_accepting_verifier() {
  return {"a drafted token equal to the target's argmax accepted outright", accepts_argmax};
}

std::vector<NamedVerifier> broken_rejection_verifiers() {
  return {{"bonus from the untempered distribution", bonus_untempered},
          {"draft q used with top-k drafts", uses_draft_q},
          {"no renormalization after a rejection", no_renormalization}};
}

std::vector<NamedVerifier> broken_position_verifiers() {
  return {{"one uniform for every level of a cycle", one_uniform_per_cycle},
          {"the node index instead of the depth", node_index_as_depth}};
}

}  // namespace eagle2::test

#include "speculative/suffix_drafter.h"

#include <algorithm>
#include <cmath>
#include <queue>

#include "core/error.h"

namespace eagle2 {

void SuffixParams::validate(const std::string& where) const {
  if (tokens < 1 || tokens > kMaxTreeTokens || depth < 0 || depth > kMaxDepth || min_percent < 0 ||
      min_percent > 100)
    fail(where, ": suffix needs T in [1, ", kMaxTreeTokens, "], D in [0, ", kMaxDepth,
         "] and P in [0, 100] (got T = ", tokens, ", D = ", depth, ", P = ", min_percent, ")");
}

namespace {

struct Candidate {
  double frequency;  // of the path from the matched context
  int64_t order;     // first pushed first among equals: the tree is deterministic
  int32_t node;      // in the index
  int32_t parent;    // in the tree
  int32_t level;     // 1 = a child of the root
  float logp;
  int32_t rank;
};

struct Worse {
  bool operator()(const Candidate& a, const Candidate& b) const {
    return a.frequency != b.frequency ? a.frequency < b.frequency : a.order > b.order;
  }
};

}  // namespace

int64_t grow_suffix_tree(const SuffixIndex& index, int32_t matched, int64_t budget, int levels,
                         double min_frequency, DraftTree& tree) {
  std::priority_queue<Candidate, std::vector<Candidate>, Worse> frontier;
  std::vector<int32_t> kids;
  int64_t pushed = 0;
  auto push_children = [&](int32_t node, int32_t tree_parent, int32_t level, double frequency) {
    index.children(node, kids);
    int64_t total = 0;
    for (const int32_t k : kids) total += index.count(k);
    for (size_t r = 0; r < kids.size(); ++r) {
      const double own = static_cast<double>(index.count(kids[r])) / static_cast<double>(total);
      // Siblings come most frequent first: once one is below the floor, the rest are too.
      if (frequency * own < min_frequency) break;
      frontier.push({frequency * own, pushed++, kids[r], tree_parent, level,
                     static_cast<float>(std::log(own)), static_cast<int32_t>(r)});
    }
  };
  push_children(matched, 0, 1, 1.0);
  int64_t added = 0;
  while (added < budget && !frontier.empty()) {
    const Candidate c = frontier.top();
    frontier.pop();
    tree.add(index.token(c.node), c.parent, static_cast<float>(std::log(c.frequency)), c.logp,
             c.rank);
    ++added;
    if (c.level < levels)
      push_children(c.node, static_cast<int32_t>(tree.size() - 1), c.level + 1, c.frequency);
  }
  return added;
}

SuffixDrafter::SuffixDrafter(const SuffixParams& params, int64_t max_nodes)
    : p_((params.validate("suffix drafter"), params)), index_(params.index_depth(), max_nodes) {}

void SuffixDrafter::begin(std::span<const int32_t> context, const float*, int32_t root) {
  index_.clear();
  index_.append(context);
  index_.append(root);
}

void SuffixDrafter::draft(int64_t max_tokens, DraftTree& tree) {
  const std::span<const int32_t> text = index_.text();
  tree.reset(text.back());
  last_match_ = 0;
  const int64_t room = std::min<int64_t>(p_.tokens, max_tokens) - 1;
  if (room <= 0) return;
  // The longest context with a continuation: its node has children (earlier occurrences went on).
  const int longest =
      std::min<int>({SuffixParams::kMaxMatch, index_.depth() - 1, static_cast<int>(text.size())});
  for (int p = longest; p >= 1; --p) {
    const int32_t node = index_.suffix_node(p);
    if (!index_.has_children(node)) continue;
    last_match_ = p;
    const int64_t budget =
        std::min<int64_t>(room, int64_t{SuffixParams::kTokensPerMatchedToken} * p);
    grow_suffix_tree(index_, node, budget, p_.depth + 1, p_.min_percent / 100.0, tree);
    return;
  }
}

void SuffixDrafter::accept(const DraftTree& tree, std::span<const int32_t> path, const float*,
                           int32_t bonus) {
  for (size_t j = 1; j < path.size(); ++j) index_.append(tree.tokens[static_cast<size_t>(path[j])]);
  index_.append(bonus);
}

}  // namespace eagle2

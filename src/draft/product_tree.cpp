#include "draft/product_tree.h"

#include <cmath>
#include <queue>
#include <vector>

#include "core/error.h"

namespace eagle2 {

namespace {

struct Candidate {
  float value;         // parent_value + logps[depth - 1][rank]
  float parent_value;  // kept so that a sibling's value is computed from the parent, not chained
  int32_t parent;      // tree node of the parent (0 = the root)
  std::vector<int32_t> ranks;  // the path; its size is the depth
};

// "a comes after b" for the max-heap: value descending, then shallower, then smaller ranks.
struct After {
  bool operator()(const Candidate& a, const Candidate& b) const {
    if (a.value != b.value) return a.value < b.value;
    if (a.ranks.size() != b.ranks.size()) return a.ranks.size() > b.ranks.size();
    return a.ranks > b.ranks;
  }
};

void check_levels(const ProductLevels& l) {
  const auto n = static_cast<size_t>(l.depth) * static_cast<size_t>(l.k);
  if (l.depth < 0 || l.k < 0 || l.tokens.size() != n || l.logps.size() != n)
    fail("product tree: ", l.depth, " levels of ", l.k, " candidates, got ", l.tokens.size(),
         " tokens and ", l.logps.size(), " log-probs (internal error)");
  for (size_t i = 0; i < n; ++i) {
    const float lp = l.logps[i];
    // A positive log-prob would let a child outrank its parent (the result would not be a tree);
    // an unsorted row would let a sibling outrank its elder one.
    if (!std::isfinite(lp) || lp > 0.0f)
      fail("product tree: log-prob ", lp, " is not finite and <= 0 (internal error)");
    if (i % static_cast<size_t>(l.k) != 0 && lp > l.logps[i - 1])
      fail("product tree: a level's log-probs are not in descending order (internal error)");
  }
}

}  // namespace

void build_product_tree(int32_t root, const ProductLevels& levels, int64_t total_tokens,
                        DraftTree& tree) {
  check_levels(levels);
  tree.reset(root);
  if (total_tokens <= 1 || levels.depth == 0 || levels.k == 0) return;
  const auto k = static_cast<size_t>(levels.k);
  auto logp = [&](size_t depth, int32_t rank) { return levels.logps[(depth - 1) * k + rank]; };
  std::priority_queue<Candidate, std::vector<Candidate>, After> heap;
  heap.push({logp(1, 0), 0.0f, 0, {0}});
  while (!heap.empty() && tree.size() < total_tokens) {
    Candidate c = heap.top();
    heap.pop();
    const size_t depth = c.ranks.size();
    const int32_t rank = c.ranks.back();
    const float lp = logp(depth, rank);
    tree.add(levels.tokens[(depth - 1) * k + rank], c.parent, c.value, lp, rank);
    const auto node = static_cast<int32_t>(tree.size() - 1);
    // Its first child and its next sibling: the only candidates whose predecessor it is.
    if (depth < static_cast<size_t>(levels.depth)) {
      std::vector<int32_t> child = c.ranks;
      child.push_back(0);
      heap.push({c.value + logp(depth + 1, 0), c.value, node, std::move(child)});
    }
    if (static_cast<size_t>(rank) + 1 < k) {
      c.ranks.back() = rank + 1;
      c.value = c.parent_value + logp(depth, rank + 1);
      heap.push(std::move(c));
    }
  }
}

}  // namespace eagle2

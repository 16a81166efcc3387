#include "speculative/suffix_drafter.h"

#include <algorithm>
#include <cmath>
#include <queue>

#include "core/error.h"
#include "speculative/shared_suffix_index.h"

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

SuffixDrafter::SuffixDrafter(const SuffixParams& params, int64_t max_nodes,
                             std::shared_ptr<SharedSuffixIndex> shared)
    : p_((params.validate("suffix drafter"), params)),
      index_(params.index_depth(), max_nodes),
      shared_(std::move(shared)) {}

SuffixDrafter::~SuffixDrafter() {
  publish();
}

// What the target generated is worth sharing whether the generation ended, failed or was
// cancelled (every token of it was verified). A failure to publish loses a document, never the
// request: it is swallowed.
void SuffixDrafter::publish() noexcept {
  if (!shared_ || output_.empty()) return;
  try {
    shared_->publish(output_);
  } catch (...) {
  }
  output_.clear();
}

void SuffixDrafter::begin(std::span<const int32_t> context, const float*, int32_t root) {
  publish();
  index_.clear();
  index_.append(context);
  index_.append(root);
  if (shared_) output_.assign(1, root);
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
  int32_t own = -1;
  int p = longest;
  for (; p >= 1; --p)
    if (index_.has_children(own = index_.suffix_node(p))) break;
  auto budget = [&](int match) {
    return std::min<int64_t>(room, int64_t{SuffixParams::kTokensPerMatchedToken} * match);
  };
  const double floor = p_.min_percent / 100.0;
  last_from_shared_ = false;
  if (shared_) {
    // Only a longer match than the request's own: shorter ones would be drafted from it anyway.
    shared_tree_.reset(text.back());
    const int from_shared = shared_->draft(text.last(static_cast<size_t>(longest)), longest,
                                           budget(longest), p_.depth + 1, floor, shared_tree_);
    if (from_shared > p) {
      // Grown with the longest match's budget: trimmed to this match's (best-first order keeps
      // every prefix a tree).
      const auto keep = static_cast<size_t>(budget(from_shared) + 1);
      for (auto* v : {&shared_tree_.tokens, &shared_tree_.parents, &shared_tree_.ranks})
        if (v->size() > keep) v->resize(keep);
      for (auto* v : {&shared_tree_.values, &shared_tree_.logps})
        if (v->size() > keep) v->resize(keep);
      std::swap(tree, shared_tree_);
      last_match_ = from_shared;
      last_from_shared_ = true;
      return;
    }
  }
  if (p < 1) return;
  last_match_ = p;
  grow_suffix_tree(index_, own, budget(p), p_.depth + 1, floor, tree);
}

void SuffixDrafter::accept(const DraftTree& tree, std::span<const int32_t> path, const float*,
                           int32_t bonus) {
  for (size_t j = 1; j < path.size(); ++j) {
    const int32_t t = tree.tokens[static_cast<size_t>(path[j])];
    index_.append(t);
    if (shared_) output_.push_back(t);
  }
  index_.append(bonus);
  if (shared_) output_.push_back(bonus);
}

}  // namespace eagle2

#include "draft/tree_builder.h"

#include <algorithm>
#include <functional>
#include <numeric>
#include <queue>

#include "core/error.h"

namespace eagle2 {

namespace {

// Indices of the best n of values[0..size) by value descending, ties towards the lower index;
// returned best first. A strict total order, so the best n are the first n of the full order.
std::vector<int32_t> best_by_value(const std::vector<float>& values, size_t n) {
  std::vector<int32_t> idx(values.size());
  std::iota(idx.begin(), idx.end(), 0);
  n = std::min(n, idx.size());
  std::partial_sort(
      idx.begin(), idx.begin() + static_cast<std::ptrdiff_t>(n), idx.end(),
      [&](int32_t a, int32_t b) { return values[a] != values[b] ? values[a] > values[b] : a < b; });
  idx.resize(n);
  return idx;
}

// The drafter answers the step the builder asked for, with the shape it asked for: anything else
// is a bug in the drafter, not bad input, but a wrong size would read out of bounds.
void check_answer(const DraftStep& step, size_t tokens, size_t logp, size_t confidence) {
  if (step.kind != DraftStep::Kind::RootChildren && step.kind != DraftStep::Kind::Expand)
    fail("draft tree: children supplied when none were asked for (internal error)");
  const size_t want = step.rows * static_cast<size_t>(step.k);
  if (tokens != want || logp != want || (confidence != 0 && confidence != want))
    fail("draft tree: ", want, " children asked for, got ", tokens, " tokens, ", logp,
         " log-probs and ", confidence, " confidences (internal error)");
}

}  // namespace

void DynamicTreeBuilder::start(int32_t root, const DynamicTreeParams& params, int64_t max_tokens,
                               Budget budget) {
  root_ = root;
  params_ = params;
  max_tokens_ = max_tokens;
  budget_kind_ = budget;
  budget_ =
      budget == Budget::Chosen ? max_tokens : std::min<int64_t>(params.total_tokens, max_tokens);
  expansions_ = 0;
  pool_.clear();
  frontier_.clear();
  selected_.clear();
  fed_.clear();
  keep_.clear();
  values_desc_.clear();
  active_ = true;
  // No room for a drafted node: the root alone, without asking for anything (nor for a budget).
  if (budget_ <= 1 || params.top_k < 1)
    step_ = {};
  else
    step_ = {DraftStep::Kind::RootChildren, params.top_k, 0, 1};
}

void DynamicTreeBuilder::supply(std::span<const int32_t> tokens, std::span<const float> logp,
                                std::span<const float> confidence) {
  check_answer(step_, tokens.size(), logp.size(), confidence.size());
  const int K = params_.top_k;
  // Confidences are <= 0 by contract (a log-probability or log-confidence), so that a child's value
  // never exceeds its parent's; drop_hopeless_frontier relies on it. Draft log-probs and calibrated
  // confidences are <= 0 already; the clamp keeps a predictor that rounds to a hair above 0 from
  // breaking the order (NaN passes through, as before).
  auto conf = [&](size_t i) {
    const float c = confidence.empty() ? logp[i] : confidence[i];
    return c > 0.0f ? 0.0f : c;
  };
  if (step_.kind == DraftStep::Kind::RootChildren) {
    for (int c = 0; c < K; ++c) pool_.push_back({tokens[c], logp[c], c, conf(c), conf(c), -1, 1});
    select_level(0);
    // Level 1 is expanded whole, fed in rank order (the order of EAGLE-2's reference).
    std::iota(frontier_.begin(), frontier_.end(), 0);
  } else {
    const size_t block = pool_.size();
    for (size_t a = 0; a < frontier_.size(); ++a) {
      pool_[frontier_[a]].first_child = static_cast<int32_t>(pool_.size());
      const Candidate parent = pool_[frontier_[a]];
      for (int c = 0; c < K; ++c) {
        const size_t i = a * K + c;
        const float v = parent.value + conf(i);
        pool_.push_back({tokens[i], logp[i], c, v, conf(i), frontier_[a], parent.depth + 1});
      }
    }
    ++expansions_;
    // Without rerank the last level's K best are kept too: selected as if to expand.
    if (expansions_ < params_.depth || !params_.rerank) select_level(block);
  }
  if (expansions_ < params_.depth) drop_hopeless_frontier();
  if (expansions_ < params_.depth && !frontier_.empty())
    feed_frontier();
  else
    rerank();
}

// Once the pool holds T - 1 nodes of value >= v (the (T - 1)-th best value), a frontier node of
// value <= v cannot add anything to the tree: its descendants' values are <= its own (a child's
// value is its parent's plus a confidence <= 0), and a later node that only ties v loses the tie
// to those T - 1 (ties go to the lower pool index, and later nodes have higher ones). Not
// expanding it saves draft rows and leaves the tree unchanged: every candidate the full expansion
// would add through it is hopeless too, and a node that takes one of their places in a later
// frontier ranks below them, so it is hopeless as well (the threshold never falls) and is dropped
// before it is fed; the nodes that can still be kept rank among themselves as before, level by
// level. Relies on confidences <= 0, which supply() enforces. For EAGLE-2's ranking with rerank
// only (the ablation keeps nodes by other rules). tests/unit/test_tree_pruning.cpp holds it to
// the plain algorithm.
void DynamicTreeBuilder::drop_hopeless_frontier() {
  if (params_.ranking != DynamicTreeParams::Ranking::Value || !params_.rerank) return;
  const size_t keep = static_cast<size_t>(budget_ - 1);
  if (keep == 0 || pool_.size() < keep) return;
  std::vector<float> values(pool_.size());
  for (size_t i = 0; i < pool_.size(); ++i) values[i] = pool_[i].value;
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(keep - 1),
                   values.end(), std::greater<float>());
  const float threshold = values[keep - 1];
  std::erase_if(frontier_, [&](int32_t f) { return pool_[f].value <= threshold; });
}

// The frontier: the K best of the level pool_[begin..) by the ranking (ties: lower pool index).
void DynamicTreeBuilder::select_level(size_t begin) {
  std::vector<float> keys(pool_.size() - begin);
  for (size_t i = 0; i < keys.size(); ++i) {
    const Candidate& c = pool_[begin + i];
    keys[i] = params_.ranking == DynamicTreeParams::Ranking::Value ? c.value : c.confidence;
  }
  frontier_ = best_by_value(keys, static_cast<size_t>(params_.top_k));
  for (int32_t& f : frontier_) f += static_cast<int32_t>(begin);
  selected_.insert(selected_.end(), frontier_.begin(), frontier_.end());
}

std::span<const float> DynamicTreeBuilder::pool_values() {
  pool_values_.resize(pool_.size());
  for (size_t i = 0; i < pool_.size(); ++i) pool_values_[i] = pool_[i].value;
  return pool_values_;
}

std::span<const float> DynamicTreeBuilder::frontier_values() {
  frontier_values_.resize(frontier_.size());
  for (size_t i = 0; i < frontier_.size(); ++i) frontier_values_[i] = pool_[frontier_[i]].value;
  return frontier_values_;
}

void DynamicTreeBuilder::stop_expanding() {
  if (step_.kind != DraftStep::Kind::Expand || budget_kind_ != Budget::Chosen)
    fail("draft tree: stop_expanding() outside an Expand step of a chosen budget (internal error)");
  // The frontier was queued for feeding: take it back, so the tree holds only what was drafted.
  fed_.resize(step_.first);
  for (int32_t f : frontier_) pool_[f].fed = -1;
  frontier_.clear();
  rerank();
}

void DynamicTreeBuilder::feed_frontier() {
  const size_t first = fed_.size();
  for (int32_t f : frontier_) {
    Candidate& c = pool_[f];
    c.fed = static_cast<int32_t>(fed_.size());
    fed_.push_back({c.token, c.parent < 0 ? -1 : pool_[c.parent].fed, c.depth});
  }
  step_ = {DraftStep::Kind::Expand, params_.top_k, first, fed_.size() - first};
}

void DynamicTreeBuilder::rerank() {
  // Every node the tree may keep, in the order it keeps them: with a chosen budget all of them,
  // so that the chooser's i-th value is the i-th node kept; with a fixed one the first T - 1.
  const size_t n = budget_kind_ == Budget::Chosen ? pool_.size() : static_cast<size_t>(budget_ - 1);
  if (!params_.rerank) {
    keep_.assign(selected_.begin(), selected_.begin() + std::min(n, selected_.size()));
  } else if (params_.ranking == DynamicTreeParams::Ranking::OwnConfidence) {
    keep_ = best_first_by_confidence(n);
  } else {
    std::vector<float> values(pool_.size());
    for (size_t i = 0; i < pool_.size(); ++i) values[i] = pool_[i].value;
    keep_ = best_by_value(values, n);
  }
  if (budget_kind_ == Budget::Chosen) {
    // Path values whatever the order: exp(value) estimates a node's acceptance (tree_budget.h).
    values_desc_.resize(keep_.size());
    for (size_t i = 0; i < keep_.size(); ++i) values_desc_[i] = pool_[keep_[i]].value;
    step_ = {DraftStep::Kind::ChooseBudget};
  } else {
    step_ = {};
  }
}

// The ablation's rerank: the first n nodes taken best first by own confidence (ties: lower pool
// index) among those whose parent is the root or already taken. By value a parent always ranks
// above its children; by own confidence it need not, and a child taken without its parent would
// not be a tree. Each taken node opens its K children (contiguous in the pool).
std::vector<int32_t> DynamicTreeBuilder::best_first_by_confidence(size_t n) const {
  auto below = [this](int32_t a, int32_t b) {
    const float ca = pool_[a].confidence, cb = pool_[b].confidence;
    return ca != cb ? ca < cb : a > b;
  };
  std::priority_queue<int32_t, std::vector<int32_t>, decltype(below)> open(below);
  for (size_t i = 0; i < pool_.size() && pool_[i].parent < 0; ++i)  // level 1
    open.push(static_cast<int32_t>(i));
  std::vector<int32_t> out;
  while (out.size() < n && !open.empty()) {
    const int32_t i = open.top();
    open.pop();
    out.push_back(i);
    if (pool_[i].first_child >= 0)
      for (int c = 0; c < params_.top_k; ++c) open.push(pool_[i].first_child + c);
  }
  return out;
}

void DynamicTreeBuilder::choose_budget(int64_t total_tokens) {
  if (step_.kind != DraftStep::Kind::ChooseBudget)
    fail("draft tree: a budget chosen when none was asked for (internal error)");
  budget_ = std::clamp<int64_t>(total_tokens, 1, max_tokens_);
  keep_.resize(std::min(keep_.size(), static_cast<size_t>(budget_ - 1)));
  values_desc_.clear();
  step_ = {};
}

void DynamicTreeBuilder::finish(DraftTree& tree) {
  if (!active_ || step_.kind != DraftStep::Kind::Done)
    fail("draft tree: finished before it was done (internal error)");
  active_ = false;
  tree.reset(root_);
  // The kept candidates back in pool order (parents before children).
  std::sort(keep_.begin(), keep_.end());
  std::vector<int32_t> node_of(pool_.size(), -1);
  for (int32_t p : keep_) {
    const Candidate& c = pool_[p];
    int32_t parent = 0;
    if (c.parent >= 0) {
      parent = node_of[c.parent];
      // Every keep order puts a parent first: by value a child's value never exceeds its
      // parent's and ties favour the lower (parent) index; best first by own confidence opens a
      // node's children once it is kept; without rerank each level descends from the last.
      if (parent < 0) fail("draft tree: kept node without its parent (internal error)");
    }
    node_of[p] = static_cast<int32_t>(tree.size());
    tree.add(c.token, parent, c.value, c.logp, c.rank);
  }
}

void StaticTreeBuilder::start(int32_t root, const TreeChoices& choices, int64_t max_tokens) {
  tree_.reset(root);
  sorted_ = choices;
  std::stable_sort(sorted_.begin(), sorted_.end(), [](const auto& a, const auto& b) {
    return a.size() != b.size() ? a.size() < b.size() : a < b;
  });
  if (static_cast<int64_t>(sorted_.size()) > max_tokens - 1)
    sorted_.resize(static_cast<size_t>(std::max<int64_t>(0, max_tokens - 1)));
  node_of_.clear();
  node_of_[{}] = 0;
  fed_of_.assign(1, -1);
  fed_.clear();
  level_begin_ = level_end_ = 0;
  depth_ = 0;
  active_ = true;
  plan_level();
}

void StaticTreeBuilder::plan_level() {
  // The paths of the next depth, grouped by parent (sorted order keeps siblings together). A path
  // under a child left out (supply(): a token < 0) is left out too, and a level left without
  // any path ends the tree.
  parents_.clear();
  int k = 0;
  while (parents_.empty()) {
    ++depth_;
    level_begin_ = level_end_;
    while (level_end_ < sorted_.size() && sorted_[level_end_].size() == depth_) ++level_end_;
    if (level_begin_ == level_end_) {
      step_ = {};
      return;
    }
    for (size_t p = level_begin_; p < level_end_; ++p) {
      std::vector<int> prefix(sorted_[p].begin(), sorted_[p].end() - 1);
      auto it = node_of_.find(prefix);
      if (it == node_of_.end()) fail("tree choices: path has no parent path listed before it");
      if (it->second < 0) {
        node_of_[sorted_[p]] = -1;
        continue;
      }
      k = std::max(k, sorted_[p].back() + 1);
      if (parents_.empty() || parents_.back() != it->second) parents_.push_back(it->second);
    }
  }
  if (depth_ == 1) {
    step_ = {DraftStep::Kind::RootChildren, k, 0, 1};
    return;
  }
  const size_t first = fed_.size();
  for (int32_t node : parents_) {
    const int32_t parent = tree_.parents[node];
    fed_of_[node] = static_cast<int32_t>(fed_.size());
    fed_.push_back(
        {tree_.tokens[node], parent == 0 ? -1 : fed_of_[parent], static_cast<int32_t>(depth_ - 1)});
  }
  step_ = {DraftStep::Kind::Expand, k, first, parents_.size()};
}

void StaticTreeBuilder::supply(std::span<const int32_t> tokens, std::span<const float> logp) {
  check_answer(step_, tokens.size(), logp.size(), 0);
  const auto k = static_cast<size_t>(step_.k);
  // parents_ lists this level's live parents in the order their paths come (siblings together),
  // so each path's row is found by counting parent changes.
  size_t row = 0;
  for (size_t p = level_begin_; p < level_end_; ++p) {
    std::vector<int> prefix(sorted_[p].begin(), sorted_[p].end() - 1);
    const int32_t parent = node_of_[prefix];
    if (parent < 0) continue;  // under a child left out: plan_level marked it already
    while (row < parents_.size() && parents_[row] != parent) ++row;
    if (row == parents_.size())
      fail("draft tree: a path's parent is not in its level (internal error)");
    const int rank = sorted_[p].back();
    const size_t i = row * k + static_cast<size_t>(rank);
    if (tokens[i] < 0) {  // no such child: it and everything under it are left out
      node_of_[sorted_[p]] = -1;
      continue;
    }
    node_of_[sorted_[p]] = static_cast<int32_t>(tree_.size());
    fed_of_.push_back(-1);
    tree_.add(tokens[i], parent, tree_.values[parent] + logp[i], logp[i], rank);
  }
  plan_level();
}

void StaticTreeBuilder::finish(DraftTree& tree) {
  if (!active_ || step_.kind != DraftStep::Kind::Done)
    fail("draft tree: finished before it was done (internal error)");
  active_ = false;
  std::swap(tree, tree_);
}

}  // namespace eagle2

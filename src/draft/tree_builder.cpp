#include "draft/tree_builder.h"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <numeric>

#include "core/error.h"

namespace eagle2 {

namespace {

// A candidate of the EAGLE-2 pool; pool order = level 1, then each expansion's K*K block
// (row-major by fed node, then child rank).
struct Candidate {
  int32_t token;
  float logp;  // draft log-prob given the parent
  int32_t rank;  // among the parent's top-k
  float value;
  int32_t parent;  // pool index, -1 = root
  int32_t depth;
  int32_t fed = -1;  // index in the fed list once expanded
};

// Indices of the best n of values[0..size) by value descending, ties towards the lower index;
// returned best first.
std::vector<int32_t> best_by_value(const std::vector<float>& values, size_t n) {
  std::vector<int32_t> idx(values.size());
  std::iota(idx.begin(), idx.end(), 0);
  n = std::min(n, idx.size());
  std::partial_sort(idx.begin(), idx.begin() + static_cast<std::ptrdiff_t>(n), idx.end(),
                    [&](int32_t a, int32_t b) {
                      return values[a] != values[b] ? values[a] > values[b] : a < b;
                    });
  idx.resize(n);
  return idx;
}

}  // namespace

void build_dynamic_tree(DraftOracle& oracle, int32_t root, const DynamicTreeParams& params,
                        int64_t max_tokens, DraftTree& tree) {
  tree.reset(root);
  int64_t budget = params.choose_total ? max_tokens
                                       : std::min<int64_t>(params.total_tokens, max_tokens);
  if (budget <= 1 || params.top_k < 1) return;
  const int K = params.top_k;
  std::vector<Candidate> pool;
  std::vector<int32_t> tok(static_cast<size_t>(K) * K);
  std::vector<float> lp(static_cast<size_t>(K) * K);

  auto confidence = [&](float logp, int rank) {
    return params.confidence ? params.confidence(logp, rank) : logp;
  };
  oracle.root_top_k(K, tok.data(), lp.data());
  for (int c = 0; c < K; ++c) pool.push_back({tok[c], lp[c], c, confidence(lp[c], c), -1, 1});
  std::vector<int32_t> frontier(K);
  std::iota(frontier.begin(), frontier.end(), 0);

  std::vector<FedNode> fed;
  for (int step = 0; step < params.depth; ++step) {
    const size_t first = fed.size();
    for (int32_t f : frontier) {
      Candidate& c = pool[f];
      c.fed = static_cast<int32_t>(fed.size());
      fed.push_back({c.token, c.parent < 0 ? -1 : pool[c.parent].fed, c.depth});
    }
    oracle.expand_top_k(fed, first, K, tok.data(), lp.data());
    const size_t block = pool.size();
    std::vector<float> block_values;
    for (size_t a = 0; a < frontier.size(); ++a) {
      const Candidate parent = pool[frontier[a]];
      for (int c = 0; c < K; ++c) {
        const float v = parent.value + confidence(lp[a * K + c], c);
        pool.push_back({tok[a * K + c], lp[a * K + c], c, v, frontier[a], parent.depth + 1});
        block_values.push_back(v);
      }
    }
    if (step + 1 < params.depth) {
      frontier = best_by_value(block_values, static_cast<size_t>(K));
      for (int32_t& f : frontier) f += static_cast<int32_t>(block);
    }
  }

  // Rerank: the best budget - 1 candidates, then back in pool order (parents before children).
  std::vector<float> values(pool.size());
  for (size_t i = 0; i < pool.size(); ++i) values[i] = pool[i].value;
  std::vector<int32_t> keep;
  if (params.choose_total) {
    // The whole pool in rerank order, so that the chooser's i-th value is the i-th node kept.
    keep = best_by_value(values, values.size());
    std::vector<float> values_desc(keep.size());
    for (size_t i = 0; i < keep.size(); ++i) values_desc[i] = values[keep[i]];
    budget = std::clamp<int64_t>(params.choose_total(values_desc, max_tokens), 1, max_tokens);
    keep.resize(std::min(keep.size(), static_cast<size_t>(budget - 1)));
  } else {
    keep = best_by_value(values, static_cast<size_t>(budget - 1));
  }
  std::sort(keep.begin(), keep.end());
  std::vector<int32_t> node_of(pool.size(), -1);
  for (int32_t p : keep) {
    const Candidate& c = pool[p];
    int32_t parent = 0;
    if (c.parent >= 0) {
      parent = node_of[c.parent];
      // A child's value never exceeds its parent's and ties favour the lower (parent) index,
      // so a kept node's parent is always kept.
      if (parent < 0) fail("draft tree: kept node without its parent (internal error)");
    }
    node_of[p] = static_cast<int32_t>(tree.size());
    tree.add(c.token, parent, c.value, c.logp, c.rank);
  }
}

void build_static_tree(DraftOracle& oracle, int32_t root, const TreeChoices& choices,
                       int64_t max_tokens, DraftTree& tree) {
  tree.reset(root);
  TreeChoices sorted = choices;
  std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) {
    return a.size() != b.size() ? a.size() < b.size() : a < b;
  });
  if (static_cast<int64_t>(sorted.size()) > max_tokens - 1)
    sorted.resize(static_cast<size_t>(std::max<int64_t>(0, max_tokens - 1)));
  if (sorted.empty()) return;

  // Node of each path; node 0 is the root (the empty path).
  std::map<std::vector<int>, int32_t> node_of;
  node_of[{}] = 0;
  std::vector<int32_t> fed_of(1, -1);  // per tree node: its index in the fed list (-1: not fed)
  std::vector<FedNode> fed;
  std::vector<int32_t> tok;
  std::vector<float> lp;
  size_t i = 0;
  const size_t max_depth = sorted.back().size();
  for (size_t depth = 1; depth <= max_depth; ++depth) {
    // The paths of this depth, grouped by parent (sorted order keeps siblings together).
    size_t end = i;
    while (end < sorted.size() && sorted[end].size() == depth) ++end;
    if (i == end) break;
    int k = 0;
    std::vector<int32_t> parents;  // tree nodes to expand at this depth, in tree order
    for (size_t p = i; p < end; ++p) {
      k = std::max(k, sorted[p].back() + 1);
      std::vector<int> prefix(sorted[p].begin(), sorted[p].end() - 1);
      auto it = node_of.find(prefix);
      if (it == node_of.end()) fail("tree choices: path has no parent path listed before it");
      if (parents.empty() || parents.back() != it->second) parents.push_back(it->second);
    }
    tok.resize(static_cast<size_t>(parents.size()) * k);
    lp.resize(tok.size());
    if (depth == 1) {
      oracle.root_top_k(k, tok.data(), lp.data());
    } else {
      const size_t first = fed.size();
      for (int32_t node : parents) {
        const int32_t parent = tree.parents[node];
        fed_of[node] = static_cast<int32_t>(fed.size());
        fed.push_back({tree.tokens[node], parent == 0 ? -1 : fed_of[parent],
                       static_cast<int32_t>(depth - 1)});
      }
      oracle.expand_top_k(fed, first, k, tok.data(), lp.data());
    }
    for (size_t p = i; p < end; ++p) {
      std::vector<int> prefix(sorted[p].begin(), sorted[p].end() - 1);
      const int32_t parent = node_of[prefix];
      const size_t row = static_cast<size_t>(
          std::find(parents.begin(), parents.end(), parent) - parents.begin());
      const int rank = sorted[p].back();
      node_of[sorted[p]] = static_cast<int32_t>(tree.size());
      fed_of.push_back(-1);
      tree.add(tok[row * k + rank], parent, tree.values[parent] + lp[row * k + rank], lp[row * k + rank],
               rank);
    }
    i = end;
  }
}

const TreeChoices& mc_sim_7b_63() {
  static const TreeChoices choices = {
      {0},       {1},       {2},       {3},       {0, 0},       {0, 1},       {0, 2},
      {1, 0},    {1, 1},    {2, 0},    {2, 1},    {3, 0},       {0, 0, 0},    {0, 0, 1},
      {0, 0, 2}, {0, 1, 0}, {0, 1, 1}, {0, 2, 0}, {0, 2, 1},    {1, 0, 0},    {0, 0, 0, 0},
      {0, 0, 0, 1}, {0, 0, 0, 2}, {0, 0, 0, 0, 0}, {0, 0, 0, 0, 1}};
  return choices;
}

TreeChoices chain_choices(int depth) {
  TreeChoices c;
  std::vector<int> path;
  for (int d = 0; d <= depth; ++d) {
    path.push_back(0);
    c.push_back(path);
  }
  return c;
}

TreeChoices parse_tree_choices(const std::string& json_text, const std::string& where) {
  TreeChoices choices;
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(json_text);
  } catch (const nlohmann::json::exception&) {
    fail(where, ": tree choices are not valid JSON (expected e.g. [[0], [1], [0, 0]])");
  }
  if (!j.is_array() || j.empty())
    fail(where, ": tree choices must be a non-empty JSON list of paths, e.g. [[0], [1], [0, 0]]");
  for (const auto& path : j) {
    if (!path.is_array() || path.empty())
      fail(where, ": each tree path must be a non-empty list of sibling ranks");
    std::vector<int> p;
    for (const auto& r : path) {
      if (!r.is_number_integer() || r.get<int64_t>() < 0 || r.get<int64_t>() > 1000)
        fail(where, ": sibling ranks must be integers in [0, 1000]");
      p.push_back(r.get<int>());
    }
    choices.push_back(std::move(p));
  }
  std::map<std::vector<int>, bool> seen;
  for (const auto& p : choices) {
    if (seen.count(p)) fail(where, ": tree path ", nlohmann::json(p).dump(), " is listed twice");
    seen[p] = true;
  }
  for (const auto& p : choices) {
    std::vector<int> prefix(p.begin(), p.end() - 1);
    if (!prefix.empty() && !seen.count(prefix))
      fail(where, ": tree path ", nlohmann::json(p).dump(), " has no parent path ",
           nlohmann::json(prefix).dump());
  }
  return choices;
}

}  // namespace eagle2

// The dynamic tree builder skips frontier nodes that can no longer reach the tree (draft/
// tree_builder.h). These tests hold it to the plain EAGLE-2 algorithm, written out here without
// that shortcut: every level expands its K best, every candidate joins the pool, the rerank keeps
// the best T - 1. On random tables (with many exact ties) both must give the same tree, and the
// builder must feed fewer rows where nodes are hopeless.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <numeric>
#include <vector>

#include "draft/tree_builder.h"
#include "support/table_draft.h"

namespace eagle2 {
namespace {

using test::TableDraft;
using Children = std::vector<std::pair<int32_t, float>>;

// K children of any path, best first (log-prob descending, ties towards the lower token id), with
// log-probs on a grid of 0.25 so that values often tie exactly. Deterministic in (seed, path).
Children random_children(uint64_t seed, const std::vector<int32_t>& path, int k) {
  uint64_t h = seed * 0x9e3779b97f4a7c15ull + path.size();
  for (int32_t t : path) h = (h ^ static_cast<uint64_t>(t)) * 0x100000001b3ull + 0x7f4a7c15ull;
  Children c;
  for (int i = 0; i < k; ++i) {
    h = h * 6364136223846793005ull + 1442695040888963407ull;
    const int32_t token = 100 + 10 * i + static_cast<int32_t>((h >> 40) % 10);  // distinct
    const float logp = -0.25f * static_cast<float>((h >> 20) % 13);
    c.emplace_back(token, logp);
  }
  std::sort(c.begin(), c.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  return c;
}

// A calibration-like map: the top-ranked child confident, the others less so (like the bundled
// EAGLE-2 head's calibration at T = 0), also on a grid.
float rank_confidence(float logp, int rank) {
  return rank == 0 ? logp * 0.25f : logp - 1.0f;
}

struct Node {
  int32_t token;
  float value;
  int32_t parent;  // pool index, -1 = root
  std::vector<int32_t> path;
};

// Best n pool indices among [begin, end) by value, ties towards the lower index.
std::vector<int32_t> best(const std::vector<Node>& pool, size_t begin, size_t n) {
  std::vector<int32_t> idx(pool.size() - begin);
  std::iota(idx.begin(), idx.end(), static_cast<int32_t>(begin));
  std::stable_sort(idx.begin(), idx.end(),
                   [&](int32_t a, int32_t b) { return pool[a].value > pool[b].value; });
  idx.resize(std::min(n, idx.size()));
  return idx;
}

// Plain EAGLE-2 with a fixed budget T = min(total_tokens, max_tokens): the tree's tokens and
// parents, in pool order.
DraftTree plain_eagle2(uint64_t seed, const DynamicTreeParams& p, int64_t max_tokens, bool cal) {
  const int64_t T = std::min<int64_t>(p.total_tokens, max_tokens);
  auto conf = [&](float logp, int rank) { return cal ? rank_confidence(logp, rank) : logp; };
  std::vector<Node> pool;
  const Children root = random_children(seed, {}, p.top_k);
  for (int c = 0; c < p.top_k; ++c)
    pool.push_back({root[c].first, conf(root[c].second, c), -1, {root[c].first}});
  std::vector<int32_t> frontier(pool.size());
  std::iota(frontier.begin(), frontier.end(), 0);
  for (int e = 0; e < p.depth; ++e) {
    const size_t block = pool.size();
    for (int32_t f : frontier) {
      const Children kids = random_children(seed, pool[f].path, p.top_k);
      for (int c = 0; c < p.top_k; ++c) {
        std::vector<int32_t> path = pool[f].path;
        path.push_back(kids[c].first);
        pool.push_back({kids[c].first, pool[f].value + conf(kids[c].second, c), f, path});
      }
    }
    frontier = best(pool, block, static_cast<size_t>(p.top_k));
  }
  std::vector<int32_t> keep =
      T > 1 ? best(pool, 0, static_cast<size_t>(T - 1)) : std::vector<int32_t>{};
  std::sort(keep.begin(), keep.end());
  DraftTree tree;
  tree.tokens = {1};
  tree.parents = {-1};
  tree.values = {0.0f};
  std::vector<int32_t> slot(pool.size(), -1);
  for (int32_t i : keep) {
    slot[i] = static_cast<int32_t>(tree.tokens.size());
    tree.tokens.push_back(pool[i].token);
    tree.parents.push_back(pool[i].parent < 0 ? 0 : slot[pool[i].parent]);
    tree.values.push_back(pool[i].value);
  }
  return tree;
}

// Draft rows fed over all expansion levels of one build.
size_t expanded_rows(const TableDraft& draft) {
  size_t rows = 0;
  for (const auto& s : draft.steps)
    if (s.kind == DraftStep::Kind::Expand) rows += s.rows;
  return rows;
}

TEST(DynamicTreePruning, SameTreeAsPlainEagle2OnRandomTables) {
  int pruned_cases = 0;
  for (uint64_t seed = 1; seed <= 400; ++seed) {
    const int k = 1 + static_cast<int>(seed % 5);
    const int depth = static_cast<int>(seed / 5 % 7);
    const int total = 2 + static_cast<int>(seed * 7 % 40);
    const int64_t max_tokens = seed % 3 == 0 ? 5 : 100;
    const bool cal = seed % 2 == 0;
    const DynamicTreeParams params{k, depth, total};
    TableDraft draft(
        [&](const std::vector<int32_t>& path) { return random_children(seed, path, k); });
    if (cal) draft.confidence = rank_confidence;
    DynamicTreeBuilder builder;
    DraftTree got;
    draft.build(builder, 1, params, max_tokens, got);
    const DraftTree want = plain_eagle2(seed, params, max_tokens, cal);
    ASSERT_EQ(got.tokens, want.tokens) << "seed " << seed;
    ASSERT_EQ(got.parents, want.parents) << "seed " << seed;
    const size_t rows = expanded_rows(draft);
    if (rows < static_cast<size_t>(k) * static_cast<size_t>(depth)) ++pruned_cases;
  }
  EXPECT_GT(pruned_cases, 50);  // the shortcut was taken, not only never wrong
}

// A chosen budget may pick any T up to max_tokens: the values it chooses from (the best
// max_tokens - 1, best first) must be plain EAGLE-2's with T = max_tokens, and its pick gives the
// same tree.
TEST(DynamicTreePruning, ChosenBudgetSeesTheSameBestValues) {
  int pruned_cases = 0;
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    const int k = 2 + static_cast<int>(seed % 4);
    const DynamicTreeParams params{k, 4, 0};
    const int64_t max_tokens = 3 + static_cast<int64_t>(seed % 9);
    std::vector<float> seen;
    TableDraft draft(
        [&](const std::vector<int32_t>& path) { return random_children(seed, path, k); });
    draft.confidence = rank_confidence;
    draft.choose = [&](std::span<const float> values, int64_t m) {
      seen.assign(values.begin(), values.begin() + std::min<int64_t>(m - 1, values.size()));
      return std::max<int64_t>(1, m - static_cast<int64_t>(seed % 3));
    };
    DynamicTreeBuilder builder;
    DraftTree got;
    draft.build(builder, 1, params, max_tokens, got);
    const int64_t chosen = std::max<int64_t>(1, max_tokens - static_cast<int64_t>(seed % 3));
    const DraftTree want = plain_eagle2(seed, {k, 4, static_cast<int>(chosen)}, max_tokens, true);
    ASSERT_EQ(got.tokens, want.tokens) << "seed " << seed;
    ASSERT_EQ(got.parents, want.parents) << "seed " << seed;
    const DraftTree all =
        plain_eagle2(seed, {k, 4, static_cast<int>(max_tokens)}, max_tokens, true);
    std::vector<float> best_values(all.values.begin() + 1, all.values.end());
    std::sort(best_values.begin(), best_values.end(), std::greater<float>());
    ASSERT_EQ(seen, best_values) << "seed " << seed;
    const size_t rows = expanded_rows(draft);
    if (rows < static_cast<size_t>(k) * 4) ++pruned_cases;
  }
  EXPECT_GT(pruned_cases, 50);  // pruned against the cap, not only never wrong
}

// An auto budget's drafter may stop expanding before the depth (deeper_level_may_pay): the tree is
// then plain EAGLE-2's with that many expansions, pruned or not.
TEST(DynamicTreePruning, StoppingEarlyGivesPlainEagle2AtThatDepth) {
  int pruned_cases = 0;
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    const int k = 2 + static_cast<int>(seed % 3);
    const int stop_after = static_cast<int>(seed / 3 % 5);  // expansions drafted
    const int64_t max_tokens = 3 + static_cast<int64_t>(seed % 7);
    int asked = 0;
    TableDraft draft(
        [&](const std::vector<int32_t>& path) { return random_children(seed, path, k); });
    draft.confidence = rank_confidence;
    draft.choose = [](std::span<const float>, int64_t m) { return m; };
    draft.expand = [&](std::span<const float>, std::span<const float> frontier) {
      EXPECT_FALSE(frontier.empty());
      return asked++ < stop_after;
    };
    DynamicTreeBuilder builder;
    DraftTree got;
    draft.build(builder, 1, {k, 5, 0}, max_tokens, got);
    const DraftTree want =
        plain_eagle2(seed, {k, stop_after, static_cast<int>(max_tokens)}, max_tokens, true);
    ASSERT_EQ(got.tokens, want.tokens) << "seed " << seed;
    ASSERT_EQ(got.parents, want.parents) << "seed " << seed;
    const size_t rows = expanded_rows(draft);
    if (rows < static_cast<size_t>(k) * static_cast<size_t>(stop_after)) ++pruned_cases;
  }
  EXPECT_GT(pruned_cases, 30);  // early stops of pruned trees, not only of full ones
}

// The calibrated case that motivated it: a head whose second choices are rarely right makes an
// 8-token tree a chain, and from the third level on the second branch is hopeless: one row per
// level instead of K = 2, the same chain.
TEST(DynamicTreePruning, AChainShapedTreeFeedsOneRowPerLevel) {
  TableDraft draft([](const std::vector<int32_t>& path) {
    const int32_t base = 10 * static_cast<int32_t>(path.size() + 1);
    return Children{{base, -0.7f}, {base + 1, -0.9f}};
  });
  draft.confidence = [](float, int rank) { return rank == 0 ? -0.05f : -3.0f; };
  DynamicTreeBuilder builder;
  DraftTree tree;
  draft.build(builder, 1, {2, 6, 8}, 100, tree);
  EXPECT_EQ(tree.tokens, (std::vector<int32_t>{1, 10, 20, 30, 40, 50, 60, 70}));
  std::vector<size_t> rows;
  for (const auto& s : draft.steps)
    if (s.kind == DraftStep::Kind::Expand) rows.push_back(s.rows);
  // The first two expansions come before the pool holds 7 nodes; from the third on the second
  // branch is at or below the 7th best value (at the third it ties it): one row each.
  EXPECT_EQ(rows, (std::vector<size_t>{2, 2, 1, 1, 1, 1}));
}

// Confidences are <= 0 by contract; one a hair above 0 (a predictor's rounding) counts as 0, so a
// child never outranks its parent and the pruning's premise holds.
TEST(DynamicTreePruning, APositiveConfidenceCountsAsZero) {
  const auto children = [](const std::vector<int32_t>& path) {
    const int32_t base = 10 * static_cast<int32_t>(path.size() + 1);
    return Children{{base, -0.1f}, {base + 1, -2.0f}};
  };
  TableDraft above(children), zero(children);
  above.confidence = [](float, int rank) { return rank == 0 ? 1e-6f : -1.0f; };
  zero.confidence = [](float, int rank) { return rank == 0 ? 0.0f : -1.0f; };
  DynamicTreeBuilder b1, b2;
  DraftTree t1, t2;
  above.build(b1, 1, {2, 4, 4}, 100, t1);
  zero.build(b2, 1, {2, 4, 4}, 100, t2);
  EXPECT_EQ(t1.tokens, t2.tokens);
  EXPECT_EQ(t1.values, t2.values);
  EXPECT_EQ(t1.values, (std::vector<float>{0.0f, 0.0f, 0.0f, 0.0f}));
}

// The ablation's rankings keep nodes by other rules: nothing is skipped there.
TEST(DynamicTreePruning, TheAblationExpandsEveryFrontierNode) {
  for (const bool rerank : {true, false}) {
    DynamicTreeParams params{2, 6, 8};
    if (rerank)
      params.ranking = DynamicTreeParams::Ranking::OwnConfidence;
    else
      params.rerank = false;
    TableDraft draft([](const std::vector<int32_t>& path) {
      const int32_t base = 10 * static_cast<int32_t>(path.size() + 1);
      return Children{{base, -0.05f}, {base + 1, -3.0f}};
    });
    DynamicTreeBuilder builder;
    DraftTree tree;
    draft.build(builder, 1, params, 100, tree);
    for (const auto& s : draft.steps) {
      if (s.kind == DraftStep::Kind::Expand) {
        EXPECT_EQ(s.rows, 2u);
      }
    }
  }
}

}  // namespace
}  // namespace eagle2

// The sampled tree's best-first shape (draft/sampled_shape.h) against the plain quadratic search
// it replaced, and the static builder leaving out children a sampled q could not draw.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>

#include "draft/sampled_shape.h"
#include "draft/tree_builder.h"
#include "support/table_draft.h"

namespace eagle2 {
namespace {

// The definition, searched the plain way: the open paths in a list, the best taken each time by a
// linear scan (O(n^2 * D) per cycle, the first implementation's).
TreeChoices quadratic_sampled_shape(const std::vector<double>& log_share, int64_t nodes,
                                    size_t levels) {
  struct Open {
    double parent_key;
    std::vector<int> path;
  };
  const auto key = [&](const Open& o) {
    return o.parent_key + log_share[static_cast<size_t>(o.path.back())];
  };
  const auto better = [&](const Open& a, const Open& b) {
    if (key(a) != key(b)) return key(a) > key(b);
    if (a.path.size() != b.path.size()) return a.path.size() < b.path.size();
    return a.path < b.path;
  };
  TreeChoices shape;
  std::vector<Open> open{{0.0, {0}}};
  while (static_cast<int64_t>(shape.size()) < nodes && !open.empty()) {
    const auto best = std::min_element(open.begin(), open.end(), better);
    const Open o = *best;
    open.erase(best);
    shape.push_back(o.path);
    if (o.path.size() < levels) {
      std::vector<int> child = o.path;
      child.push_back(0);
      open.push_back({key(o), child});
    }
    if (o.path.back() + 1 < static_cast<int>(log_share.size())) {
      std::vector<int> sibling = o.path;
      ++sibling.back();
      open.push_back({o.parent_key, sibling});
    }
  }
  return shape;
}

// log_share of sibling acceptances c_i: c_i times the earlier siblings' rejections.
std::vector<double> shares_of(const std::vector<double>& acceptance) {
  std::vector<double> share;
  double rejected = 0;
  for (double c : acceptance) {
    share.push_back(rejected + std::log(c));
    rejected += std::log1p(-c);
  }
  return share;
}

TEST(SampledTreeShape, EqualsTheQuadraticSearchOnRandomAcceptances) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(0.02, 0.98);
  for (int trial = 0; trial < 300; ++trial) {
    SCOPED_TRACE(trial);
    const auto K = static_cast<size_t>(1 + trial % 5);
    const auto levels = static_cast<size_t>(1 + (trial / 5) % 8);
    const int64_t nodes = 1 + (trial * 37) % 120;
    std::vector<double> c(K);
    for (double& x : c) x = u(rng);
    // Every third trial has equal acceptances: the ties decide the order.
    if (trial % 3 == 0) std::fill(c.begin(), c.end(), 0.5);
    const std::vector<double> share = shares_of(c);
    ASSERT_EQ(sampled_tree_shape(share, nodes, levels),
              quadratic_sampled_shape(share, nodes, levels));
  }
}

TEST(SampledTreeShape, HandWorkedAndEdgeCases) {
  // Acceptances 0.8 and 0.5: shares log 0.8 and log 0.1. Keys: [0] 0.8, [0,0] 0.64,
  // [0,0,0] 0.512, [1] 0.1, [0,1] 0.08: depth first, then the first sibling of the root.
  const std::vector<double> share = shares_of({0.8, 0.5});
  EXPECT_EQ(sampled_tree_shape(share, 4, 3), (TreeChoices{{0}, {0, 0}, {0, 0, 0}, {1}}));
  // Two levels only: the siblings come in once the depth is used up.
  EXPECT_EQ(sampled_tree_shape(share, 4, 2), (TreeChoices{{0}, {0, 0}, {1}, {0, 1}}));
  EXPECT_TRUE(sampled_tree_shape(share, 0, 3).empty());
  EXPECT_TRUE(sampled_tree_shape({}, 5, 3).empty());
  // K = 2, 2 levels: 6 paths in all, whatever the budget.
  EXPECT_EQ(sampled_tree_shape(share, 100, 2).size(), 6u);
}

// A tree as large as the CLI allows (T up to the context): the shape is exact and every path's
// parent and previous sibling come before it.
TEST(SampledTreeShape, ContextSizedTreesStayValid) {
  const std::vector<double> share = shares_of({0.6, 0.5, 0.4, 0.3});
  const TreeChoices shape = sampled_tree_shape(share, 16383, 40);
  ASSERT_EQ(shape.size(), 16383u);
  std::map<std::vector<int>, size_t> at;
  for (size_t i = 0; i < shape.size(); ++i) {
    const std::vector<int>& p = shape[i];
    ASSERT_LE(p.size(), 40u);
    if (p.size() > 1) {
      auto parent = at.find(std::vector<int>(p.begin(), p.end() - 1));
      ASSERT_NE(parent, at.end()) << i;
    }
    if (p.back() > 0) {
      std::vector<int> before = p;
      --before.back();
      ASSERT_TRUE(at.count(before)) << i;
    }
    ASSERT_TRUE(at.emplace(p, i).second) << "repeated path at " << i;
  }
}

// A child answered with a token < 0 is left out with every path under it; the other nodes keep
// their ranks, and no row is fed for what was left out.
TEST(StaticTreeLeftOut, ChildrenWithoutATokenAndTheirSubtreesAreLeftOut) {
  test::TableDraft draft(test::ChildTable{
      {{}, {{10, -0.1f}, {11, -0.2f}, {-1, 0.0f}}},
      {{10}, {{20, -0.3f}, {-1, 0.0f}}},
      {{11}, {{21, -0.4f}, {22, -0.5f}}},
      {{10, 20}, {{30, -0.6f}}},
      {{11, 21}, {{31, -0.7f}}},
  });
  const TreeChoices choices = {{0},    {1},    {2},       {0, 0},    {0, 1},    {1, 0},
                               {1, 1}, {2, 0}, {0, 0, 0}, {0, 1, 0}, {1, 0, 0}, {2, 0, 0}};
  StaticTreeBuilder builder;
  DraftTree tree;
  draft.build(builder, 1, choices, 100, tree);
  EXPECT_EQ(tree.tokens, (std::vector<int32_t>{1, 10, 11, 20, 21, 22, 30, 31}));
  EXPECT_EQ(tree.parents, (std::vector<int32_t>{-1, 0, 0, 1, 2, 2, 3, 4}));
  EXPECT_EQ(tree.ranks, (std::vector<int32_t>{-1, 0, 1, 0, 0, 1, 0, 0}));
  EXPECT_EQ(draft.fed_steps, (std::vector<std::vector<int32_t>>{{10, 11}, {20, 21}}));
  // A level with nothing left ends the tree: the root's only child has none.
  test::TableDraft lone(test::ChildTable{{{}, {{10, -0.1f}}}, {{10}, {{-1, 0.0f}}}});
  DraftTree small;
  lone.build(builder, 1, TreeChoices{{0}, {0, 0}, {0, 0, 0}}, 100, small);
  EXPECT_EQ(small.tokens, (std::vector<int32_t>{1, 10}));
  EXPECT_EQ(lone.fed_steps, (std::vector<std::vector<int32_t>>{{10}}));
}

}  // namespace
}  // namespace eagle2

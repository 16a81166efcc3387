// The EAGLE-2 paper's ablation in the dynamic tree builder (docs/SPECULATIVE.md "The ablation"):
// without the value (expand and rerank by each node's own confidence) and without reranking (keep
// the nodes selected for expansion), on a scripted table where the value order and the
// own-confidence order differ, worked out by hand.
#include <gtest/gtest.h>

#include "draft/tree_builder.h"
#include "support/table_draft.h"

namespace eagle2 {
namespace {

using test::ChildTable;
using test::TableDraft;
using Ranking = DynamicTreeParams::Ranking;

// Tokens: a=10 b=11 c=12 d=13 e=14 f=15 g=16 h=17 i=18 j=19 k=20 l=21 (root 1).
// Level 1: a -0.1, b -1.0. Level 2 (own log-prob / value): c -0.2/-0.3, d -1.5/-1.6 under a;
// e -0.05/-1.05, f -0.1/-1.1 under b. By value the frontier is c, e; by own confidence e, f.
ChildTable table() {
  return {
      {{}, {{10, -0.1f}, {11, -1.0f}}},
      {{10}, {{12, -0.2f}, {13, -1.5f}}},
      {{11}, {{14, -0.05f}, {15, -0.1f}}},
      {{10, 12}, {{16, -0.3f}, {17, -2.0f}}},   // g -0.6, h -2.3
      {{10, 13}, {{22, -0.5f}, {23, -0.7f}}},   // only with inverted confidences
      {{11, 14}, {{18, -0.4f}, {19, -0.6f}}},   // i -1.45, j -1.65
      {{11, 15}, {{20, -0.01f}, {21, -3.0f}}},  // k -1.11, l -4.1
  };
}

DynamicTreeParams params(int total, Ranking ranking, bool rerank) {
  DynamicTreeParams p{2, 2, total};
  p.ranking = ranking;
  p.rerank = rerank;
  return p;
}

DraftTree build(TableDraft& draft, const DynamicTreeParams& p, int64_t max_tokens = 100) {
  DynamicTreeBuilder builder;
  DraftTree tree;
  draft.build(builder, 1, p, max_tokens, tree);
  return tree;
}

// The values a chosen budget is offered, and the tree when it answers `total`.
std::vector<float> offered(const DynamicTreeParams& p, int64_t total, DraftTree& tree,
                           std::vector<std::vector<int32_t>>* fed = nullptr) {
  TableDraft draft(table());
  std::vector<float> values;
  draft.choose = [&](std::span<const float> v, int64_t) {
    values.assign(v.begin(), v.end());
    return total;
  };
  tree = build(draft, p);
  if (fed) *fed = draft.fed_steps;
  return values;
}

void expect_values(const std::vector<float>& got, const std::vector<float>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-5f) << "value " << i;
}

// The reference for contrast: by value, expand c and e; keep the best 6: a c g b e f.
TEST(TreeAblation, EagleTwoOnTheSameTable) {
  TableDraft draft(table());
  const DraftTree tree = build(draft, params(7, Ranking::Value, true));
  EXPECT_EQ(draft.fed_steps, (std::vector<std::vector<int32_t>>{{10, 11}, {12, 14}}));
  EXPECT_EQ(tree.tokens, (std::vector<int32_t>{1, 10, 11, 12, 14, 15, 16}));
  EXPECT_EQ(tree.parents, (std::vector<int32_t>{-1, 0, 0, 1, 2, 2, 3}));
}

// Without the value: expand e and f (the highest own confidences of level 2, although c has the
// higher value), then keep best first by own confidence among nodes whose parent is kept:
// a -0.1, c -0.2, b -1.0, e -0.05, f -0.1, k -0.01: e, f and k outrank b, and are kept after it.
TEST(TreeAblation, NoValueExpandsAndKeepsByOwnConfidence) {
  TableDraft draft(table());
  const DraftTree tree = build(draft, params(7, Ranking::OwnConfidence, true));
  EXPECT_EQ(draft.fed_steps, (std::vector<std::vector<int32_t>>{{10, 11}, {14, 15}}));
  EXPECT_EQ(tree.tokens, (std::vector<int32_t>{1, 10, 11, 12, 14, 15, 20}));
  EXPECT_EQ(tree.parents, (std::vector<int32_t>{-1, 0, 0, 1, 2, 2, 5}));
  // The tree records path values (what estimates acceptance) and raw log-probs.
  EXPECT_NEAR(tree.values[6], -1.11f, 1e-5f);
  EXPECT_NEAR(tree.logps[6], -0.01f, 1e-6f);
  // A child that outranks its parent waits for it: with 2 kept, e (-0.05, second best overall)
  // is not kept, because its parent b (-1.0) is not; with 4, b comes first and then e.
  TableDraft two(table()), four(table());
  EXPECT_EQ(build(two, params(3, Ranking::OwnConfidence, true)).tokens,
            (std::vector<int32_t>{1, 10, 12}));
  const DraftTree t4 = build(four, params(5, Ranking::OwnConfidence, true));
  EXPECT_EQ(t4.tokens, (std::vector<int32_t>{1, 10, 11, 12, 14}));
  EXPECT_EQ(t4.parents, (std::vector<int32_t>{-1, 0, 0, 1, 2}));
}

// A chosen budget is offered the path values in the keep order (not sorted: j -1.65 before
// d -1.6, since j's own -0.6 beats d's -1.5); a prefix of it is what a fixed budget keeps.
TEST(TreeAblation, NoValueOffersPathValuesInItsKeepOrder) {
  DraftTree tree;
  const auto values = offered(params(60, Ranking::OwnConfidence, true), 4, tree);
  expect_values(values, {-0.1f, -0.3f, -1.0f, -1.05f, -1.1f, -1.11f, -1.45f, -1.65f, -1.6f, -4.1f});
  EXPECT_EQ(tree.tokens, (std::vector<int32_t>{1, 10, 11, 12}));  // a, c, b
}

// With calibrated confidences the ablation ranks by those (here: the top-ranked child is always
// trusted, the second never), and values sum them.
TEST(TreeAblation, NoValueRanksByCalibratedConfidence) {
  TableDraft draft(table());
  draft.confidence = [](float, int rank) { return rank == 0 ? -0.05f : -3.0f; };
  const DraftTree tree = build(draft, params(4, Ranking::OwnConfidence, true));
  // Level 2 by own confidence: c and e tie at -0.05, d and f at -3: expand c, e (lower index).
  EXPECT_EQ(draft.fed_steps, (std::vector<std::vector<int32_t>>{{10, 11}, {12, 14}}));
  // a -0.05, c -0.05, g -0.05 (c's first child).
  EXPECT_EQ(tree.tokens, (std::vector<int32_t>{1, 10, 12, 16}));
  EXPECT_NEAR(tree.values[3], -0.15f, 1e-6f);
}

// Without reranking: level 1 (a, b), the expanded c and e, then the last level's best 2 by value
// (g -0.6, i -1.45), in that order, cut at T - 1. EAGLE-2 keeps f (-1.1), never expanded, instead
// of i.
TEST(TreeAblation, NoRerankKeepsTheExpandedNodes) {
  TableDraft draft(table());
  const DraftTree tree = build(draft, params(100, Ranking::Value, false));
  EXPECT_EQ(draft.fed_steps, (std::vector<std::vector<int32_t>>{{10, 11}, {12, 14}}));
  EXPECT_EQ(tree.tokens, (std::vector<int32_t>{1, 10, 11, 12, 14, 16, 18}));
  EXPECT_EQ(tree.parents, (std::vector<int32_t>{-1, 0, 0, 1, 2, 3, 4}));
  for (const auto& [total, tokens] :
       std::vector<std::pair<int, std::vector<int32_t>>>{{2, {1, 10}},
                                                         {3, {1, 10, 11}},
                                                         {5, {1, 10, 11, 12, 14}},
                                                         {6, {1, 10, 11, 12, 14, 16}}}) {
    TableDraft cut(table());
    EXPECT_EQ(build(cut, params(total, Ranking::Value, false)).tokens, tokens) << "T " << total;
  }
  TableDraft flat(table());  // depth 0: level 1 alone
  DynamicTreeParams p0 = params(100, Ranking::Value, false);
  p0.depth = 0;
  EXPECT_EQ(build(flat, p0).tokens, (std::vector<int32_t>{1, 10, 11}));
}

TEST(TreeAblation, NoRerankOffersItsLevelOrder) {
  DraftTree tree;
  const auto values = offered(params(60, Ranking::Value, false), 4, tree);
  expect_values(values, {-0.1f, -1.0f, -0.3f, -1.05f, -0.6f, -1.45f});
  EXPECT_EQ(tree.tokens, (std::vector<int32_t>{1, 10, 11, 12}));  // a, b, c
  // Expansion stopped after level 2 (an auto budget's depth): the last level drafted is kept
  // as its best K by value, the frontier that was not fed.
  TableDraft stopped(table());
  stopped.choose = [](std::span<const float>, int64_t) { return int64_t{100}; };
  int asked = 0;
  stopped.expand = [&](std::span<const float>, std::span<const float>) { return ++asked < 2; };
  const DraftTree t = build(stopped, params(60, Ranking::Value, false));
  EXPECT_EQ(stopped.fed_steps, (std::vector<std::vector<int32_t>>{{10, 11}}));
  EXPECT_EQ(t.tokens, (std::vector<int32_t>{1, 10, 11, 12, 14}));
}

// Each level is kept best first by value, also level 1: with confidences that invert the draft's
// order b comes first, although level 1 is still fed in rank order.
TEST(TreeAblation, NoRerankOrdersLevelOneByValue) {
  TableDraft draft(table());
  draft.confidence = [](float, int rank) { return rank == 0 ? -3.0f : -0.05f; };
  const DraftTree tree = build(draft, params(2, Ranking::Value, false));
  EXPECT_EQ(draft.fed_steps.front(), (std::vector<int32_t>{10, 11}));
  EXPECT_EQ(tree.tokens, (std::vector<int32_t>{1, 11}));
}

}  // namespace
}  // namespace eagle2

// Tree builders on scripted log-prob tables, worked out by hand (EAGLE2.md section 3).
#include <gtest/gtest.h>

#include <map>

#include "core/error.h"
#include "draft/tree_builder.h"
#include "support/table_draft.h"

namespace eagle2 {
namespace {

using test::ChildTable;
using test::TableDraft;
using Table = ChildTable;

// The tree a scripted drafter gets from a dynamic builder.
// Tokens: a=10 b=11 c=12 d=13 e=14 f=15 g=16 h=17 i=18 j=19 (root 1).
Table worked_table() {
  return {
      {{}, {{10, -0.1f}, {11, -1.0f}}},       {{10}, {{12, -0.2f}, {13, -2.0f}}},
      {{11}, {{14, -0.05f}, {15, -3.0f}}},    {{10, 12}, {{16, -0.1f}, {17, -1.5f}}},
      {{11, 14}, {{18, -0.5f}, {19, -0.9f}}},
  };
}

TEST(DynamicTree, HandWorkedTree) {
  // Pool: a -0.1, b -1.0 | c -0.3, d -2.1, e -1.05, f -4.0 | g -0.4, h -1.8, i -1.55, j -1.95.
  // Frontier after step 0: c, e. Best 4: a, c, g, b -> in pool order a, b, c, g.
  // b is kept although it was not in the last frontier. e (-1.05) is in the frontier but is not
  // expanded: it already ties the 4th best value (a, c, b, e), so no child of it could be kept
  // (the reference expands it and the rerank drops its children: the same tree).
  TableDraft draft(worked_table());
  const DraftTree tree = test::dynamic_tree_of(draft, {2, 2, 5}, 100);
  EXPECT_EQ(tree.tokens, (std::vector<int32_t>{1, 10, 11, 12, 16}));
  EXPECT_EQ(tree.parents, (std::vector<int32_t>{-1, 0, 0, 1, 3}));
  EXPECT_EQ(tree.depths(), (std::vector<int32_t>{0, 1, 1, 2, 3}));
  EXPECT_NEAR(tree.values[4], -0.4f, 1e-6);
  EXPECT_EQ(draft.fed_steps, (std::vector<std::vector<int32_t>>{{10, 11}, {12}}));
}

// With a confidence map the values sum mapped log-probs, which changes what is expanded and kept;
// each node still records its raw draft log-prob. Every node's children are drafted at 0.50 and
// 0.41. Raw values keep a bushy tree (a, b, c); a map saying "the top-ranked child is nearly always
// right, the second rarely" (an under-confident head at T = 0) keeps the greedy path a, c, g.
TEST(DynamicTree, ConfidenceMapReranksAndKeepsRawLogProbs) {
  const float top = -0.7f, second = -0.9f;
  const Table t = {
      {{}, {{10, top}, {11, second}}},       {{10}, {{12, top}, {13, second}}},
      {{11}, {{14, top}, {15, second}}},     {{10, 12}, {{16, top}, {17, second}}},
      {{10, 13}, {{18, top}, {19, second}}},
  };
  const DynamicTreeParams raw{2, 2, 4};
  TableDraft d1(t);
  const DraftTree bushy = test::dynamic_tree_of(d1, raw, 100);
  EXPECT_EQ(bushy.tokens, (std::vector<int32_t>{1, 10, 11, 12}));
  EXPECT_EQ(bushy.parents, (std::vector<int32_t>{-1, 0, 0, 1}));

  TableDraft d2(t);
  d2.confidence = [](float, int rank) { return rank == 0 ? -0.05f : -3.0f; };
  const DraftTree chain = test::dynamic_tree_of(d2, raw, 100);
  EXPECT_EQ(chain.tokens, (std::vector<int32_t>{1, 10, 12, 16}));
  EXPECT_EQ(chain.parents, (std::vector<int32_t>{-1, 0, 1, 2}));
  EXPECT_NEAR(chain.values[3], -0.15f, 1e-6);
  EXPECT_EQ(chain.logps, (std::vector<float>{0.0f, top, top, top}));
  EXPECT_EQ(bushy.logps, (std::vector<float>{0.0f, top, second, top}));
  EXPECT_EQ(bushy.ranks, (std::vector<int32_t>{-1, 0, 1, 0}));
}

TEST(DynamicTree, BudgetCapsTheTreeAndKeepsItConnected) {
  TableDraft draft(worked_table());
  const DraftTree tree =
      test::dynamic_tree_of(draft, {2, 2, 100}, 7);  // max_tokens 7: best 6 of 10
  // a -0.1, c -0.3, g -0.4, b -1.0, e -1.05, i -1.55 -> pool order a b c e g i.
  EXPECT_EQ(tree.tokens, (std::vector<int32_t>{1, 10, 11, 12, 14, 16, 18}));
  EXPECT_EQ(tree.parents, (std::vector<int32_t>{-1, 0, 0, 1, 2, 3, 4}));
  TableDraft none(worked_table());
  const DraftTree root_only = test::dynamic_tree_of(none, {2, 2, 100}, 1);
  EXPECT_EQ(root_only.tokens, (std::vector<int32_t>{1}));
  EXPECT_TRUE(none.steps.empty());  // no room: the head is not even run
}

TEST(DynamicTree, TiesPreferTheLowerPoolIndex) {
  // x and y tie at level 1; their children tie too: the rerank keeps x's child (lower index).
  Table t = {
      {{}, {{20, -0.5f}, {21, -0.5f}}},
      {{20}, {{22, -0.2f}, {23, -3.0f}}},
      {{21}, {{24, -0.2f}, {25, -3.0f}}},
  };
  TableDraft draft(t);
  const DraftTree tree = test::dynamic_tree_of(draft, {2, 1, 4}, 100);
  EXPECT_EQ(tree.tokens, (std::vector<int32_t>{1, 20, 21, 22}));
  EXPECT_EQ(tree.parents, (std::vector<int32_t>{-1, 0, 0, 1}));
}

TEST(DynamicTree, FrontierIsOrderedByValueThenIndex) {
  // Step 0's block: c0 -1.0, c1 -0.5 (from p), c2 -0.5, c3 -2 (from q): frontier = c1, c2 (tie
  // broken by index), fed in that order.
  Table t = {
      {{}, {{30, -0.1f}, {31, -0.2f}}},       {{30}, {{32, -0.9f}, {33, -0.4f}}},
      {{31}, {{34, -0.3f}, {35, -1.8f}}},     {{30, 33}, {{36, -0.1f}, {37, -0.2f}}},
      {{31, 34}, {{38, -0.1f}, {39, -0.2f}}},
  };
  TableDraft draft(t);
  const DraftTree tree = test::dynamic_tree_of(draft, {2, 2, 100}, 100);
  ASSERT_EQ(draft.fed_steps.size(), 2u);
  EXPECT_EQ(draft.fed_steps[1], (std::vector<int32_t>{33, 34}));
  EXPECT_EQ(tree.size(), 11);  // everything kept: root + 2 + 4 + 4
}

// The builder drives nothing: it asks, step by step, for what the drafter must run through the
// draft model, and the drafter answers. The root's K children first, then each expansion's K
// frontier nodes (fed after the earlier ones), then the tree.
TEST(DynamicTree, AsksForTheRootThenEachExpansion) {
  TableDraft draft(worked_table());
  test::dynamic_tree_of(draft, {2, 2, 11},
                        100);  // room for the whole pool: every frontier node is fed
  using Kind = DraftStep::Kind;
  ASSERT_EQ(draft.steps.size(), 3u);
  EXPECT_EQ(draft.steps[0].kind, Kind::RootChildren);
  EXPECT_EQ(draft.steps[0].rows, 1u);
  EXPECT_EQ(draft.steps[0].k, 2);
  for (size_t s = 1; s < 3; ++s) {
    EXPECT_EQ(draft.steps[s].kind, Kind::Expand);
    EXPECT_EQ(draft.steps[s].first, 2 * (s - 1));
    EXPECT_EQ(draft.steps[s].rows, 2u);
    EXPECT_EQ(draft.steps[s].k, 2);
  }
  // Depth 0: the root's children alone, no node fed.
  TableDraft flat(worked_table());
  const DraftTree tree = test::dynamic_tree_of(flat, {2, 0, 5}, 100);
  ASSERT_EQ(flat.steps.size(), 1u);
  EXPECT_EQ(tree.tokens, (std::vector<int32_t>{1, 10, 11}));
}

TEST(DynamicTree, OneBuilderServesCycleAfterCycle) {
  DynamicTreeBuilder builder;
  DraftTree first, second;
  TableDraft d1(worked_table()), d2(worked_table());
  d1.build(builder, 1, {2, 2, 7}, 100, first);
  d2.build(builder, 1, {2, 2, 7}, 100, second);
  EXPECT_EQ(first.tokens, second.tokens);
  EXPECT_EQ(first.parents, second.parents);
  EXPECT_EQ(d1.steps.size(), d2.steps.size());
}

TEST(DynamicTree, AnswersOfTheWrongShapeOrOutOfTurnAreErrors) {
  DynamicTreeBuilder builder;
  const std::vector<int32_t> tokens = {10, 11, 12};
  const std::vector<float> logp = {-0.1f, -0.2f, -0.3f};
  DraftTree tree;
  EXPECT_THROW(builder.finish(tree), Error);  // never started
  builder.start(1, {2, 2, 5}, 100);
  EXPECT_THROW(builder.supply(tokens, logp), Error);  // 3 children where 2 were asked for
  EXPECT_THROW(builder.choose_budget(4), Error);      // no budget asked for
  EXPECT_THROW(builder.finish(tree), Error);          // not done
  builder.supply(std::span(tokens).first(2), std::span(logp).first(2));
  EXPECT_EQ(builder.next().kind, DraftStep::Kind::Expand);
  const std::vector<int32_t> four = {12, 13, 14, 15};
  const std::vector<float> four_logp = {-0.1f, -0.2f, -0.3f, -0.4f};
  EXPECT_THROW(builder.supply(four, four_logp, std::span(four_logp).first(1)), Error);
  builder.supply(four, four_logp, four_logp);  // the right shape is still taken
}

TEST(StaticTree, AsksLevelByLevelForTheWidestRankOfTheLevel) {
  TableDraft draft(TableDraft::Children([](const std::vector<int32_t>& path) {
    std::vector<std::pair<int32_t, float>> row;
    for (int r = 0; r < 4; ++r)
      row.emplace_back(100 * static_cast<int32_t>(path.size() + 1) + r, -0.1f * (r + 1));
    return row;
  }));
  StaticTreeBuilder builder;
  DraftTree tree;
  draft.build(builder, 1, mc_sim_7b_63(), 100, tree);
  // mc_sim_7b_63: level 1 ranks 0-3 under the root; level 2 under the 4 level-1 nodes, ranks 0-2;
  // level 3 under [0,0] [0,1] [0,2] [1,0], ranks 0-2; then [0,0,0] (ranks 0-2), [0,0,0,0] (0-1).
  const std::vector<std::pair<size_t, int>> want = {{1, 4}, {4, 3}, {4, 3}, {1, 3}, {1, 2}};
  ASSERT_EQ(draft.steps.size(), want.size());
  size_t fed = 0;
  for (size_t s = 0; s < want.size(); ++s) {
    SCOPED_TRACE(s);
    EXPECT_EQ(draft.steps[s].kind,
              s == 0 ? DraftStep::Kind::RootChildren : DraftStep::Kind::Expand);
    EXPECT_EQ(draft.steps[s].rows, want[s].first);
    EXPECT_EQ(draft.steps[s].k, want[s].second);
    if (s > 0) {
      EXPECT_EQ(draft.steps[s].first, fed);
      fed += draft.steps[s].rows;
    }
  }
}

TEST(StaticTree, McSim7b63HasTheReferenceShape) {
  const TreeChoices& c = mc_sim_7b_63();
  EXPECT_EQ(c.size(), 25u);
  // A scripted draft that gives child r of a node at depth d the token 100 * (d + 1) + r.
  TableDraft draft(TableDraft::Children([](const std::vector<int32_t>& path) {
    std::vector<std::pair<int32_t, float>> row;
    for (int r = 0; r < 4; ++r)
      row.emplace_back(100 * static_cast<int32_t>(path.size() + 1) + r, -0.1f * (r + 1));
    return row;
  }));
  StaticTreeBuilder builder;
  DraftTree tree;
  draft.build(builder, 1, c, 100, tree);
  ASSERT_EQ(tree.size(), 26);
  // Node order = paths sorted by (length, ranks): [0] [1] [2] [3] [0,0] [0,1] [0,2] [1,0] ...
  EXPECT_EQ(std::vector<int32_t>(tree.parents.begin(), tree.parents.begin() + 13),
            (std::vector<int32_t>{-1, 0, 0, 0, 0, 1, 1, 1, 2, 2, 3, 3, 4}));
  EXPECT_EQ(std::vector<int32_t>(tree.tokens.begin(), tree.tokens.begin() + 8),
            (std::vector<int32_t>{1, 100, 101, 102, 103, 200, 201, 202}));
  EXPECT_NEAR(tree.values[6], -0.1f + -0.2f, 1e-6);  // path [0, 1]
  const auto depths = tree.depths();
  EXPECT_EQ(*std::max_element(depths.begin(), depths.end()), 5);
  // A budget keeps the first paths in that order.
  DraftTree small;
  draft.build(builder, 1, c, 6, small);
  EXPECT_EQ(small.size(), 6);
}

TEST(StaticTree, ChainIsTopOneAtEveryLevel) {
  TableDraft draft(
      ChildTable{{{}, {{10, -0.1f}}}, {{10}, {{12, -0.2f}}}, {{10, 12}, {{16, -0.1f}}}});
  StaticTreeBuilder builder;
  DraftTree tree;
  draft.build(builder, 1, chain_choices(2), 100, tree);
  EXPECT_EQ(tree.tokens, (std::vector<int32_t>{1, 10, 12, 16}));
  EXPECT_EQ(tree.parents, (std::vector<int32_t>{-1, 0, 1, 2}));
}

TEST(TreeChoices, ParsingAndErrors) {
  EXPECT_EQ(parse_tree_choices("[[0], [1], [0, 0]]", "x"), (TreeChoices{{0}, {1}, {0, 0}}));
  auto err = [](const std::string& text) {
    try {
      parse_tree_choices(text, "--choices");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(err("[[0], [0, 1, 0]]"), "--choices: tree path [0,1,0] has no parent path [0,1]");
  EXPECT_EQ(err("[[0], [0]]"), "--choices: tree path [0] is listed twice");
  EXPECT_EQ(err("[[0], [-1]]"), "--choices: sibling ranks must be integers in [0, 1000]");
  EXPECT_EQ(err("{"),
            "--choices: tree choices are not valid JSON (expected e.g. [[0], [1], [0, 0]])");
  EXPECT_EQ(
      err("[]"),
      "--choices: tree choices must be a non-empty JSON list of paths, e.g. [[0], [1], [0, 0]]");
  EXPECT_EQ(err("[[]]"), "--choices: each tree path must be a non-empty list of sibling ranks");
}

}  // namespace
}  // namespace eagle2

// Tree builders on scripted log-prob tables, worked out by hand (EAGLE2.md section 3).
#include <gtest/gtest.h>

#include <map>

#include "core/error.h"
#include "draft/tree_builder.h"

namespace eagle2 {
namespace {

// children[path of tokens from the root (excluded)] = {(token, logp)...} best first.
using Table = std::map<std::vector<int32_t>, std::vector<std::pair<int32_t, float>>>;

class ScriptedOracle : public DraftOracle {
 public:
  explicit ScriptedOracle(Table t) : table_(std::move(t)) {}
  void root_top_k(int k, int32_t* tokens, float* logp) override { fill({}, k, tokens, logp); }
  void expand_top_k(const std::vector<FedNode>& nodes, size_t first, int k, int32_t* tokens,
                    float* logp) override {
    std::vector<int32_t> step;
    for (size_t i = first; i < nodes.size(); ++i) {
      std::vector<int32_t> path;
      for (int32_t f = static_cast<int32_t>(i); f >= 0; f = nodes[f].parent_fed)
        path.insert(path.begin(), nodes[f].token);
      EXPECT_EQ(static_cast<size_t>(nodes[i].depth), path.size()) << "depth of fed node " << i;
      fill(path, k, tokens + (i - first) * k, logp + (i - first) * k);
      step.push_back(nodes[i].token);
    }
    fed_steps.push_back(step);
  }
  std::vector<std::vector<int32_t>> fed_steps;  // tokens fed at each expansion, in order

 private:
  void fill(const std::vector<int32_t>& path, int k, int32_t* tokens, float* logp) {
    auto it = table_.find(path);
    ASSERT_NE(it, table_.end()) << "no scripted children for a path of length " << path.size();
    ASSERT_GE(static_cast<int>(it->second.size()), k);
    for (int i = 0; i < k; ++i) {
      tokens[i] = it->second[i].first;
      logp[i] = it->second[i].second;
    }
  }
  Table table_;
};

// Tokens: a=10 b=11 c=12 d=13 e=14 f=15 g=16 h=17 i=18 j=19 (root 1).
Table worked_table() {
  return {
      {{}, {{10, -0.1f}, {11, -1.0f}}},
      {{10}, {{12, -0.2f}, {13, -2.0f}}},
      {{11}, {{14, -0.05f}, {15, -3.0f}}},
      {{10, 12}, {{16, -0.1f}, {17, -1.5f}}},
      {{11, 14}, {{18, -0.5f}, {19, -0.9f}}},
  };
}

TEST(DynamicTree, HandWorkedTree) {
  // Pool: a -0.1, b -1.0 | c -0.3, d -2.1, e -1.05, f -4.0 | g -0.4, h -1.8, i -1.55, j -1.95.
  // Frontier after step 0: c, e. Best 4: a, c, g, b -> in pool order a, b, c, g.
  // e was expanded but the rerank drops it and its children; b is kept although it was not in
  // the last frontier.
  ScriptedOracle oracle(worked_table());
  DraftTree tree;
  build_dynamic_tree(oracle, 1, {2, 2, 5}, 100, tree);
  EXPECT_EQ(tree.tokens, (std::vector<int32_t>{1, 10, 11, 12, 16}));
  EXPECT_EQ(tree.parents, (std::vector<int32_t>{-1, 0, 0, 1, 3}));
  EXPECT_EQ(tree.depths(), (std::vector<int32_t>{0, 1, 1, 2, 3}));
  EXPECT_NEAR(tree.values[4], -0.4f, 1e-6);
  EXPECT_EQ(oracle.fed_steps, (std::vector<std::vector<int32_t>>{{10, 11}, {12, 14}}));
}

// With a confidence map the values sum mapped log-probs, which changes what is expanded and kept;
// each node still records its raw draft log-prob. Every node's children are drafted at 0.50 and
// 0.41. Raw values keep a bushy tree (a, b, c); a map saying "the top-ranked child is nearly always
// right, the second rarely" (an under-confident head at T = 0) keeps the greedy path a, c, g.
TEST(DynamicTree, ConfidenceMapReranksAndKeepsRawLogProbs) {
  const float top = -0.7f, second = -0.9f;
  const Table t = {
      {{}, {{10, top}, {11, second}}},
      {{10}, {{12, top}, {13, second}}},
      {{11}, {{14, top}, {15, second}}},
      {{10, 12}, {{16, top}, {17, second}}},
      {{10, 13}, {{18, top}, {19, second}}},
  };
  const DynamicTreeParams raw{2, 2, 4};
  ScriptedOracle o1(t);
  DraftTree bushy;
  build_dynamic_tree(o1, 1, raw, 100, bushy);
  EXPECT_EQ(bushy.tokens, (std::vector<int32_t>{1, 10, 11, 12}));
  EXPECT_EQ(bushy.parents, (std::vector<int32_t>{-1, 0, 0, 1}));

  DynamicTreeParams calibrated = raw;
  calibrated.confidence = [](float, int rank) { return rank == 0 ? -0.05f : -3.0f; };
  ScriptedOracle o2(t);
  DraftTree chain;
  build_dynamic_tree(o2, 1, calibrated, 100, chain);
  EXPECT_EQ(chain.tokens, (std::vector<int32_t>{1, 10, 12, 16}));
  EXPECT_EQ(chain.parents, (std::vector<int32_t>{-1, 0, 1, 2}));
  EXPECT_NEAR(chain.values[3], -0.15f, 1e-6);
  EXPECT_EQ(chain.logps, (std::vector<float>{0.0f, top, top, top}));
  EXPECT_EQ(bushy.logps, (std::vector<float>{0.0f, top, second, top}));
  EXPECT_EQ(bushy.ranks, (std::vector<int32_t>{-1, 0, 1, 0}));
}

TEST(DynamicTree, BudgetCapsTheTreeAndKeepsItConnected) {
  ScriptedOracle oracle(worked_table());
  DraftTree tree;
  build_dynamic_tree(oracle, 1, {2, 2, 100}, 7, tree);  // max_tokens 7: best 6 of 10
  // a -0.1, c -0.3, g -0.4, b -1.0, e -1.05, i -1.55 -> pool order a b c e g i.
  EXPECT_EQ(tree.tokens, (std::vector<int32_t>{1, 10, 11, 12, 14, 16, 18}));
  EXPECT_EQ(tree.parents, (std::vector<int32_t>{-1, 0, 0, 1, 2, 3, 4}));
  DraftTree root_only;
  build_dynamic_tree(oracle, 1, {2, 2, 100}, 1, root_only);
  EXPECT_EQ(root_only.tokens, (std::vector<int32_t>{1}));
}

TEST(DynamicTree, TiesPreferTheLowerPoolIndex) {
  // x and y tie at level 1; their children tie too: the rerank keeps x's child (lower index).
  Table t = {
      {{}, {{20, -0.5f}, {21, -0.5f}}},
      {{20}, {{22, -0.2f}, {23, -3.0f}}},
      {{21}, {{24, -0.2f}, {25, -3.0f}}},
  };
  ScriptedOracle oracle(t);
  DraftTree tree;
  build_dynamic_tree(oracle, 1, {2, 1, 4}, 100, tree);
  EXPECT_EQ(tree.tokens, (std::vector<int32_t>{1, 20, 21, 22}));
  EXPECT_EQ(tree.parents, (std::vector<int32_t>{-1, 0, 0, 1}));
}

TEST(DynamicTree, FrontierIsOrderedByValueThenIndex) {
  // Step 0's block: c0 -1.0, c1 -0.5 (from p), c2 -0.5, c3 -2 (from q): frontier = c1, c2 (tie
  // broken by index), fed in that order.
  Table t = {
      {{}, {{30, -0.1f}, {31, -0.2f}}},
      {{30}, {{32, -0.9f}, {33, -0.4f}}},
      {{31}, {{34, -0.3f}, {35, -1.8f}}},
      {{30, 33}, {{36, -0.1f}, {37, -0.2f}}},
      {{31, 34}, {{38, -0.1f}, {39, -0.2f}}},
  };
  ScriptedOracle oracle(t);
  DraftTree tree;
  build_dynamic_tree(oracle, 1, {2, 2, 100}, 100, tree);
  ASSERT_EQ(oracle.fed_steps.size(), 2u);
  EXPECT_EQ(oracle.fed_steps[1], (std::vector<int32_t>{33, 34}));
  EXPECT_EQ(tree.size(), 11);  // everything kept: root + 2 + 4 + 4
}

TEST(StaticTree, McSim7b63HasTheReferenceShape) {
  const TreeChoices& c = mc_sim_7b_63();
  EXPECT_EQ(c.size(), 25u);
  // A scripted oracle that gives child r of any node the token 100 * depth + r.
  struct RankOracle : DraftOracle {
    void root_top_k(int k, int32_t* tokens, float* logp) override {
      for (int r = 0; r < k; ++r) tokens[r] = 100 + r, logp[r] = -0.1f * (r + 1);
    }
    void expand_top_k(const std::vector<FedNode>& nodes, size_t first, int k, int32_t* tokens,
                      float* logp) override {
      for (size_t i = first; i < nodes.size(); ++i)
        for (int r = 0; r < k; ++r) {
          tokens[(i - first) * k + r] = 100 * (nodes[i].depth + 1) + r;
          logp[(i - first) * k + r] = -0.1f * (r + 1);
        }
    }
  } oracle;
  DraftTree tree;
  build_static_tree(oracle, 1, c, 100, tree);
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
  build_static_tree(oracle, 1, c, 6, small);
  EXPECT_EQ(small.size(), 6);
}

TEST(StaticTree, ChainIsTopOneAtEveryLevel) {
  ScriptedOracle oracle({{{}, {{10, -0.1f}}}, {{10}, {{12, -0.2f}}}, {{10, 12}, {{16, -0.1f}}}});
  DraftTree tree;
  build_static_tree(oracle, 1, chain_choices(2), 100, tree);
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
  EXPECT_EQ(err("{"), "--choices: tree choices are not valid JSON (expected e.g. [[0], [1], [0, 0]])");
  EXPECT_EQ(err("[]"),
            "--choices: tree choices must be a non-empty JSON list of paths, e.g. [[0], [1], [0, 0]]");
  EXPECT_EQ(err("[[]]"), "--choices: each tree path must be a non-empty list of sibling ranks");
}

}  // namespace
}  // namespace eagle2

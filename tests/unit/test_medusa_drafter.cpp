// Medusa's tree (draft/product_tree.h) on scripted head outputs, against a brute-force enumeration
// of the product space; and the Medusa drafter (speculative/medusa_drafter.h): which feature the
// heads read, the tree it builds from them, the spec, and its errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <tuple>
#include <vector>

#include "core/error.h"
#include "draft/draft_tree.h"
#include "draft/product_tree.h"
#include "speculative/drafter_spec.h"
#include "speculative/eagle_drafter.h"
#include "speculative/medusa_drafter.h"
#include "support/errors.h"
#include "support/medusa_heads.h"
#include "support/random_models.h"

namespace eagle2 {
namespace {

using test::error_of;

struct Levels {
  int depth, k;
  std::vector<int32_t> tokens;
  std::vector<float> logps;
  ProductLevels view() const { return {depth, k, tokens, logps}; }
};

// Random sorted levels; `ties` draws log-probs from a few values so that equal values are common.
Levels random_levels(int depth, int k, uint32_t seed, bool ties) {
  std::mt19937 rng(seed);
  Levels l{depth, k, {}, {}};
  for (int d = 0; d < depth; ++d) {
    std::vector<float> row(static_cast<size_t>(k));
    for (float& v : row)
      v = ties ? -0.5f * static_cast<float>(rng() % 4)
               : -std::uniform_real_distribution<float>(0, 4)(rng);
    std::sort(row.rbegin(), row.rend());
    for (int r = 0; r < k; ++r) {
      l.tokens.push_back(static_cast<int32_t>(100 * d + 7 * r + 1));
      l.logps.push_back(row[static_cast<size_t>(r)]);
    }
  }
  return l;
}

// Every path of the product space, sorted by the documented order; the first n, as (value, ranks).
std::vector<std::pair<float, std::vector<int32_t>>> brute_force(const Levels& l, size_t n) {
  std::vector<std::pair<float, std::vector<int32_t>>> all;
  std::vector<std::pair<float, std::vector<int32_t>>> frontier = {{0.0f, {}}};
  for (int d = 0; d < l.depth; ++d) {
    std::vector<std::pair<float, std::vector<int32_t>>> next;
    for (const auto& [v, ranks] : frontier)
      for (int r = 0; r < l.k; ++r) {
        std::vector<int32_t> p = ranks;
        p.push_back(r);
        next.push_back({v + l.logps[static_cast<size_t>(d * l.k + r)], p});
      }
    all.insert(all.end(), next.begin(), next.end());
    frontier = next;
  }
  std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) {
    if (a.first != b.first) return a.first > b.first;
    if (a.second.size() != b.second.size()) return a.second.size() < b.second.size();
    return a.second < b.second;
  });
  all.resize(std::min(n, all.size()));
  return all;
}

// The ranks path of each tree node (root: empty), from parents and ranks.
std::vector<std::vector<int32_t>> paths_of(const DraftTree& t) {
  std::vector<std::vector<int32_t>> p(static_cast<size_t>(t.size()));
  for (int64_t i = 1; i < t.size(); ++i) {
    p[static_cast<size_t>(i)] = p[static_cast<size_t>(t.parents[static_cast<size_t>(i)])];
    p[static_cast<size_t>(i)].push_back(t.ranks[static_cast<size_t>(i)]);
  }
  return p;
}

TEST(ProductTree, IsTheBestNodesOfTheProductSpaceInOrder) {
  int checked = 0;
  for (uint32_t seed = 1; seed <= 60; ++seed) {
    const int depth = 1 + static_cast<int>(seed % 4), k = 1 + static_cast<int>(seed % 5);
    const Levels l = random_levels(depth, k, seed, seed % 3 == 0);
    for (int64_t T : {1, 2, 5, 9, 30, 400}) {
      DraftTree tree;
      build_product_tree(42, l.view(), T, tree);
      validate_draft_tree(tree, 1000, "product tree");
      const auto want = brute_force(l, static_cast<size_t>(T - 1));
      ASSERT_EQ(tree.size(), static_cast<int64_t>(want.size()) + 1)
          << "seed " << seed << " T " << T;
      EXPECT_EQ(tree.tokens[0], 42);
      const auto paths = paths_of(tree);
      for (size_t i = 0; i < want.size(); ++i) {
        // Node i + 1 is the (i + 1)-th best path: pop order is the ranking itself.
        EXPECT_EQ(paths[i + 1], want[i].second)
            << "seed " << seed << " T " << T << " node " << i + 1;
        EXPECT_EQ(tree.values[i + 1], want[i].first);
        const size_t d = want[i].second.size();
        const auto r = static_cast<size_t>(want[i].second.back());
        EXPECT_EQ(tree.tokens[i + 1], l.tokens[(d - 1) * static_cast<size_t>(k) + r]);
        EXPECT_EQ(tree.logps[i + 1], l.logps[(d - 1) * static_cast<size_t>(k) + r]);
      }
      // Siblings come in rank order (the order sampling verification tries them).
      const auto kids = children_of(tree);
      for (const auto& c : kids)
        for (size_t j = 1; j < c.size(); ++j)
          EXPECT_LT(tree.ranks[static_cast<size_t>(c[j - 1])],
                    tree.ranks[static_cast<size_t>(c[j])]);
      ++checked;
    }
  }
  EXPECT_EQ(checked, 360);
}

TEST(ProductTree, ConfidentHeadsGiveAChainUnsureOnesAFan) {
  // Sure heads (log-prob 0 for the first choice): the best nodes are the chain of first choices.
  Levels sure{3, 3, {1, 2, 3, 4, 5, 6, 7, 8, 9}, {0, -5, -6, 0, -5, -6, 0, -5, -6}};
  DraftTree tree;
  build_product_tree(0, sure.view(), 4, tree);
  EXPECT_EQ(tree.tokens, (std::vector<int32_t>{0, 1, 4, 7}));
  EXPECT_EQ(tree.parents, (std::vector<int32_t>{-1, 0, 1, 2}));
  // An unsure first head, a sure second: siblings at depth 1, each followed by the second head's
  // first choice (its tokens are the same whatever the parent: the heads do not see the path).
  Levels fan{2, 3, {1, 2, 3, 4, 5, 6}, {-1.0f, -1.1f, -1.2f, 0.0f, -9.0f, -9.5f}};
  build_product_tree(0, fan.view(), 7, tree);
  EXPECT_EQ(tree.tokens, (std::vector<int32_t>{0, 1, 1 + 3, 2, 4, 3, 4}));
  EXPECT_EQ(tree.parents, (std::vector<int32_t>{-1, 0, 1, 0, 3, 0, 5}));
}

TEST(ProductTree, MalformedLevelsAreErrors) {
  DraftTree tree;
  Levels unsorted{1, 2, {1, 2}, {-2.0f, -1.0f}};
  EXPECT_THROW(build_product_tree(0, unsorted.view(), 3, tree), Error);
  Levels positive{1, 2, {1, 2}, {0.5f, -1.0f}};
  EXPECT_THROW(build_product_tree(0, positive.view(), 3, tree), Error);
  Levels nan{1, 1, {1}, {std::nanf("")}};
  EXPECT_THROW(build_product_tree(0, nan.view(), 3, tree), Error);
  Levels short_rows{2, 2, {1, 2, 3}, {-1, -1, -1}};
  EXPECT_THROW(build_product_tree(0, short_rows.view(), 3, tree), Error);
}

// A predictor whose head k answers with a fixed row, recording the features it was given.
class FixedPredictor : public MedusaPredictor {
 public:
  FixedPredictor(int heads, int64_t d, int64_t V, std::vector<float>* seen)
      : heads_(heads), d_(d), V_(V), seen_(seen) {}
  int num_heads() const override { return heads_; }
  int64_t hidden_size() const override { return d_; }
  int64_t vocab_size() const override { return V_; }
  void predict(const float* feature, float* out, ThreadPool&) override {
    seen_->assign(feature, feature + d_);
    for (int k = 0; k < heads_; ++k)
      for (int64_t v = 0; v < V_; ++v)
        out[k * V_ + v] =
            -0.1f * static_cast<float>((v + 3 * k) % V_) - 0.01f * static_cast<float>(k);
  }

 private:
  int heads_;
  int64_t d_, V_;
  std::vector<float>* seen_;
};

TEST(MedusaDrafter, ReadsTheRootsParentFeatureAndDraftsTheProductTree) {
  ThreadPool pool(1);
  const int64_t d = 4, V = 6;
  std::vector<float> seen;
  MedusaDrafter drafter(std::make_unique<FixedPredictor>(2, d, V, &seen), pool, 5);
  EXPECT_EQ(drafter.name(), "medusa");
  // Prompt of 3 tokens: features f_0..f_2; the root came from f_2.
  const std::vector<int32_t> prompt = {1, 2, 3};
  std::vector<float> features(3 * d);
  for (size_t i = 0; i < features.size(); ++i) features[i] = static_cast<float>(i);
  drafter.begin(prompt, features.data(), 5);
  DraftTree tree;
  drafter.draft(100, tree);
  EXPECT_EQ(seen, std::vector<float>(features.begin() + 2 * d, features.end()));
  // Head 1's row ranks token 0 first, head 2's ranks token 3 first (v + 3 = 0 mod 6).
  std::vector<float> logp(2 * V);
  std::vector<float> f(d, 0.0f);
  FixedPredictor(2, d, V, &seen).predict(f.data(), logp.data(), pool);
  std::vector<int32_t> top(8);
  std::vector<float> top_lp(8);
  for (int k = 0; k < 2; ++k) top_k_of(&logp[k * V], V, 4, &top[k * 4], &top_lp[k * 4]);
  DraftTree want;
  build_product_tree(5, ProductLevels{2, 4, top, top_lp}, 5, want);
  EXPECT_EQ(tree.tokens, want.tokens);
  EXPECT_EQ(tree.parents, want.parents);
  EXPECT_EQ(tree.tokens[0], 5);
  EXPECT_EQ(tree.tokens[1], 0);
  // After a cycle: the last accepted node's feature (path row 1 of 2), the bonus as the root.
  std::vector<float> path_features(2 * d);
  for (size_t i = 0; i < path_features.size(); ++i)
    path_features[i] = 100.0f + static_cast<float>(i);
  drafter.accept(tree, std::vector<int32_t>{0, 1}, path_features.data(), 4);
  drafter.draft(3, tree);  // room for 3 tokens only
  EXPECT_EQ(seen, std::vector<float>(path_features.begin() + d, path_features.end()));
  EXPECT_EQ(tree.size(), 3);
  EXPECT_EQ(tree.tokens[0], 4);
  drafter.draft(1, tree);  // the end of the context: the root alone
  EXPECT_EQ(tree.size(), 1);
}

TEST(MedusaDrafter, Errors) {
  ThreadPool pool(1);
  std::vector<float> seen;
  EXPECT_THROW(MedusaDrafter(std::make_unique<FixedPredictor>(1, 2, 3, &seen), pool, 0), Error);
  MedusaDrafter d(std::make_unique<FixedPredictor>(1, 2, 3, &seen), pool, 4);
  DraftTree tree;
  EXPECT_EQ(error_of([&] { d.draft(8, tree); }), "medusa drafter: draft() before begin()");
  const std::vector<int32_t> prompt = {1};
  EXPECT_EQ(error_of([&] { d.begin(prompt, nullptr, 1); }),
            "medusa drafter: begin() without the target's features");
  // k = min(T - 1, V): a vocabulary of 3 with T = 8 still drafts (3 per level at most).
  MedusaDrafter wide(std::make_unique<FixedPredictor>(1, 2, 3, &seen), pool, 8);
  const std::vector<float> f = {0.0f, 0.0f};
  wide.begin(prompt, f.data(), 1);
  wide.draft(8, tree);
  EXPECT_EQ(tree.size(), 4);
}

// Through the spec, on a random target and random heads: loaded once per engine (DraftAssets),
// and a clear error without a target.
TEST(MedusaDrafter, MadeFromItsSpecWithHeadsLoadedOncePerEngine) {
  auto target = test::load_random_model("medusa-spec", test::tiny_config(), DType::F32, 3);
  const std::string dir = test::write_random_heads("spec", *target, {});
  ThreadPool pool(1);
  DraftPolicies policies(nullptr, target.get());
  const DrafterSpec spec = parse_drafter_spec("medusa:" + dir + ":6");
  auto a = make_drafter(spec, nullptr, pool, 64, policies, 0.0f);
  auto b = make_drafter(spec, nullptr, pool, 64, policies, 0.7f);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->name(), "medusa");
  EXPECT_EQ(policies.assets().size(), 1u);
  const std::vector<int32_t> prompt = {1, 5, 9};
  std::vector<float> features(3 * 64, 0.25f);
  a->begin(prompt, features.data(), 7);
  DraftTree tree;
  a->draft(64, tree);
  EXPECT_EQ(tree.size(), 6);
  validate_draft_tree(tree, target->config().vocab_size, "medusa");
  DraftPolicies no_target;
  EXPECT_EQ(error_of([&] { make_drafter(spec, nullptr, pool, 64, no_target, 0.0f); }),
            "drafter 'medusa:" + dir + ":6' needs the target model");
  // Hydra heads named as Medusa heads: one clear error.
  const std::string hydra = test::write_random_heads("spec", *target, {.hydra = true});
  EXPECT_NE(error_of([&] {
              make_drafter(parse_drafter_spec("medusa:" + hydra), nullptr, pool, 64, policies,
                           0.0f);
            }).find("these are Hydra heads"),
            std::string::npos);
}

}  // namespace
}  // namespace eagle2

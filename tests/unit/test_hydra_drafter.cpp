// The Hydra drafter (speculative/hydra_drafter.h): head k sees the root and the drafted path above
// the node it expands, level by level through DynamicTreeBuilder; which feature it reads; the
// heads' inputs ([f, E(root), E(path..)]); the spec hydra:DIR[:T].
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/error.h"
#include "draft/draft_tree.h"
#include "draft/medusa_heads.h"
#include "speculative/drafter_spec.h"
#include "speculative/hydra_drafter.h"
#include "support/errors.h"
#include "support/medusa_heads.h"
#include "support/random_models.h"

namespace eagle2 {
namespace {

using test::error_of;

// Rows ranked by a hash of the path, recording every call.
class RecordingPredictor : public HydraPredictor {
 public:
  struct Call {
    int head;
    std::vector<float> feature;
    std::vector<std::vector<int32_t>> paths;
  };
  RecordingPredictor(int heads, int64_t d, int64_t V, std::vector<Call>* calls)
      : heads_(heads), d_(d), V_(V), calls_(calls) {}
  int num_heads() const override { return heads_; }
  int64_t hidden_size() const override { return d_; }
  int64_t vocab_size() const override { return V_; }
  void predict(int head, const float* feature, std::span<const int32_t> tokens, int64_t n,
               float* out, ThreadPool&) override {
    Call c{head, std::vector<float>(feature, feature + d_), {}};
    const auto len = static_cast<size_t>(head + 1);
    for (int64_t i = 0; i < n; ++i) {
      c.paths.emplace_back(tokens.begin() + static_cast<std::ptrdiff_t>(i * len),
                           tokens.begin() + static_cast<std::ptrdiff_t>((i + 1) * len));
      uint32_t h = 17;
      for (int32_t t : c.paths.back()) h = h * 31 + static_cast<uint32_t>(t);
      for (int64_t v = 0; v < V_; ++v)
        out[i * V_ + v] = -0.3f * static_cast<float>((static_cast<uint32_t>(v) * 7 + h) %
                                                     static_cast<uint32_t>(V_));
    }
    calls_->push_back(std::move(c));
  }

 private:
  int heads_;
  int64_t d_, V_;
  std::vector<Call>* calls_;
};

// The root-to-node token path of every tree node (root first).
std::vector<std::vector<int32_t>> token_paths(const DraftTree& t) {
  std::vector<std::vector<int32_t>> p(static_cast<size_t>(t.size()));
  p[0] = {t.tokens[0]};
  for (size_t i = 1; i < p.size(); ++i) {
    p[i] = p[static_cast<size_t>(t.parents[i])];
    p[i].push_back(t.tokens[i]);
  }
  return p;
}

TEST(HydraDrafter, EachHeadSeesThePathOfTheNodeItExpands) {
  ThreadPool pool(1);
  const int64_t d = 3, V = 11;
  std::vector<RecordingPredictor::Call> calls;
  HydraDrafter drafter(std::make_unique<RecordingPredictor>(3, d, V, &calls), pool, 9, 3);
  EXPECT_EQ(drafter.name(), "hydra");
  const std::vector<int32_t> prompt = {1, 2};
  const std::vector<float> features = {0, 1, 2, 3, 4, 5};
  drafter.begin(prompt, features.data(), 6);
  DraftTree tree;
  drafter.draft(100, tree);
  validate_draft_tree(tree, V, "hydra");
  EXPECT_EQ(tree.size(), 9);
  // Level 1: head 1 (index 0) on the root alone; then one call per level, head = depth, on the
  // K = 3 best nodes of the level, each with its path (root first).
  ASSERT_EQ(calls.size(), 3u);
  const auto paths = token_paths(tree);
  for (size_t c = 0; c < calls.size(); ++c) {
    EXPECT_EQ(calls[c].head, static_cast<int>(c));
    EXPECT_EQ(calls[c].feature, std::vector<float>(features.begin() + 3, features.end()));
    EXPECT_EQ(calls[c].paths.size(), c == 0 ? 1u : 3u);
    for (const auto& p : calls[c].paths) {
      EXPECT_EQ(p.size(), c + 1);
      EXPECT_EQ(p[0], 6);
    }
  }
  // A kept node's children came from the call that saw its path: a node of depth m + 1 kept in the
  // tree has a parent whose path was given to head m.
  for (int64_t i = 1; i < tree.size(); ++i) {
    const auto& p = paths[static_cast<size_t>(i)];
    const auto& parent = std::vector<int32_t>(p.begin(), p.end() - 1);
    const auto& seen = calls[p.size() - 2].paths;
    EXPECT_NE(std::find(seen.begin(), seen.end(), parent), seen.end()) << "node " << i;
  }
  // After a cycle: the last accepted node's feature, the bonus as the root; room for 2 tokens.
  calls.clear();
  const std::vector<float> path_features = {10, 11, 12, 13, 14, 15};
  drafter.accept(tree, std::vector<int32_t>{0, 1}, path_features.data(), 9);
  drafter.draft(2, tree);
  EXPECT_EQ(tree.size(), 2);
  EXPECT_EQ(tree.tokens[0], 9);
  ASSERT_FALSE(calls.empty());
  EXPECT_EQ(calls[0].feature, std::vector<float>(path_features.begin() + 3, path_features.end()));
  calls.clear();
  drafter.draft(1, tree);
  EXPECT_EQ(tree.size(), 1);
  EXPECT_TRUE(calls.empty());
}

TEST(HydraDrafter, Errors) {
  ThreadPool pool(1);
  std::vector<RecordingPredictor::Call> calls;
  EXPECT_THROW(HydraDrafter(std::make_unique<RecordingPredictor>(2, 2, 5, &calls), pool, 0), Error);
  EXPECT_THROW(HydraDrafter(std::make_unique<RecordingPredictor>(2, 2, 5, &calls), pool, 8, 6),
               Error);
  HydraDrafter d(std::make_unique<RecordingPredictor>(2, 2, 5, &calls), pool, 8);
  DraftTree tree;
  EXPECT_EQ(error_of([&] { d.draft(8, tree); }), "hydra drafter: draft() before begin()");
  const std::vector<int32_t> prompt = {1};
  EXPECT_EQ(error_of([&] { d.begin(prompt, nullptr, 1); }),
            "hydra drafter: begin() without the target's features");
}

// The real heads' input rows are [f, E(root), E(path..)]: a predictor over loaded random heads
// gives head k's log-probs of the row built by hand.
TEST(HydraDrafter, HeadsReadTheFeatureAndThePathEmbeddings) {
  auto target = test::load_random_model("hydra-input", test::tiny_config(), DType::F32, 3);
  test::RandomHeadsOptions o;
  o.hydra = true;
  auto heads = std::shared_ptr<const MedusaHeads>(MedusaHeads::load(
      test::write_random_heads("input", *target, o), *target, MedusaHeads::Kind::Hydra));
  ThreadPool pool(1);
  const int64_t d = target->config().hidden_size, V = target->config().vocab_size;
  std::vector<float> f(static_cast<size_t>(d));
  for (size_t i = 0; i < f.size(); ++i) f[i] = std::cos(static_cast<float>(i));
  const std::vector<int32_t> paths = {5, 9, 11, 5, 9, 12};  // two depth-2 nodes under root 5
  std::vector<float> got(static_cast<size_t>(2 * V));
  hydra_predictor(heads)->predict(2, f.data(), paths, 2, got.data(), pool);
  for (int64_t r = 0; r < 2; ++r) {
    std::vector<float> in(static_cast<size_t>(4 * d)), h(static_cast<size_t>(d)),
        want(static_cast<size_t>(V));
    std::copy(f.begin(), f.end(), in.begin());
    for (int64_t j = 0; j < 3; ++j)
      target->embed(paths[static_cast<size_t>(r * 3 + j)], &in[static_cast<size_t>((j + 1) * d)]);
    MedusaHeads::Scratch s;
    heads->states(2, in.data(), 1, h.data(), s, pool);
    const int head = 2;
    heads->logprobs(std::span(&head, 1), h.data(), want.data(), pool);
    for (int64_t v = 0; v < V; ++v)
      EXPECT_EQ(got[static_cast<size_t>(r * V + v)], want[static_cast<size_t>(v)]);
  }
}

TEST(HydraDrafter, MadeFromItsSpec) {
  auto target = test::load_random_model("hydra-spec", test::tiny_config(), DType::F32, 3);
  test::RandomHeadsOptions o;
  o.hydra = true;
  const std::string dir = test::write_random_heads("spec", *target, o);
  ThreadPool pool(1);
  DraftPolicies policies(nullptr, target.get());
  auto drafter =
      make_drafter(parse_drafter_spec("hydra:" + dir + ":7"), nullptr, pool, 64, policies, 0.0f);
  ASSERT_NE(drafter, nullptr);
  EXPECT_EQ(drafter->name(), "hydra");
  const std::vector<int32_t> prompt = {1, 5, 9};
  std::vector<float> features(3 * 64, 0.25f);
  drafter->begin(prompt, features.data(), 7);
  DraftTree tree;
  drafter->draft(64, tree);
  EXPECT_EQ(tree.size(), 7);
  validate_draft_tree(tree, target->config().vocab_size, "hydra");
  const std::string medusa = test::write_random_heads("spec", *target, {});
  EXPECT_NE(error_of([&] {
              make_drafter(parse_drafter_spec("hydra:" + medusa), nullptr, pool, 64, policies,
                           0.0f);
            }).find("these are Medusa heads"),
            std::string::npos);
}

}  // namespace
}  // namespace eagle2

// Trees and verdicts entering verification are untrusted: a drafter's malformed tree (a second
// root, a parent after its child, a token outside the vocabulary, a wrong root, too many nodes)
// is an Error naming the drafter, never an out-of-bounds write; so is a verifier's malformed
// path, and a target KV cache that is not empty when speculative decoding starts.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "core/error.h"
#include "draft/draft_tree.h"
#include "speculative/speculative_decoder.h"
#include "speculative/verify.h"
#include "support/decoding.h"
#include "support/errors.h"
#include "support/random_models.h"
#include "support/scripted_drafter.h"

namespace eagle2 {
namespace {

using test::error_of;

DraftTree tree_of(std::vector<int32_t> tokens, std::vector<int32_t> parents) {
  DraftTree t;
  t.tokens = std::move(tokens);
  t.parents = std::move(parents);
  return t;
}

TEST(ValidateDraftTree, OneRuleForEveryMalformedTree) {
  const std::string src = "test tree";
  EXPECT_NO_THROW(validate_draft_tree(tree_of({4, 5, 6, 7}, {-1, 0, 0, 1}), 10, src));
  EXPECT_NO_THROW(validate_draft_tree(tree_of({4}, {-1}), 10, src));
  EXPECT_EQ(error_of([&] { validate_draft_tree(tree_of({}, {}), 10, src); }),
            "test tree: the tree is empty (it needs at least the root)");
  EXPECT_EQ(error_of([&] {
              validate_draft_tree(tree_of({4, 5}, {-1}), 10, src);
            }),
            "test tree: 2 tokens but 1 parents");
  EXPECT_EQ(error_of([&] {
              validate_draft_tree(tree_of({4, 5}, {0, 0}), 10, src);
            }),
            "test tree: the root (node 0) has parent 0, expected -1");
  EXPECT_EQ(error_of([&] {
              validate_draft_tree(tree_of({4, 5, 6}, {-1, 0, -1}), 10, src);
            }),
            "test tree: node 2 has parent -1 (every node after the root needs a parent in [0, 2))");
  EXPECT_EQ(error_of([&] {
              validate_draft_tree(tree_of({4, 5, 6}, {-1, 2, 0}), 10, src);
            }),
            "test tree: node 1 has parent 2 (every node after the root needs a parent in [0, 1))");
  EXPECT_EQ(error_of([&] {
              validate_draft_tree(tree_of({4, 5, 6}, {-1, 0, 2}), 10, src);
            }),
            "test tree: node 2 has parent 2 (every node after the root needs a parent in [0, 2))");
  EXPECT_EQ(error_of([&] {
              validate_draft_tree(tree_of({4, 10}, {-1, 0}), 10, src);
            }),
            "test tree: node 1 has token id 10 outside the vocabulary [0, 10)");
  EXPECT_EQ(error_of([&] {
              validate_draft_tree(tree_of({-1, 3}, {-1, 0}), 10, src);
            }),
            "test tree: node 0 has token id -1 outside the vocabulary [0, 10)");
}

TEST(ValidateDraftTree, VerifiableCountInRange) {
  const std::string src = "test tree";
  DraftTree t = tree_of({4, 5, 6}, {-1, 0, 0});
  for (int64_t ok : {-1, 1, 2, 3}) {
    t.verifiable = ok;
    EXPECT_NO_THROW(validate_draft_tree(t, 10, src)) << ok;
  }
  for (int64_t bad : {-2, 0, 4}) {
    t.verifiable = bad;
    EXPECT_EQ(error_of([&] { validate_draft_tree(t, 10, src); }),
              "test tree: " + std::to_string(bad) +
                  " verifiable nodes of 3 (expected -1 for all, or 1 to the tree's size: the root "
                  "is always verifiable)");
  }
  t.reset(4);
  EXPECT_EQ(t.verifiable, -1) << "reset() makes every node verifiable again";
}

// A merged tree's per-node sources (DraftTree::sources: the decoding loops index them by node) are
// absent or one per node.
TEST(ValidateDraftTree, SourcesOnePerNodeOrNone) {
  DraftTree t = tree_of({4, 5, 6}, {-1, 0, 0});
  EXPECT_NO_THROW(validate_draft_tree(t, 10, "test tree"));
  t.sources = {3, 1, 2};
  EXPECT_NO_THROW(validate_draft_tree(t, 10, "test tree"));
  t.sources = {3, 1};
  EXPECT_EQ(error_of([&] { validate_draft_tree(t, 10, "test tree"); }),
            "test tree: 2 node sources for 3 nodes");
  t.reset(4);
  EXPECT_TRUE(t.sources.empty()) << "reset() forgets the sources";
}

// Nodes past `verifiable` ride along in the forward but no verifier walks into them, even when
// the target's token at their parent is exactly theirs: the position-keyed rule, greedy and the
// rejection rule alike (all walk children_of).
TEST(ValidateDraftTree, VerifiersNeverAcceptAnUnverifiableNode) {
  // Root 1 with children 2 (verifiable) and 3 (not); node 3's own child 0 (not).
  DraftTree t = tree_of({1, 2, 3, 0}, {-1, 0, 0, 2});
  t.verifiable = 2;
  const int64_t V = 4;
  std::vector<float> logits(4 * V, -30.0f);
  for (int64_t node = 0; node < 4; ++node) logits[node * V + 3] = 30.0f;  // the target says 3
  const Verdict g = verify_greedy(t, logits.data(), V);
  EXPECT_EQ(g.path, std::vector<int32_t>{0});
  EXPECT_EQ(g.bonus, 3);
  SamplingParams p;
  p.temperature = 1.0f;
  for (const Verdict& v : {verify_sampling(t, logits.data(), V, p, 1),
                           verify_sampling_rejection(t, logits.data(), V, p, 1)}) {
    EXPECT_EQ(v.path, std::vector<int32_t>{0});
    EXPECT_EQ(v.bonus, 3);
  }
  // With every node verifiable the same logits accept node 2 (token 3).
  t.verifiable = -1;
  EXPECT_EQ(verify_greedy(t, logits.data(), V).path, (std::vector<int32_t>{0, 2}));
  EXPECT_EQ(children_of(t)[0], (std::vector<int32_t>{1, 2}));
  t.verifiable = 2;
  EXPECT_EQ(children_of(t)[0], std::vector<int32_t>{1});
  EXPECT_TRUE(children_of(t)[2].empty());
}

TEST(ValidateDraftTree, VerifiersRefuseASecondRoot) {
  // Before, children_of indexed children[-1] for the second root: a write out of bounds.
  const DraftTree bad = tree_of({1, 2, 3}, {-1, 0, -1});
  const std::vector<float> logits(3 * 4, 0.0f);
  const std::string want =
      "verify: draft tree: node 2 has parent -1 (every node after the root needs a parent in "
      "[0, 2))";
  EXPECT_EQ(error_of([&] { verify_greedy(bad, logits.data(), 4); }), want);
  SamplingParams p;
  p.temperature = 1.0f;
  EXPECT_EQ(error_of([&] { verify_sampling(bad, logits.data(), 4, p, 1); }), want);
  EXPECT_EQ(error_of([&] { verify_sampling_rejection(bad, logits.data(), 4, p, 1); }), want);
}

class DecoderInputs : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    model_ = test::load_random_model("tree-validation", test::tiny_config()).release();
  }
  static void TearDownTestSuite() {
    delete model_;
    model_ = nullptr;
  }
  // The Error of a speculative run whose drafter adds `script`'s nodes to each tree.
  std::string error_with(const test::ScriptedDrafter::Script& script, float temperature) {
    test::ScriptedDrafter drafter(script);
    GenerationOptions opt;
    opt.max_new_tokens = 8;
    opt.stop_at_eos = false;
    opt.sampling.temperature = temperature;
    return error_of([&] { test::speculative_tokens(*model_, drafter, {1, 7, 9}, opt, 32, pool_); });
  }
  static LlamaModel* model_;
  ThreadPool pool_{1};
};
LlamaModel* DecoderInputs::model_ = nullptr;

TEST_F(DecoderInputs, MalformedDrafterTreesAreAnErrorNamingTheDrafter) {
  const std::string prefix = "drafter 'scripted' returned an invalid tree: ";
  struct Case {
    test::ScriptedDrafter::Script script;
    std::string want;
  };
  const std::vector<Case> cases = {
      {[](const auto&, int64_t, DraftTree& t) {
         t.add(3, 0, -1.0f);
         t.add(4, -1, -1.0f);  // a second root
       },
       "node 2 has parent -1 (every node after the root needs a parent in [0, 2))"},
      {[](const auto&, int64_t, DraftTree& t) {
         t.add(3, 0, -1.0f);
         t.parents[1] = 5;  // a parent after its child (and past the end)
       },
       "node 1 has parent 5 (every node after the root needs a parent in [0, 1))"},
      {[](const auto&, int64_t, DraftTree& t) { t.add(96, 0, -1.0f); },
       "node 1 has token id 96 outside the vocabulary [0, 96)"},
      {[](const auto&, int64_t, DraftTree& t) { t.parents.push_back(0); },
       "1 tokens but 2 parents"},
      {[](const auto&, int64_t, DraftTree& t) { t.tokens[0] = (t.tokens[0] + 1) % 96; },
       "its root is token "},
      {[](const auto&, int64_t max_tokens, DraftTree& t) {
         for (int64_t i = 0; i < max_tokens; ++i) t.add(3, 0, -1.0f);
       },
       "it has 30 nodes, the context has room for 29"},
      {[](const auto&, int64_t, DraftTree& t) {
         t.add(3, 0, -1.0f);
         t.verifiable = 3;
       },
       "3 verifiable nodes of 2"},
  };
  for (float temperature : {0.0f, 1.0f}) {
    for (const Case& c : cases) {
      const std::string message = error_with(c.script, temperature);
      EXPECT_EQ(message.rfind(prefix + c.want, 0), 0u) << message;
    }
  }
}

TEST_F(DecoderInputs, MalformedVerdictFromAVerifierIsAnError) {
  test::ScriptedDrafter drafter([](const auto&, int64_t, DraftTree& t) {
    t.add(3, 0, -1.0f);
    t.add(4, 0, -1.0f);
  });
  GenerationOptions opt;
  opt.max_new_tokens = 8;
  opt.stop_at_eos = false;
  opt.sampling.temperature = 1.0f;
  auto with_verdict = [&](Verdict v) {
    SpeculativeHooks hooks;
    hooks.verify_sampling = [v](const DraftTree&, const float*, int64_t, const SamplingParams&,
                                uint64_t) { return v; };
    return error_of([&] {
      test::speculative_tokens(*model_, drafter, {1, 7, 9}, opt, 32, pool_, hooks);
    });
  };
  EXPECT_EQ(with_verdict(Verdict{{0, 1, 2}, 5}),
            "verification returned an invalid path: node 2 at step 2 is not a child of node 1");
  EXPECT_EQ(with_verdict(Verdict{{0, 7}, 5}),
            "verification returned an invalid path: node 7 at step 1 is not a child of node 0");
  EXPECT_EQ(with_verdict(Verdict{{}, 5}),
            "verification returned a path that does not start at the root");
  EXPECT_EQ(with_verdict(Verdict{{0, 2}, 96}),
            "verification returned bonus token 96 outside the vocabulary [0, 96)");
  // A hook that accepts a node of the lookahead branch (past `verifiable`) is refused too.
  test::ScriptedDrafter partly([](const auto&, int64_t, DraftTree& t) {
    t.add(3, 0, -1.0f);
    t.add(4, 0, -1.0f);
    t.verifiable = 2;
  });
  SpeculativeHooks hooks;
  hooks.verify_sampling = [](const DraftTree&, const float*, int64_t, const SamplingParams&,
                             uint64_t) {
    return Verdict{{0, 2}, 5};
  };
  EXPECT_EQ(error_of([&] {
              test::speculative_tokens(*model_, partly, {1, 7, 9}, opt, 32, pool_, hooks);
            }),
            "verification returned an invalid path: node 2 at step 1 is past the tree's 2 "
            "verifiable nodes");
}

// The drafter only learns the prompt (begin()), so a target cache that already holds context
// would put the head at other positions than the target: drafting silently degraded. Refused.
TEST_F(DecoderInputs, NonEmptyTargetCacheIsRefused) {
  KvCache kv = model_->make_cache(32);
  ForwardResult out;
  prefill(*model_, kv, {1, 4, 6}, 64, out, pool_);
  NoDrafter none;
  GenerationOptions opt;
  opt.max_new_tokens = 4;
  EXPECT_EQ(error_of([&] {
              speculative_generate(*model_, kv, none, {1, 7, 9}, opt, pool_,
                                   [](int32_t) { return true; });
            }),
            "speculative decoding needs an empty KV cache (it holds 3 tokens; truncate it to 0 "
            "first)");
  kv.truncate(0);
  EXPECT_NO_THROW(
      speculative_generate(*model_, kv, none, {1, 7, 9}, opt, pool_, [](int32_t) { return true; }));
}

}  // namespace
}  // namespace eagle2

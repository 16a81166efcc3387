// Hybrid trees (speculative/hybrid_drafter.h): the spec (DYNAMIC+suffix...), the union of a head's
// and a suffix drafter's candidate trees, identical paths merged into one node, ranked best first
// by one value, the top M - 1 kept as a tree; and the drafter that learns each source's acceptance
// apart. Lossless decoding with it is checked with every other drafter (support/equality_runs.cpp:
// greedy, sampled, batched) and with batch-chosen budgets (test_batch_decoding.cpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/thread_pool.h"
#include "draft/eagle_head.h"
#include "speculative/drafter_spec.h"
#include "speculative/eagle_drafter.h"
#include "speculative/hybrid_drafter.h"
#include "speculative/suffix_drafter.h"
#include "speculative/tree_budget.h"
#include "support/decoding.h"
#include "support/errors.h"
#include "support/random_models.h"

namespace eagle2 {
namespace {

using test::error_of;

// A tree from (token, parent, acceptance) rows under root 5: values are summed log-acceptances,
// logps each node's own, ranks its order among the given rows' siblings.
DraftTree hybrid_test_tree(const std::vector<std::tuple<int32_t, int32_t, double>>& rows) {
  DraftTree t;
  t.reset(5);
  std::vector<int32_t> kids(rows.size() + 1, 0);
  for (const auto& [token, parent, p] : rows) {
    const float own = static_cast<float>(std::log(p));
    t.add(token, parent, t.values[static_cast<size_t>(parent)] + own, own,
          kids[static_cast<size_t>(parent)]++);
  }
  return t;
}

// DYNAMIC+suffix[:T[:D[:P]]]: a hybrid tree. The dynamic part parses as alone, the suffix part
// as the suffix drafter's spec; calibration is implied and written out.
TEST(HybridSpec, FormsCanonicalStringsAndHostileOnes) {
  const DrafterSpec h = parse_drafter_spec("dynamic:8:6:2+suffix");
  EXPECT_EQ(h.kind, "dynamic");
  EXPECT_TRUE(h.with_suffix);
  EXPECT_TRUE(h.calibrate);
  EXPECT_TRUE(h.needs_head());
  EXPECT_EQ(h.dynamic.total_tokens, 8);
  EXPECT_EQ(h.suffix, SuffixParams{});
  EXPECT_EQ(h.to_string(), "dynamic:8:6:2:cal+suffix:8:7:10");
  EXPECT_EQ(parse_drafter_spec("dynamic:8:6:2:cal+suffix:8:7:10"), h);
  EXPECT_FALSE(parse_drafter_spec("dynamic:8:6:2:cal") == h);  // the same head tree alone
  const DrafterSpec a = parse_drafter_spec("dynamic:auto:4:2:norerank+suffix:16:15:5@some/head");
  EXPECT_TRUE(a.auto_budget);
  EXPECT_FALSE(a.dynamic.rerank);
  EXPECT_EQ(a.suffix.tokens, 16);
  EXPECT_EQ(a.suffix.depth, 15);
  EXPECT_EQ(a.suffix.min_percent, 5);
  EXPECT_EQ(a.head, "some/head");
  EXPECT_EQ(a.to_string(), "dynamic:auto:4:2:norerank:cal+suffix:16:15:5@some/head");
  for (const DrafterSpec& d : {h, a, parse_drafter_spec("dynamic+suffix:4")})
    EXPECT_EQ(parse_drafter_spec(d.to_string()), d);
  // Existing strings parse as before: '+' only after a dynamic spec; a folder may hold one.
  EXPECT_FALSE(parse_drafter_spec("dynamic:8:6:2").with_suffix);
  EXPECT_EQ(parse_drafter_spec("sps:runs/a+b:3:1").folder, "runs/a+b");
  const std::string form =
      "': expected DYNAMIC+suffix[:T[:D[:P]]] (a dynamic spec, then the suffix drafter's own "
      "parameters)";
  for (const char* text : {"dynamic:8:6:2+", "dynamic+lookup", "dynamic+suffixx",
                           "dynamic+suffix+suffix", "dynamic:8:6:2+dynamic"})
    EXPECT_EQ(error_of([&] { parse_drafter_spec(text); }), std::string("drafter '") + text + form);
  EXPECT_NE(error_of([] { parse_drafter_spec("dynamic+suffix:"); }).find("expected suffix"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_drafter_spec("dynamic+suffix:0"); }).find("T = 0"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_drafter_spec("chain:3+suffix"); }).find("chain:3+suffix"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_drafter_spec("dynamic:8:6:x+suffix"); }).find("'x'"),
            std::string::npos);
  ThreadPool pool(1);
  DraftPolicies policies;
  EXPECT_NE(error_of([&] {
              make_drafter(h, nullptr, pool, 64, policies, 0.0f);
            }).find("needs an EAGLE head"),
            std::string::npos);
}

TEST(HybridCandidates, MergesIdenticalPathsAndKeepsTheBestFirst) {
  // Head: 7 (0.9), 8 (0.05), 7 -> 9 (0.5). Suffix: 7 (0.95), 7 -> 3 (0.6 of 0.95), 7 -> 3 -> 4.
  const DraftTree head = hybrid_test_tree({{7, 0, 0.9}, {8, 0, 0.05}, {9, 1, 0.5 / 0.9}});
  const DraftTree suffix = hybrid_test_tree({{7, 0, 0.95}, {3, 1, 0.6 / 0.95}, {4, 2, 0.55 / 0.6}});
  HybridCandidates c;
  c.build(head, suffix);
  // 7 is one node, valued at the larger estimate; then 3, 4, 9, 8 by value.
  const std::vector<float> want = {std::log(0.95f), std::log(0.6f), std::log(0.55f), std::log(0.5f),
                                   std::log(0.05f)};
  ASSERT_EQ(c.values_desc().size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(c.values_desc()[i], want[i], 1e-5) << i;

  DraftTree tree;
  c.finish(4, tree);
  EXPECT_EQ(tree.tokens, (std::vector<int32_t>{5, 7, 3, 4}));
  EXPECT_EQ(tree.parents, (std::vector<int32_t>{-1, 0, 1, 2}));
  EXPECT_EQ(c.finished_size(), 4);
  // Node 1 came from both (its logp and rank are the head's), 2 and 3 from the suffix alone.
  EXPECT_EQ(c.source_node(1, HybridCandidates::kHead), 1);
  EXPECT_EQ(c.source_node(1, HybridCandidates::kSuffix), 1);
  EXPECT_EQ(c.source_node(2, HybridCandidates::kHead), -1);
  EXPECT_EQ(c.source_node(2, HybridCandidates::kSuffix), 2);
  EXPECT_EQ(c.source_node(3, HybridCandidates::kSuffix), 3);
  EXPECT_EQ(tree.sources, (std::vector<uint8_t>{3, DraftTree::kFromHead | DraftTree::kFromSuffix,
                                                DraftTree::kFromSuffix, DraftTree::kFromSuffix}));
  EXPECT_NEAR(tree.logps[1], std::log(0.9f), 1e-6);
  EXPECT_NEAR(tree.values[1], std::log(0.95f), 1e-6);

  c.finish(100, tree);  // every merged node: 5 + the root
  EXPECT_EQ(tree.tokens, (std::vector<int32_t>{5, 7, 3, 4, 9, 8}));
  EXPECT_EQ(tree.parents, (std::vector<int32_t>{-1, 0, 1, 2, 1, 0}));
  EXPECT_EQ(tree.sources[4], DraftTree::kFromHead);
  c.finish(1, tree);
  EXPECT_EQ(tree.size(), 1);
}

TEST(HybridCandidates, EveryPrefixIsATree) {
  // A child valued above its parent (not a path sum; the order must still put the parent first)
  // and a suffix tree that is the root alone.
  DraftTree head;
  head.reset(5);
  head.add(7, 0, -3.0f, -3.0f, 0);
  head.add(8, 0, -1.0f, -1.0f, 1);
  head.add(9, 1, -0.5f, 2.5f, 0);
  DraftTree suffix;
  suffix.reset(5);
  HybridCandidates c;
  c.build(head, suffix);
  DraftTree tree;
  c.finish(3, tree);
  EXPECT_EQ(tree.tokens, (std::vector<int32_t>{5, 8, 7}));
  c.finish(4, tree);
  EXPECT_EQ(tree.tokens, (std::vector<int32_t>{5, 8, 7, 9}));
  EXPECT_EQ(tree.parents, (std::vector<int32_t>{-1, 0, 0, 2}));

  DraftTree other;
  other.reset(6);
  EXPECT_NE(error_of([&] { c.build(head, other); }).find("different roots"), std::string::npos);
}

// The hybrid on a random model and head, on a prompt that repeats itself: its output is plain
// decoding's, both sources drafted and had nodes accepted, and each calibration learned from its
// own source's tested nodes only (at most the nodes that source drafted).
TEST(HybridDrafter, LearnsEachSourceApartAndStaysExact) {
  const LlamaConfig cfg = test::tiny_config();
  auto target = test::load_random_model("hybrid", cfg, DType::F32, 23, 0.3f);
  auto head = EagleHead::load(test::write_random_head("hybrid", *target), *target);
  ThreadPool pool(1);
  std::vector<int32_t> prompt;
  for (int r = 0; r < 4; ++r)
    for (int32_t t = 3; t < 15; ++t) prompt.push_back(t);
  GenerationOptions opt;
  opt.max_new_tokens = 160;
  EagleDrafterOptions o;
  o.dynamic = {4, 3, 16};
  o.context = 256;
  o.calibrate = true;
  o.record_outcomes = false;
  auto policy = std::make_shared<DraftPolicy>();
  HybridDrafter hybrid(std::make_unique<EagleDrafter>(*head, pool, o, policy),
                       std::make_unique<SuffixDrafter>(SuffixParams{12, 5, 1}), policy, 16);
  EXPECT_EQ(hybrid.name(), "eagle2-dynamic+suffix");
  SpeculativeStats st;
  EXPECT_EQ(test::speculative_tokens(*target, hybrid, prompt, opt, 256, pool, {}, &st),
            test::plain_tokens(*target, prompt, opt, 256, pool));
  EXPECT_GT(st.head_drafted, 0);
  EXPECT_GT(st.suffix_drafted, 0);
  EXPECT_GT(st.head_accepted, 0);
  EXPECT_GT(st.suffix_accepted, 0);
  EXPECT_LE(st.head_accepted, st.head_drafted);
  EXPECT_LE(st.suffix_accepted, st.suffix_drafted);
  // Every node came from one source or both; every accepted one too.
  EXPECT_GE(st.head_drafted + st.suffix_drafted, st.drafted_tokens);
  int64_t accepted = 0;
  for (size_t a = 0; a < st.accept_histogram.size(); ++a)
    accepted += static_cast<int64_t>(a) * st.accept_histogram[a];
  EXPECT_GE(st.head_accepted + st.suffix_accepted, accepted);
  const int64_t head_seen = policy->calibration().observations();
  const int64_t suffix_seen = policy->suffix_calibration().observations();
  EXPECT_GT(head_seen, 0);
  EXPECT_GT(suffix_seen, 0);
  EXPECT_LE(head_seen, st.head_drafted);
  EXPECT_LE(suffix_seen, st.suffix_drafted);
}

// Forwards to a drafter and records the largest tree it drafted.
class LargestTreeRecorder : public Drafter {
 public:
  explicit LargestTreeRecorder(Drafter& inner) : inner_(inner) {}
  std::string name() const override { return inner_.name(); }
  std::span<const int32_t> feature_layers() const override { return inner_.feature_layers(); }
  void begin(std::span<const int32_t> context, const float* features, int32_t root) override {
    inner_.begin(context, features, root);
  }
  void draft(int64_t max_tokens, DraftTree& tree) override {
    inner_.draft(max_tokens, tree);
    largest_room = std::max(largest_room, max_tokens);
    largest_tree = std::max(largest_tree, static_cast<int64_t>(tree.tokens.size()));
  }
  void accept(const DraftTree& tree, std::span<const int32_t> path, const float* features,
              int32_t bonus) override {
    inner_.accept(tree, path, features, bonus);
  }
  int64_t largest_room = 0, largest_tree = 0;

 private:
  Drafter& inner_;
};

// The server reserves KV for a hybrid's dynamic part (an auto budget's kAutoMaxTokens rows): the
// merged candidates (the head's up to that size and the suffix's own T) can outnumber it, and a
// decoder offers the whole room left in the context, so the drafter caps its trees itself.
TEST(HybridDrafter, AnAutoBudgetNeverDraftsMoreThanItsSizeWhateverTheRoom) {
  const LlamaConfig cfg = test::tiny_config();
  auto target = test::load_random_model("hybrid", cfg, DType::F32, 23, 0.3f);
  auto head = EagleHead::load(test::write_random_head("hybrid", *target), *target);
  ThreadPool pool(1);
  std::vector<int32_t> prompt;
  for (int r = 0; r < 8; ++r)
    for (int32_t t = 3; t < 40; ++t) prompt.push_back(t);
  GenerationOptions opt;
  opt.max_new_tokens = 48;
  constexpr int64_t kSize = 24, kContext = 512;
  EagleDrafterOptions o;
  o.dynamic = {4, 8, kSize};
  o.context = kContext;
  o.calibrate = true;
  o.auto_budget = true;
  o.record_outcomes = false;
  // Verifying costs almost nothing more per row: the budget wants every candidate it has.
  auto policy = std::make_shared<DraftPolicy>(std::make_shared<const VerifyCostModel>(
      std::vector<std::pair<int64_t, double>>{{1, 1e-3}, {kContext, 1.01e-3}}));
  HybridDrafter hybrid(std::make_unique<EagleDrafter>(*head, pool, o, policy),
                       std::make_unique<SuffixDrafter>(SuffixParams{64, 30, 1}), policy, kSize);
  LargestTreeRecorder recorder(hybrid);
  EXPECT_EQ(test::speculative_tokens(*target, recorder, prompt, opt, kContext, pool),
            test::plain_tokens(*target, prompt, opt, kContext, pool));
  EXPECT_GT(recorder.largest_room, kSize);
  EXPECT_GT(recorder.largest_tree, 1);
  EXPECT_LE(recorder.largest_tree, kSize);
}

}  // namespace
}  // namespace eagle2

// Suffix decoding's index and drafter (speculative/suffix_index.h, suffix_drafter.h): occurrence
// counts of every substring up to the depth, matches of the longest context with a continuation,
// trees scored by empirical continuation frequency, incremental updates as tokens are accepted,
// the node cap of a stream, and documents counted in and out again (the eviction a server-wide
// index needs). Lossless decoding with it is checked with every other drafter
// (support/equality_runs.cpp: greedy, sampled, batched).
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "speculative/shared_suffix_index.h"
#include "speculative/suffix_drafter.h"
#include "speculative/suffix_index.h"
#include "support/errors.h"

namespace eagle2 {
namespace {

using test::error_of;

std::vector<int32_t> children_tokens(const SuffixIndex& index, int32_t node) {
  std::vector<int32_t> kids, out;
  index.children(node, kids);
  for (const int32_t k : kids) out.push_back(index.token(k));
  return out;
}

TEST(SuffixIndex, CountsEverySubstringUpToTheDepth) {
  SuffixIndex index(3, 1000);
  index.append(std::vector<int32_t>{1, 2, 3, 1, 2, 4, 1, 2});
  EXPECT_EQ(index.count(index.find(std::vector<int32_t>{1})), 3);
  EXPECT_EQ(index.count(index.find(std::vector<int32_t>{1, 2})), 3);
  EXPECT_EQ(index.count(index.find(std::vector<int32_t>{1, 2, 3})), 1);
  EXPECT_EQ(index.count(index.find(std::vector<int32_t>{2, 4, 1})), 1);
  EXPECT_EQ(index.find(std::vector<int32_t>{1, 2, 3, 1}), -1);  // longer than the depth
  EXPECT_EQ(index.find(std::vector<int32_t>{3, 2}), -1);        // never seen
  // Children most frequent first, ties by token; the stream's own last "1 2" has none yet.
  EXPECT_EQ(children_tokens(index, index.find(std::vector<int32_t>{1, 2})),
            (std::vector<int32_t>{3, 4}));
  EXPECT_EQ(children_tokens(index, SuffixIndex::kRoot), (std::vector<int32_t>{1, 2, 3, 4}));
  EXPECT_EQ(index.suffix_node(2), index.find(std::vector<int32_t>{1, 2}));
  EXPECT_EQ(index.suffix_node(1), index.find(std::vector<int32_t>{2}));
  // Distinct substrings of length 1, 2, 3 (4, 5, 6 of them) and the root.
  EXPECT_EQ(index.nodes(), 1 + 4 + 5 + 6);
  EXPECT_EQ(error_of([&] { (void)index.suffix_node(4); }),
            "suffix index: no suffix of length 4 (3 indexed)");
}

TEST(SuffixIndex, RejectsBadSizes) {
  EXPECT_EQ(error_of([] { SuffixIndex(0, 100); }),
            "suffix index: depth must be in [1, 256] (got 0)");
  EXPECT_EQ(error_of([] { SuffixIndex(257, 1000); }),
            "suffix index: depth must be in [1, 256] (got 257)");
  EXPECT_EQ(error_of([] { SuffixIndex(8, 17); }),
            "suffix index: max_nodes must be in [2 * depth + 2, 2^30] (got 17)");
}

// The memory bound: a long stream of fresh text never grows the trie past max_nodes; a re-index
// keeps the recent window, which still drafts.
TEST(SuffixIndex, StreamStaysUnderItsNodeCap) {
  SuffixIndex index(6, 600);
  std::mt19937 rng(5);
  for (int i = 0; i < 20000; ++i) {
    index.append(static_cast<int32_t>(rng() % 5000));
    ASSERT_LE(index.nodes(), 600) << "after " << i + 1 << " tokens";
  }
  // A window of 50 tokens (at most 300 nodes), then about 50 appends until the next: a re-index
  // every 50 to 60 tokens (fewer nodes when random tokens repeat).
  EXPECT_GE(index.reindexes(), 20000 / 60);
  EXPECT_LE(index.text().size(), 600u / 6);
  // The recent window is indexed: its last tokens repeated are matched.
  const std::vector<int32_t> recent(index.text().end() - 3, index.text().end());
  EXPECT_EQ(index.count(index.find(recent)), 1);
}

// Documents counted in and out: what remains is exactly the index of what was not removed.
TEST(SuffixIndex, DocumentsAreEvictedExactly) {
  const std::vector<int32_t> a = {1, 2, 3, 4, 1, 2}, b = {2, 3, 9, 2, 3}, c = {7, 7, 7};
  SuffixIndex index(4, 1000), only_b(4, 1000);
  ASSERT_TRUE(only_b.add(b));
  ASSERT_TRUE(index.add(a));
  ASSERT_TRUE(index.add(b));
  EXPECT_EQ(index.count(index.find(std::vector<int32_t>{2, 3})), 3);
  index.remove(a);
  EXPECT_EQ(index.nodes(), only_b.nodes());
  EXPECT_EQ(index.count(index.find(std::vector<int32_t>{2, 3})), 2);
  EXPECT_EQ(index.find(std::vector<int32_t>{1}), -1);
  EXPECT_EQ(children_tokens(index, index.find(std::vector<int32_t>{2, 3})),
            (std::vector<int32_t>{9}));
  // Freed nodes are reused, and children lists stay consistent through reuse.
  ASSERT_TRUE(index.add(c));
  EXPECT_EQ(index.count(index.find(std::vector<int32_t>{7, 7})), 2);
  EXPECT_EQ(children_tokens(index, SuffixIndex::kRoot), (std::vector<int32_t>{7, 2, 3, 9}));
  index.remove(b);
  index.remove(c);
  EXPECT_EQ(index.nodes(), 1);
  EXPECT_FALSE(index.has_children(SuffixIndex::kRoot));
  EXPECT_EQ(error_of([&] { index.remove(a); }),
            "suffix index: removing a document that was not added");
}

// add() refuses what could grow the trie past its cap and changes nothing: the caller evicts.
TEST(SuffixIndex, AddRefusesPastTheCap) {
  SuffixIndex index(4, 34);
  const std::vector<int32_t> doc = {1, 2, 3, 4, 5, 6};  // up to 6 * 4 nodes (18 here)
  ASSERT_TRUE(index.add(doc));
  const int64_t nodes = index.nodes();
  EXPECT_FALSE(index.add(std::vector<int32_t>{8, 9, 10, 11}));
  EXPECT_EQ(index.nodes(), nodes);
  index.remove(doc);
  EXPECT_TRUE(index.add(std::vector<int32_t>{8, 9, 10, 11}));
}

// 5 6 7 8 | 5 6 7 8 | 5 6 7 9 | 5 6, root 7: "9 5 6 7" is new, "5 6 7" went on with 8 twice and 9
// once. The tree grows best first by path frequency; a match of 3 tokens drafts at most 6 nodes.
TEST(SuffixDrafter, TreeIsBestFirstByContinuationFrequency) {
  SuffixDrafter drafter;  // T 16, D 15, P 10
  drafter.begin(std::vector<int32_t>{5, 6, 7, 8, 5, 6, 7, 8, 5, 6, 7, 9, 5, 6}, nullptr, 7);
  DraftTree tree;
  drafter.draft(64, tree);
  EXPECT_EQ(drafter.last_match(), 3);
  // 8 (2/3), then "8 5 6 7" (each 2/3: both earlier "5 6 7 8" went on with 5 6 7), then the root's
  // 9 (1/3, pushed before the next 1/3) and "...7 8" (1/3: "5 6 7 8 5 6 7" went on with 8 and 9).
  EXPECT_EQ(tree.tokens, (std::vector<int32_t>{7, 8, 5, 6, 7, 9, 8}));
  EXPECT_EQ(tree.parents, (std::vector<int32_t>{-1, 0, 1, 2, 3, 0, 4}));
  EXPECT_EQ(tree.ranks, (std::vector<int32_t>{-1, 0, 0, 0, 0, 1, 0}));
  EXPECT_NEAR(tree.values[1], std::log(2.0 / 3), 1e-6);
  EXPECT_NEAR(tree.values[4], std::log(2.0 / 3), 1e-6);
  EXPECT_NEAR(tree.values[5], std::log(1.0 / 3), 1e-6);
  EXPECT_NEAR(tree.values[6], std::log(1.0 / 3), 1e-6);
  EXPECT_NEAR(tree.logps[6], std::log(0.5), 1e-6);
  EXPECT_TRUE(tree.draft_q.empty());  // a deterministic proposal
  validate_draft_tree(tree, 10, "suffix");
}

// The tree adapts to confidence: P drops the rarer continuations, a short match drafts little,
// and the budget (the room the loop gives) and T bound it.
TEST(SuffixDrafter, SizeFollowsConfidenceAndBudget) {
  const std::vector<int32_t> ctx = {5, 6, 7, 8, 5, 6, 7, 8, 5, 6, 7, 9, 5, 6};
  DraftTree tree;
  SuffixDrafter confident(SuffixParams{16, 15, 50});
  confident.begin(ctx, nullptr, 7);
  confident.draft(64, tree);
  EXPECT_EQ(tree.tokens, (std::vector<int32_t>{7, 8, 5, 6, 7}));
  SuffixDrafter shallow(SuffixParams{16, 1, 10});  // D = 1: two levels
  shallow.begin(ctx, nullptr, 7);
  shallow.draft(64, tree);
  // 8 (2/3) and its 5 (2/3, level 2: no deeper), then 9 (1/3) and its 5.
  EXPECT_EQ(tree.tokens, (std::vector<int32_t>{7, 8, 5, 9, 5}));
  SuffixDrafter drafter;
  drafter.begin(ctx, nullptr, 7);
  drafter.draft(3, tree);  // room for the root and 2 more
  EXPECT_EQ(tree.tokens, (std::vector<int32_t>{7, 8, 5}));
  drafter.draft(1, tree);
  EXPECT_EQ(tree.size(), 1);
  SuffixDrafter small(SuffixParams{3, 15, 10});
  small.begin(ctx, nullptr, 7);
  small.draft(64, tree);
  EXPECT_EQ(tree.size(), 3);
  // A one-token match ("4" went on with 1 2 twice): at most 2 nodes, however certain.
  SuffixDrafter one;
  one.begin(std::vector<int32_t>{4, 1, 2, 3, 4, 1, 2, 3, 9}, nullptr, 4);
  one.draft(64, tree);
  EXPECT_EQ(one.last_match(), 1);
  EXPECT_EQ(tree.tokens, (std::vector<int32_t>{4, 1, 2}));
  // Nothing seen before: the root alone.
  SuffixDrafter fresh;
  fresh.begin(std::vector<int32_t>{1, 2, 3}, nullptr, 4);
  fresh.draft(64, tree);
  EXPECT_EQ(fresh.last_match(), 0);
  EXPECT_EQ(tree.size(), 1);
}

// accept() indexes the accepted path and the bonus: the output itself is drafted from next.
TEST(SuffixDrafter, LearnsFromAcceptedTokens) {
  SuffixDrafter drafter;
  drafter.begin(std::vector<int32_t>{1, 2, 3}, nullptr, 4);
  DraftTree tree;
  drafter.draft(64, tree);
  ASSERT_EQ(tree.size(), 1);
  // Verification kept the root alone; the bonus is 1: "4 1" is new text, "1" was seen (then 2).
  drafter.accept(tree, std::vector<int32_t>{0}, nullptr, 1);
  drafter.draft(64, tree);
  EXPECT_EQ(tree.tokens, (std::vector<int32_t>{1, 2, 3}));
  // The drafted path 1 -> 2 accepted, bonus 3: "1 2 3 4 1 2 3" now predicts 4 1 2 3 ...
  drafter.accept(tree, std::vector<int32_t>{0, 1}, nullptr, 3);
  EXPECT_EQ(drafter.index().text().size(), 7u);
  drafter.draft(64, tree);
  EXPECT_EQ(drafter.last_match(), 3);
  EXPECT_EQ(tree.tokens, (std::vector<int32_t>{3, 4, 1, 2, 3}));
  // A new generation starts from its own prompt alone.
  drafter.begin(std::vector<int32_t>{9}, nullptr, 8);
  EXPECT_EQ(drafter.index().text().size(), 2u);
  drafter.draft(64, tree);
  EXPECT_EQ(tree.size(), 1);
}

// A request's index is capped: a long repetitive generation keeps drafting from its recent window.
TEST(SuffixDrafter, CappedIndexKeepsDrafting) {
  const SuffixParams p{8, 3, 10};
  SuffixDrafter drafter(p, 2 * p.index_depth() * 20);  // a 20-token window
  std::vector<int32_t> context;
  for (int i = 0; i < 300; ++i) context.push_back(1000 + i);  // fresh text: 12 nodes a token
  for (int i = 0; i < 30; ++i) context.push_back(100 + i % 7);
  drafter.begin(context, nullptr, 100 + 30 % 7);
  EXPECT_GT(drafter.index().reindexes(), 0);
  EXPECT_LE(drafter.index().nodes(), drafter.index().max_nodes());
  DraftTree tree;
  drafter.draft(64, tree);
  // The cycle of 7, certain: a chain of D + 1 = 4 levels.
  EXPECT_EQ(tree.tokens, (std::vector<int32_t>{100 + 30 % 7, 100 + 31 % 7, 100 + 32 % 7,
                                               100 + 33 % 7, 100 + 34 % 7}));
}

// The server-wide index: outputs published, the oldest evicted exactly when the cap is reached, the
// trie never past it however long the stream of outputs.
TEST(SharedSuffixIndex, EvictsTheOldestOutputsWithinItsCap) {
  SharedSuffixIndex shared(SharedSuffixIndex::kMinBytes);  // 13107 nodes
  const int64_t cap = shared.max_nodes();
  std::mt19937 rng(3);
  std::vector<int32_t> first;
  for (int d = 0; d < 200; ++d) {
    std::vector<int32_t> doc;
    for (int i = 0; i < 60; ++i) doc.push_back(static_cast<int32_t>(rng() % 3000));
    if (d == 0) first = doc;
    shared.publish(doc);
    ASSERT_LE(shared.nodes(), cap) << "after " << d + 1 << " outputs";
  }
  EXPECT_GT(shared.evictions(), 100);
  EXPECT_EQ(shared.documents() + shared.evictions(), 200);
  DraftTree tree;
  tree.reset(0);
  // The first output was evicted: its text drafts nothing; the last one's does.
  EXPECT_EQ(shared.draft(std::span(first).first(8), 8, 4, 4, 0.0, tree), 0);
  EXPECT_EQ(tree.size(), 1);
  // A document longer than half the cap keeps its last tokens.
  std::vector<int32_t> huge(20000);
  for (size_t i = 0; i < huge.size(); ++i) huge[i] = static_cast<int32_t>(10000 + i);
  shared.publish(huge);
  EXPECT_LE(shared.nodes(), cap);
  EXPECT_EQ(shared.draft(std::vector<int32_t>{10000 + 19990}, 8, 4, 4, 0.0, tree), 1);
  EXPECT_EQ(tree.tokens,
            (std::vector<int32_t>{0, 10000 + 19991, 10000 + 19992, 10000 + 19993, 10000 + 19994}));
  tree.reset(0);
  EXPECT_EQ(shared.draft(std::vector<int32_t>{10000 + 5}, 8, 4, 4, 0.0, tree), 0);
  EXPECT_EQ(error_of([] { SharedSuffixIndex(1000); }),
            "server-wide suffix index: memory must be in [1 MiB, 64 GiB] (got 1000 bytes)");
}

// The same output published again and again adds no trie nodes, but its kept copies count: the
// oldest are evicted, so memory stays bounded whatever the stream.
TEST(SharedSuffixIndex, RepeatedOutputsStayWithinTheBytes) {
  SharedSuffixIndex shared(SharedSuffixIndex::kMinBytes);
  const std::vector<int32_t> doc(200, 7);
  for (int i = 0; i < 20000; ++i) {
    shared.publish(doc);
    ASSERT_LE(shared.bytes(), SharedSuffixIndex::kMinBytes) << "after " << i + 1;
  }
  EXPECT_GT(shared.evictions(), 0);
  EXPECT_LT(shared.documents(), 20000);
}

// Evicting a document whose tokens are many distinct root children (a vocabulary's worth) unlinks
// each in O(1) and leaves the others intact.
TEST(SuffixIndex, EvictsAmongManySiblings) {
  SuffixIndex index(2, 1 << 20);
  std::vector<int32_t> wide(30000), other = {1, 2, 3};
  for (size_t i = 0; i < wide.size(); ++i) wide[i] = static_cast<int32_t>(100 + i);
  ASSERT_TRUE(index.add(other));
  ASSERT_TRUE(index.add(wide));
  index.remove(wide);
  EXPECT_EQ(children_tokens(index, SuffixIndex::kRoot), (std::vector<int32_t>{1, 2, 3}));
  EXPECT_EQ(index.count(index.find(std::vector<int32_t>{2, 3})), 1);
  ASSERT_TRUE(index.add(wide));  // freed nodes reused, lists consistent
  index.remove(other);
  EXPECT_EQ(index.count(index.find(std::vector<int32_t>{100, 101})), 1);
  EXPECT_EQ(index.find(std::vector<int32_t>{1}), -1);
}

// A request drafts what an earlier request wrote (published when its drafter goes), when that
// matches a longer context than its own text does.
TEST(SuffixDrafter, DraftsFromOtherRequestsOutputs) {
  auto shared = std::make_shared<SharedSuffixIndex>(SharedSuffixIndex::kMinBytes);
  {
    SuffixDrafter first(SuffixParams{}, SuffixParams::kMaxNodes, shared);
    first.begin(std::vector<int32_t>{1, 2}, nullptr, 50);
    DraftTree tree;
    first.draft(64, tree);
    first.accept(tree, std::vector<int32_t>{0}, nullptr, 51);
    for (int32_t t = 52; t < 60; ++t) {
      first.draft(64, tree);
      first.accept(tree, std::vector<int32_t>{0}, nullptr, t);
    }
  }  // its output 50..59 is published now
  EXPECT_EQ(shared->documents(), 1);
  SuffixDrafter second(SuffixParams{}, SuffixParams::kMaxNodes, shared);
  second.begin(std::vector<int32_t>{7, 50, 51, 52}, nullptr, 53);
  DraftTree tree;
  second.draft(64, tree);
  EXPECT_TRUE(second.last_from_shared());
  EXPECT_EQ(second.last_match(), 4);  // "50 51 52 53"
  EXPECT_EQ(tree.tokens, (std::vector<int32_t>{53, 54, 55, 56, 57, 58, 59}));
  // Its own text wins when it matches as long a context: "7 50" repeated.
  second.accept(tree, std::vector<int32_t>{0}, nullptr, 7);
  second.draft(64, tree);
  EXPECT_FALSE(second.last_from_shared());
  EXPECT_EQ(tree.tokens, (std::vector<int32_t>{7, 50, 51}));
  // Outputs are published, prompts are not: "1 2" drafts nothing from the shared index.
  tree.reset(0);
  EXPECT_EQ(shared->draft(std::vector<int32_t>{1}, 8, 4, 4, 0.0, tree), 0);
}

TEST(SuffixDrafter, RejectsBadParams) {
  EXPECT_EQ(error_of([] {
              SuffixDrafter(SuffixParams{0, 1, 1});
            }),
            "suffix drafter: suffix needs T in [1, 1024], D in [0, 63] and P in [0, 100] (got T = "
            "0, D = 1, P = 1)");
}

}  // namespace
}  // namespace eagle2

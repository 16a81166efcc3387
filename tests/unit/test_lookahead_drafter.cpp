// Lookahead decoding's drafter (speculative/lookahead_drafter.h) on scripted inputs: its tree is
// the paper's 2-D attention mask (compared with a matrix transcribed by hand from the reference's
// W = 5, N = 4, G = 2 table), the n-gram pool keeps what it should, and the window moves as one
// Jacobi iteration per cycle and one level per committed token.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "speculative/lookahead_drafter.h"
#include "support/errors.h"

namespace eagle2 {
namespace {

// visible[r][c]: node r's attention row sees node c, i.e. c is r or one of its ancestors (what
// Batch::tree gives every row besides the committed context).
std::vector<std::string> visibility(const DraftTree& t) {
  std::vector<std::string> rows(static_cast<size_t>(t.size()), std::string(t.size(), '.'));
  for (int64_t r = 0; r < t.size(); ++r)
    for (int32_t c = static_cast<int32_t>(r); c >= 0; c = t.parents[static_cast<size_t>(c)])
      rows[static_cast<size_t>(r)][static_cast<size_t>(c)] = '1';
  return rows;
}

// The reference's comment table for W = 5, N = 4, G = 2 (llama.cpp examples/lookahead, after the
// LMSYS blog's Figure 5), row by row in ITS batch order: 0 the input token, 1-4 level 0 columns
// 1-4, 5-9 level 1 columns 0-4, 10-14 level 2 columns 0-4, 15-17 and 18-20 the two verification
// n-grams. Each row is in the sequences its column of the table lists; a row sees a token when
// that token is in the row's sequence at a position not after the row's. Transcribed by hand:
const std::vector<std::string> kReferenceMask = {
    "1....................",  //  0 I  pos 0
    "11...................",  //  1 L  pos 1
    "111..................",  //  2 L  pos 2
    "1111.................",  //  3 L  pos 3
    "11111................",  //  4 L  pos 4
    "1....1...............",  //  5 L  pos 1
    "11....1..............",  //  6 L  pos 2
    "111....1.............",  //  7 L  pos 3
    "1111....1............",  //  8 L  pos 4
    "11111....1...........",  //  9 L  pos 5
    "1....1....1..........",  // 10 L  pos 2
    "11....1....1.........",  // 11 L  pos 3
    "111....1....1........",  // 12 L  pos 4
    "1111....1....1.......",  // 13 L  pos 5
    "11111....1....1......",  // 14 L  pos 6
    "1..............1.....",  // 15 V  pos 1
    "1..............11....",  // 16 V  pos 2
    "1..............111...",  // 17 V  pos 3
    "1.................1..",  // 18 V  pos 1
    "1.................11.",  // 19 V  pos 2
    "1.................111",  // 20 V  pos 3
};
const std::vector<int32_t> kReferencePositions = {0, 1, 2, 3, 4, 1, 2, 3, 4, 5, 2,
                                                  3, 4, 5, 6, 1, 2, 3, 1, 2, 3};

TEST(LookaheadDrafter, TheTreeIsThePapersMask) {
  LookaheadDrafter d({5, 4, 2});
  const std::vector<int32_t> prompt = {3, 9, 4, 7, 1, 8};
  d.begin(prompt, nullptr, 50);
  d.pool().add(50, std::vector<int32_t>{60, 61, 62});
  d.pool().add(50, std::vector<int32_t>{70, 71, 72});
  DraftTree t;
  d.draft(1000, t);
  ASSERT_EQ(t.size(), 21);
  EXPECT_EQ(t.verifiable, 7) << "root and the two n-grams first, then the window";
  EXPECT_EQ(d.columns(), 5);
  // Our node -> the reference table's row: root, the n-grams (15-17, 18-20), then level 0
  // columns 1-4 (1-4), level 1 (5-9), level 2 (10-14).
  const std::vector<int> row = {0, 15, 16, 17, 18, 19, 20, 1,  2,  3, 4,
                                5, 6,  7,  8,  9,  10, 11, 12, 13, 14};
  const auto ours = visibility(t);
  const std::vector<int32_t> depth = t.depths();
  for (int r = 0; r < 21; ++r) {
    for (int c = 0; c < 21; ++c)
      EXPECT_EQ(ours[r][c], kReferenceMask[row[r]][row[c]]) << "node " << r << " sees node " << c;
    EXPECT_EQ(depth[r], kReferencePositions[row[r]]) << "node " << r << "'s position offset";
  }
  // The tokens: the n-grams, then the window's guesses at their (level, column).
  EXPECT_EQ(std::vector<int32_t>(t.tokens.begin(), t.tokens.begin() + 7),
            (std::vector<int32_t>{50, 60, 61, 62, 70, 71, 72}));
  for (int i = 1; i < 5; ++i) EXPECT_EQ(t.tokens[6 + i], d.window_token(0, i));
  for (int j = 1; j < 3; ++j)
    for (int i = 0; i < 5; ++i) EXPECT_EQ(t.tokens[7 + 4 + 5 * (j - 1) + i], d.window_token(j, i));
  // The window's first guesses are the prompt's tokens (the pool, though, starts empty).
  for (int j = 0; j < 3; ++j)
    for (int i = j == 0 ? 1 : 0; i < 5; ++i)
      EXPECT_NE(std::find(prompt.begin(), prompt.end(), d.window_token(j, i)), prompt.end());
}

TEST(LookaheadDrafter, PoolKeepsTheNewestDistinctNgramsPerFirstToken) {
  NgramPool pool(2, 2);
  EXPECT_EQ(pool.count(5), 0);
  EXPECT_TRUE(pool.add(5, std::vector<int32_t>{1, 2}));
  EXPECT_FALSE(pool.add(5, std::vector<int32_t>{1, 2})) << "a duplicate is not added twice";
  EXPECT_TRUE(pool.add(5, std::vector<int32_t>{1, 3}));
  EXPECT_TRUE(pool.add(6, std::vector<int32_t>{1, 2}));
  EXPECT_EQ(pool.count(5), 2);
  EXPECT_TRUE(pool.add(5, std::vector<int32_t>{4, 4}));  // full: {1, 2} (the oldest) goes
  ASSERT_EQ(pool.count(5), 2);
  EXPECT_EQ(std::vector<int32_t>(pool.get(5, 0).begin(), pool.get(5, 0).end()),
            (std::vector<int32_t>{1, 3}));
  EXPECT_EQ(std::vector<int32_t>(pool.get(5, 1).begin(), pool.get(5, 1).end()),
            (std::vector<int32_t>{4, 4}));
  EXPECT_EQ(pool.count(6), 1);
  NgramPool none(2, 0);  // G = 0: nothing is ever verified, so nothing is kept
  EXPECT_FALSE(none.add(5, std::vector<int32_t>{1, 2}));
  EXPECT_EQ(none.count(5), 0);
}

// Scripted target outputs through two cycles of a W = 3, N = 3, G = 2 drafter.
TEST(LookaheadDrafter, WindowAndPoolFollowTheTargetsOutputs) {
  LookaheadDrafter d({3, 3, 2});
  d.begin(std::vector<int32_t>{9, 9, 9}, nullptr, 1);
  const int32_t window[2][3] = {{1, 21, 22}, {30, 31, 32}};
  for (int j = 0; j < 2; ++j)
    for (int i = 0; i < 3; ++i) d.set_window_token(j, i, window[j][i]);
  DraftTree t;
  d.draft(100, t);
  // No n-gram yet: root, level 0 (21, 22 as a chain), level 1 under each column's level 0.
  EXPECT_EQ(t.tokens, (std::vector<int32_t>{1, 21, 22, 30, 31, 32}));
  EXPECT_EQ(t.parents, (std::vector<int32_t>{-1, 0, 1, 0, 1, 2}));
  EXPECT_EQ(t.verifiable, 1);
  // The target's argmax at each node; the last level (nodes 3-5) says 40, 41, 42.
  d.target_tokens(std::vector<int32_t>{7, 7, 7, 40, 41, 42});
  d.accept(t, std::vector<int32_t>{0}, nullptr, 50);  // nothing accepted, bonus 50
  // Each column read down plus its output is pooled under its first token (column 0: the root).
  ASSERT_EQ(d.pool().count(1), 1);
  EXPECT_EQ(d.pool().get(1, 0)[0], 30);
  EXPECT_EQ(d.pool().get(1, 0)[1], 40);
  ASSERT_EQ(d.pool().count(21), 1);
  EXPECT_EQ(d.pool().get(21, 0)[1], 41);
  ASSERT_EQ(d.pool().count(22), 1);
  EXPECT_EQ(d.pool().get(22, 0)[1], 42);
  // One committed token: one level up, the outputs as the new last level.
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(d.window_token(0, i), window[1][i]);
    EXPECT_EQ(d.window_token(1, i), 40 + i);
  }

  // Cycle 2: the root 50 has a pooled n-gram {60, 61} (and, once this cycle is pooled, another).
  d.pool().add(50, std::vector<int32_t>{60, 61});
  d.pool().add(50, std::vector<int32_t>{60, 65});  // shares its first token: one trie node
  d.draft(100, t);
  EXPECT_EQ(std::vector<int32_t>(t.tokens.begin(), t.tokens.begin() + 4),
            (std::vector<int32_t>{50, 60, 61, 65}));
  EXPECT_EQ(std::vector<int32_t>(t.parents.begin(), t.parents.begin() + 4),
            (std::vector<int32_t>{-1, 0, 1, 1}));
  EXPECT_EQ(t.verifiable, 4);
  EXPECT_EQ(t.size(), 4 + 5);
  // Last level at nodes 6, 7, 8 (level 0 columns 1-2 are nodes 4-5).
  d.target_tokens(std::vector<int32_t>{0, 0, 0, 0, 0, 0, 70, 71, 72});
  d.accept(t, std::vector<int32_t>{0, 1, 2}, nullptr, 62);  // 60, 61 accepted, bonus 62
  EXPECT_EQ(d.pool().count(50), 2) << "G = 2: the newest two";
  EXPECT_EQ(d.pool().get(50, 1)[0], 40);  // column 0: root 50, level 1 40, output 70
  EXPECT_EQ(d.pool().get(50, 1)[1], 70);
  EXPECT_EQ(d.pool().get(31, 0)[1], 71);
  // Three committed tokens: three levels up; past the first, the last level is a copy of the new
  // level 0 (the reference's rule).
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(d.window_token(0, i), 70 + i);
    EXPECT_EQ(d.window_token(1, i), 70 + i);
  }
  d.draft(100, t);
  EXPECT_EQ(t.tokens[0], 62);
}

// Near the end of the context the tree shrinks to max_tokens: the n-grams first, then as many
// window columns as fit; the window's update keeps to the columns that were in the tree.
TEST(LookaheadDrafter, ShrinksToTheRoomLeft) {
  LookaheadDrafter d({4, 3, 2});
  d.begin(std::vector<int32_t>{5, 6, 7, 8}, nullptr, 1);
  d.pool().add(1, std::vector<int32_t>{2, 3});
  d.pool().add(1, std::vector<int32_t>{4, 3});
  DraftTree t;
  for (int64_t room = 1; room <= 14; ++room) {
    d.draft(room, t);
    EXPECT_LE(t.size(), room);
    EXPECT_EQ(t.verifiable, std::min<int64_t>(room, 5));
    EXPECT_EQ(d.columns(), std::min<int64_t>(4, (room - t.verifiable + 1) / 2)) << room;
  }
  d.draft(6, t);  // root, the n-grams, one column (its level 1 under the root)
  EXPECT_EQ(d.columns(), 1);
  const int32_t level0_col2 = d.window_token(0, 2), level1_col2 = d.window_token(1, 2);
  d.target_tokens(std::vector<int32_t>{0, 0, 0, 0, 0, 99});
  d.accept(t, std::vector<int32_t>{0}, nullptr, 11);
  EXPECT_EQ(d.window_token(1, 0), 99);
  EXPECT_EQ(d.window_token(0, 2), level1_col2) << "a column out of the tree still moves up";
  EXPECT_EQ(d.window_token(1, 2), level1_col2);
  (void)level0_col2;
  // N = 2: one level, the root is column 0's only node; with no room the tree is the root alone.
  LookaheadDrafter two({3, 2, 1});
  two.begin(std::vector<int32_t>{5}, nullptr, 1);
  two.draft(1, t);
  EXPECT_EQ(t.size(), 1);
  EXPECT_EQ(two.columns(), 1);
  two.target_tokens(std::vector<int32_t>{8});
  two.accept(t, std::vector<int32_t>{0}, nullptr, 8);
  ASSERT_EQ(two.pool().count(1), 1) << "the root and the target's token at it: a 2-gram";
  EXPECT_EQ(two.pool().get(1, 0)[0], 8);
}

TEST(LookaheadDrafter, BadParametersAreOneError) {
  for (const LookaheadParams& p : {LookaheadParams{0, 3, 1}, LookaheadParams{3, 1, 1},
                                   LookaheadParams{3, 3, -1}, LookaheadParams{200, 3, 57}}) {
    const std::string e = test::error_of([&] { LookaheadDrafter d(p); });
    EXPECT_EQ(e.rfind("lookahead drafter: lookahead needs W >= 1, N >= 2, G >= 0 and a tree of "
                      "(W + G) * (N - 1) <= 512 tokens (got W = ",
                      0),
              0u)
        << e;
  }
  EXPECT_NO_THROW(LookaheadDrafter({200, 3, 56}));  // 512 tokens exactly
}

}  // namespace
}  // namespace eagle2

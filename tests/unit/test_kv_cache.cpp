#include <gtest/gtest.h>

#include "core/error.h"
#include "model/batch.h"
#include "model/kv_cache.h"
#include "support/errors.h"

namespace eagle2 {
namespace {

TEST(KvCache, KeepMovesChosenRowsInOrderAndDropsTheRest) {
  KvCache kv(2, 3, 16);
  kv.begin_batch(2);
  kv.keep_all();
  kv.begin_batch(5);
  for (int l = 0; l < 2; ++l)
    for (int r = 0; r < 5; ++r)
      for (int j = 0; j < 3; ++j) {
        kv.key(l, 2 + r)[j] = static_cast<float>(100 * l + 10 * r + j);
        kv.value(l, 2 + r)[j] = -static_cast<float>(100 * l + 10 * r + j);
      }
  const std::vector<int32_t> keep = {0, 2, 4};
  kv.keep(keep);
  EXPECT_EQ(kv.size(), 5);
  EXPECT_EQ(kv.pending(), 0);
  for (int l = 0; l < 2; ++l)
    for (size_t i = 0; i < keep.size(); ++i)
      for (int j = 0; j < 3; ++j) {
        EXPECT_EQ(kv.key(l, 2 + static_cast<int64_t>(i))[j], 100 * l + 10 * keep[i] + j);
        EXPECT_EQ(kv.value(l, 2 + static_cast<int64_t>(i))[j], -(100 * l + 10 * keep[i] + j));
      }
}

TEST(KvCache, OverflowAndBadKeepAreErrors) {
  KvCache kv(1, 2, 4);
  kv.begin_batch(3);
  kv.keep_all();
  try {
    kv.begin_batch(2);
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "context full: 3 cached tokens + 2 new ones exceed --ctx 4");
  }
  kv.begin_batch(1);
  const std::vector<int32_t> bad = {1};
  EXPECT_THROW(kv.keep(bad), Error);
  const std::vector<int32_t> unordered = {0, 0};
  EXPECT_THROW(kv.keep(unordered), Error);
  kv.truncate(1);
  EXPECT_EQ(kv.size(), 1);
  EXPECT_THROW(kv.truncate(2), Error);
}

// Sizes come from a config and --ctx: their product is checked, and a cache larger than the
// machine's memory is one clear error instead of an allocation the OOM killer ends.
TEST(KvCache, ImpossibleSizesAreErrorsNotAllocations) {
  EXPECT_EQ(test::error_of([] { KvCache(int64_t{1} << 40, int64_t{1} << 20, int64_t{1} << 10); }),
            "KV cache: 1099511627776 layers x 1024 tokens x 1048576 key/value width does not fit "
            "in memory; use a smaller --ctx");
  const std::string big = test::error_of([] { KvCache(1024, 1 << 20, 1 << 20); });
  EXPECT_NE(big.find("MiB, more than this machine's"), std::string::npos) << big;
  EXPECT_EQ(test::error_of([] { KvCache(0, 8, 8); }),
            "KV cache: layers (0) and key/value width (8) must be positive");
}

TEST(Batch, TreeDepthsPositionsAndVisibility) {
  const std::vector<int32_t> tokens = {5, 6, 7, 8, 9}, parents = {-1, 0, 0, 1, 3};
  Batch b = Batch::tree(tokens, parents, 10);
  EXPECT_EQ(b.depths(), (std::vector<int32_t>{0, 1, 1, 2, 3}));
  EXPECT_EQ(b.positions, (std::vector<int32_t>{10, 11, 11, 12, 13}));
  std::vector<int32_t> vis;
  b.visible_rows(4, vis);
  EXPECT_EQ(vis, (std::vector<int32_t>{0, 1, 3, 4}));
  b.visible_rows(2, vis);
  EXPECT_EQ(vis, (std::vector<int32_t>{0, 2}));
  Batch c = Batch::causal(tokens, 3);
  EXPECT_EQ(c.positions, (std::vector<int32_t>{3, 4, 5, 6, 7}));
  c.visible_rows(3, vis);
  EXPECT_EQ(vis, (std::vector<int32_t>{0, 1, 2, 3}));
}

TEST(Batch, InvalidBatchesAreErrors) {
  const std::vector<int32_t> tokens = {1, 2}, bad_parents = {-1, 1};
  try {
    Batch::tree(tokens, bad_parents, 0);
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "tree batch: node 1 has parent 1 (parents must precede children)");
  }
  Batch b = Batch::causal(tokens, 0);
  try {
    b.validate(2);
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "batch: token id 2 at row 1 is outside the vocabulary [0, 2)");
  }
}

}  // namespace
}  // namespace eagle2

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <random>
#include <set>

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

// 5,000 random sequence lifetimes over one shared pool: prompts, trees with rejections, dropped
// batches, truncations and overflows, up to 12 sequences alive at once. After every operation each
// sequence holds exactly the blocks its live tokens need, no block belongs to two sequences, the
// pool's count agrees, every committed slot still holds what was written to it; at the end every
// block is back.
TEST(KvCache, RandomLifetimesLeakNoBlockAndHoldOnlyWhatTheyUse) {
  for (int64_t block : {int64_t{4}, int64_t{16}}) {
    constexpr int64_t kLayers = 2, kDim = 3, kCapacity = 200, kMaxLive = 12;
    const int64_t per_seq = (kCapacity + block - 1) / block;
    auto pool = std::make_shared<KvPool>(kLayers, kDim, block, kMaxLive * per_seq);
    pool->shuffle_free_list(static_cast<uint64_t>(block));
    struct Live {
      std::unique_ptr<KvCache> kv;
      std::vector<float> marks;  // the mark written to each committed slot
    };
    std::vector<Live> live;
    std::mt19937 rng(static_cast<uint32_t>(block));
    float next_mark = 1;
    int64_t lifetimes = 0, peak_need = 0;
    auto write_pending = [&](KvCache& kv, std::vector<float>& pending_marks) {
      pending_marks.clear();
      for (int64_t r = 0; r < kv.pending(); ++r) {
        pending_marks.push_back(next_mark);
        for (int64_t l = 0; l < kLayers; ++l) {
          kv.key(l, kv.size() + r)[0] = next_mark + static_cast<float>(l);
          kv.value(l, kv.size() + r)[kDim - 1] = -next_mark - static_cast<float>(l);
        }
        next_mark += 4;
      }
    };
    auto check = [&](const std::string& where) {
      int64_t held = 0, need = 0;
      std::set<int32_t> seen;
      for (const Live& s : live) {
        const int64_t used = s.kv->size() + s.kv->pending();
        ASSERT_EQ(s.kv->blocks_held(), (used + block - 1) / block) << where;
        held += s.kv->blocks_held();
        need += (used + block - 1) / block;
        for (int32_t b : s.kv->block_table())
          ASSERT_TRUE(seen.insert(b).second) << where << ": block " << b << " shared";
        for (int64_t i = 0; i < s.kv->size(); ++i)
          for (int64_t l = 0; l < kLayers; ++l) {
            ASSERT_EQ(s.kv->key(l, i)[0], s.marks[static_cast<size_t>(i)] + static_cast<float>(l))
                << where;
            ASSERT_EQ(s.kv->value(l, i)[kDim - 1],
                      -s.marks[static_cast<size_t>(i)] - static_cast<float>(l))
                << where;
          }
      }
      ASSERT_EQ(pool->used_blocks(), held) << where;
      peak_need = std::max(peak_need, need);
    };
    std::vector<float> pending_marks;
    while (lifetimes < 5000) {
      const unsigned op = rng() % 10;
      if (live.empty() || (op == 0 && static_cast<int64_t>(live.size()) < kMaxLive)) {
        live.push_back({std::make_unique<KvCache>(pool, kCapacity), {}});
        ASSERT_EQ(live.back().kv->blocks_held(), 0) << "a new sequence holds no memory";
        continue;
      }
      const size_t who = rng() % live.size();
      Live& s = live[who];
      KvCache& kv = *s.kv;
      if (op == 1) {  // the sequence ends
        live.erase(live.begin() + static_cast<std::ptrdiff_t>(who));
        ++lifetimes;
      } else if (op == 2) {
        const int64_t n = static_cast<int64_t>(rng() % static_cast<unsigned>(kv.size() + 1));
        kv.truncate(n);
        s.marks.resize(static_cast<size_t>(n));
      } else {
        const auto n = static_cast<int64_t>(1 + rng() % 24);
        if (kv.size() + n > kCapacity) {
          const int64_t before = kv.blocks_held();
          EXPECT_THROW(kv.begin_batch(n), Error);
          ASSERT_EQ(kv.blocks_held(), before);
          ASSERT_EQ(kv.pending(), 0);
        } else {
          kv.begin_batch(n);
          write_pending(kv, pending_marks);
          check("pending");
          if (op == 3) {  // a prompt: everything kept
            kv.keep_all();
            s.marks.insert(s.marks.end(), pending_marks.begin(), pending_marks.end());
          } else if (op == 4) {  // a dropped batch (a draft that is not verified)
            kv.drop_pending();
          } else {  // a verified tree: some increasing rows kept, the rest rejected
            std::vector<int32_t> rows;
            for (int32_t r = 0; r < n; ++r)
              if (r == 0 || rng() % 3 == 0) rows.push_back(r);
            kv.keep(rows);
            for (int32_t r : rows) s.marks.push_back(pending_marks[static_cast<size_t>(r)]);
          }
        }
      }
      check("after op " + std::to_string(op));
      if (::testing::Test::HasFatalFailure()) return;
    }
    live.clear();
    EXPECT_EQ(pool->used_blocks(), 0) << "blocks leaked";
    EXPECT_EQ(pool->free_blocks(), pool->n_blocks());
    EXPECT_EQ(pool->peak_used_blocks(), peak_need);
    EXPECT_LE(peak_need, kMaxLive * per_seq);
  }
}

TEST(KvPool, DoubleReleaseAndBadSizesAreErrors) {
  KvPool pool(1, 2, 16, 2);
  const int32_t b = pool.allocate();
  pool.release(b);
  EXPECT_EQ(test::error_of([&] { pool.release(b); }), "KV cache: block 0 released but not in use");
  EXPECT_EQ(test::error_of([] { KvPool(1, 2, 12, 2); }),
            "KV cache: the block size must be a power of two in [1, 1048576] (got 12)");
  KvPool one(1, 2, 1, 1);
  one.allocate();
  EXPECT_EQ(test::error_of([&] { one.allocate(); }),
            "KV memory full: all 1 blocks of 1 tokens are in use");
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

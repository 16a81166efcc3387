// Reduced draft vocabularies: the draft_vocab.tsv format and its errors, the head's compact
// lm_head (log-probs renormalized over the kept tokens, ids mapped back), and losslessness: a
// drafter that can only propose some tokens still reproduces plain greedy decoding exactly.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <numeric>

#include "draft/draft_vocab.h"
#include "draft/eagle_head.h"
#include "speculative/eagle_drafter.h"
#include "speculative/generation.h"
#include "speculative/speculative_decoder.h"
#include "support/decoding.h"
#include "support/errors.h"
#include "support/random_models.h"
#include "support/shared_data.h"

namespace eagle2 {
namespace {

using test::error_of;

TEST(DraftVocab, WritesMostFrequentFirstAndReadsBack) {
  const std::string path = test::temp_dir("draft_vocab") + "/draft_vocab.tsv";
  // Token 3 most frequent, then 0 and 5 tied (lower id first); 1, 2 and 4 never occur.
  write_draft_vocab(path, {7, 0, 0, 9, 0, 7});
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "token_id\tcount\n3\t9\n0\t7\n5\t7\n");
  EXPECT_EQ(read_draft_vocab(path, 6), (std::vector<int32_t>{3, 0, 5}));
  // The 2 most frequent, in id order (the compact lm_head keeps token order).
  EXPECT_EQ(draft_vocab_subset(path, 6, 2), (std::vector<int32_t>{0, 3}));
  EXPECT_EQ(error_of([&] { draft_vocab_subset(path, 6, 4); }),
            "--draft-vocab 4: " + path + " lists 3 tokens (use 1 to 3)");
  EXPECT_EQ(error_of([&] { draft_vocab_subset(path, 6, 0); }),
            "--draft-vocab 0: " + path + " lists 3 tokens (use 1 to 3)");
}

TEST(DraftVocab, ErrorsNameTheFileAndLine) {
  const std::string dir = test::temp_dir("draft_vocab_errors");
  auto with = [&](const std::string& text) {
    const std::string path = dir + "/v.tsv";
    std::ofstream(path, std::ios::binary) << text;
    return error_of([&] { read_draft_vocab(path, 10); });
  };
  const std::string p = dir + "/v.tsv";
  EXPECT_EQ(error_of([&] { read_draft_vocab(dir + "/none.tsv", 10); }),
            dir + "/none.tsv: cannot open (write it with: eagle2 draft-vocab)");
  EXPECT_EQ(with("id count\n1\t2\n"), p + ":1: expected the header 'token_id<TAB>count'");
  EXPECT_EQ(with("token_id\tcount\n1\tx\n"),
            p + ":2: expected 'token_id<TAB>count' with a positive count");
  EXPECT_EQ(with("token_id\tcount\n1\t3\t4\n"),
            p + ":2: expected 'token_id<TAB>count' with a positive count");
  EXPECT_EQ(with("token_id\tcount\n1\t0\n"),
            p + ":2: expected 'token_id<TAB>count' with a positive count");
  EXPECT_EQ(with("token_id\tcount\n10\t3\n"), p + ":2: token id 10 outside the vocabulary of 10");
  EXPECT_EQ(with("token_id\tcount\n1\t3\n1\t2\n"), p + ":3: token id 1 is listed twice");
  EXPECT_EQ(with("token_id\tcount\n1\t3\n2\t5\n"), p + ":3: counts must not increase (5 after 3)");
  EXPECT_EQ(with("token_id\tcount\n"), p + ": no tokens listed");
}

class DraftVocabHead : public ::testing::Test {
 protected:
  void SetUp() override {
    target_ = test::load_random_model("draft-vocab", test::tiny_config(), DType::F32, 41, 0.3f);
    head_ = EagleHead::load(test::write_random_head("draft-vocab", *target_), *target_);
  }
  std::unique_ptr<LlamaModel> target_;
  std::unique_ptr<EagleHead> head_;
  ThreadPool pool_{2};
};

// Restricted log-probs are the full ones renormalized over the kept tokens.
TEST_F(DraftVocabHead, LogProbsAreRenormalizedOverTheKeptTokens) {
  const int64_t V = head_->config().vocab_size, d = head_->config().hidden_size;
  std::vector<float> h(static_cast<size_t>(2 * d));
  for (size_t i = 0; i < h.size(); ++i) h[i] = std::sin(0.37f * static_cast<float>(i));
  std::vector<float> full(static_cast<size_t>(2 * V));
  head_->draft_logprobs(h.data(), 2, full.data(), pool_);
  EXPECT_EQ(head_->draft_vocab_size(), V);
  EXPECT_EQ(head_->draft_token(17), 17);

  const std::vector<int32_t> ids = {2, 5, 11, 40, 95};
  head_->restrict_vocab(ids);
  ASSERT_EQ(head_->draft_vocab_size(), 5);
  std::vector<float> part(10);
  head_->draft_logprobs(h.data(), 2, part.data(), pool_);
  for (int r = 0; r < 2; ++r) {
    double z = 0;
    for (int32_t id : ids) z += std::exp(static_cast<double>(full[r * V + id]));
    for (size_t j = 0; j < ids.size(); ++j) {
      EXPECT_EQ(head_->draft_token(static_cast<int64_t>(j)), ids[j]);
      EXPECT_NEAR(part[r * 5 + j], full[r * V + ids[j]] - std::log(z), 1e-4)
          << "row " << r << " j " << j;
    }
  }
  EXPECT_EQ(error_of([&] {
              head_->restrict_vocab({3, 3});
            }),
            "draft vocabulary: ids must be strictly increasing");
  EXPECT_EQ(error_of([&] { head_->restrict_vocab({96}); }),
            "draft vocabulary: token id 96 outside [0, 96)");
  head_->restrict_vocab({});
  EXPECT_EQ(head_->draft_vocab_size(), V);
}

// Drafts come only from the kept tokens, and greedy output still equals plain decoding, for a
// dynamic tree and a chain, with a vocabulary missing most tokens the target picks.
TEST_F(DraftVocabHead, GreedyOutputStaysExactAndDraftsStayInside) {
  std::vector<int32_t> ids(24);
  std::iota(ids.begin(), ids.end(), 0);
  for (auto& id : ids) id *= 4;  // every 4th token
  head_->restrict_vocab(ids);
  GenerationOptions opt;
  opt.max_new_tokens = 40;
  const std::vector<int32_t> prompt = {3, 14, 15, 92, 65};
  const std::vector<int32_t> plain = test::plain_tokens(*target_, prompt, opt, 256, pool_);
  for (const auto shape :
       {EagleDrafterOptions::Shape::Dynamic, EagleDrafterOptions::Shape::Chain}) {
    EagleDrafterOptions o;
    o.shape = shape;
    o.dynamic = {4, 3, 16};
    o.chain_depth = 3;
    o.context = 256;
    EagleDrafter drafter(*head_, pool_, o);
    int64_t drafted = 0;
    SpeculativeHooks hooks;
    hooks.trace = [&](const CycleTrace& c) {
      for (int64_t i = 1; i < c.tree.size(); ++i) {
        EXPECT_EQ(c.tree.tokens[i] % 4, 0) << "drafted token " << c.tree.tokens[i];
        ++drafted;
      }
    };
    EXPECT_EQ(test::speculative_tokens(*target_, drafter, prompt, opt, 256, pool_, hooks), plain);
    EXPECT_GT(drafted, 0);
  }
  EagleDrafterOptions too_wide;
  too_wide.dynamic = {25, 3, 16};
  EXPECT_EQ(error_of([&] { EagleDrafter d(*head_, pool_, too_wide); }),
            "--draft-top-k must be in [1, 24] (the draft vocabulary; got 25)");
}

}  // namespace
}  // namespace eagle2

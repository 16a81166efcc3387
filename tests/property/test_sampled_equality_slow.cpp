// Seeded sampled equality on a real model: with the same seed, speculative sampled output of the
// stories260K model with its EAGLE head equals plain sampled output token for token, for every
// drafter, on held-out prompts of mixed lengths, at two sampling settings; and neither the prefill
// chunk nor the thread count changes a sampled token. The cheap version on random models is
// test_sampled_equality.cpp.
#include <gtest/gtest.h>

#include "draft/eagle_head.h"
#include "speculative/eagle_drafter.h"
#include "support/decoding.h"
#include "support/equality_runs.h"
#include "support/scripted_drafter.h"
#include "support/shared_data.h"
#include "support/stories.h"
#include "tokenizer/tokenizer.h"

namespace eagle2 {
namespace {

TEST(SampledEquality, StoriesModelEveryDrafter) {
  EAGLE2_STORIES(s, static_cast<size_t>(test::scaled(8)));
  ASSERT_GE(s.prompts.size(), static_cast<size_t>(test::scaled(8)));
  ThreadPool pool(2);
  const int64_t V = s.target->config().vocab_size;
  auto cases = test::drafter_cases(*s.head, pool, V, 512);
  cases.push_back({"random-trees",
                   [V](const std::vector<int32_t>& truth) -> std::unique_ptr<Drafter> {
                     return std::make_unique<test::ScriptedDrafter>(
                         test::random_tree_script(V, static_cast<uint32_t>(truth.size())));
                   },
                   3});
  GenerationOptions opt;
  opt.max_new_tokens = 40;
  test::Coverage cov;
  for (const auto& [temperature, top_k, top_p, seed] :
       {std::tuple{0.8f, 0, 0.95f, uint64_t{1}}, std::tuple{1.0f, 40, 1.0f, uint64_t{2}}}) {
    opt.sampling.temperature = temperature;
    opt.sampling.top_k = top_k;
    opt.sampling.top_p = top_p;
    opt.sampling.seed = seed;
    test::check_equality(*s.target, cases, s.prompts, opt, 512, pool, cov);
  }
  // The head's trees were rejected entirely, accepted in part, and accepted deep.
  EXPECT_GT(cov.at("dynamic-60-5-10", 0), 0) << "no cycle rejected everything";
  int64_t deep = 0;
  for (size_t a = 2; a <= 6; ++a) deep += cov.at("dynamic-60-5-10", a);
  EXPECT_GT(deep, 0) << "no cycle accepted two or more drafted tokens";
  EXPECT_GT(cov.at("scripted", 5), 0) << "no cycle accepted the full scripted depth";
}

// The batch does not matter either: plain decoding with a one-token prefill chunk on one thread,
// speculative decoding with the default chunk on four threads, same tokens.
TEST(SampledEquality, PrefillChunkAndThreadsDoNotChangeATokenSampled) {
  EAGLE2_STORIES(s, static_cast<size_t>(test::scaled(3)));
  ThreadPool one(1), four(4);
  GenerationOptions opt;
  opt.max_new_tokens = 48;
  opt.sampling.temperature = 1.0f;
  opt.sampling.seed = 77;
  for (const auto& prompt : s.prompts) {
    GenerationOptions chunked = opt;
    chunked.prefill_chunk = 1;
    const auto plain = test::plain_tokens(*s.target, prompt, chunked, 512, one);
    EagleDrafterOptions eo;
    eo.context = 512;
    EagleDrafter drafter(*s.head, four, eo);
    EXPECT_EQ(test::speculative_tokens(*s.target, drafter, prompt, opt, 512, four), plain);
  }
}

}  // namespace
}  // namespace eagle2

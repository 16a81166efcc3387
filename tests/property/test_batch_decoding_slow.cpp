// Many sequences decoded together on real models: the stories260K model with its EAGLE head
// (greedy and seeded sampling) and the bundled code model with its head (greedy), 1..16 concurrent
// sequences with different prompts, drafters and lengths, each equal to its plain decoding alone.
// The cheap version on random models is test_batch_decoding.cpp.
#include <gtest/gtest.h>

#include "draft/eagle_head.h"
#include "support/batch_runs.h"
#include "support/cli.h"
#include "support/shared_data.h"
#include "support/stories.h"
#include "tokenizer/tokenizer.h"

namespace eagle2 {
namespace {

TEST(BatchDecoding, StoriesModelGreedyAndSampled) {
  EAGLE2_STORIES(s, 8);
  LlamaModel* target = s.target.get();
  EagleHead* head = s.head.get();
  const std::vector<std::vector<int32_t>>& prompts = s.prompts;
  ThreadPool pool(2);
  const auto cases = test::drafter_cases(*head, pool, target->config().vocab_size, 512);
  test::BatchRunOptions opt;
  opt.ctx = 512;
  opt.max_new_tokens = test::scaled(48);
  opt.sequence_counts = {1, 3, 8, 16};
  SamplingParams hot;
  hot.temperature = 0.8f;
  hot.top_p = 0.95f;
  hot.seed = 5;
  opt.sampling = {SamplingParams{}, hot};
  EXPECT_EQ(test::check_batch_equality(*target, cases, prompts, opt, pool), 2 * (1 + 3 + 8 + 16));
}

TEST(BatchDecoding, BundledModelGreedy) {
  auto target = LlamaModel::load(test::kBundledModel);
  auto head = EagleHead::load(test::kBundledHead, *target);
  auto tok = Tokenizer::load(test::kBundledModel + "/tokenizer.model");
  std::vector<std::vector<int32_t>> prompts;
  for (const char* text :
       {"def fibonacci(n):\n", "import os\nimport sys\n\n", "class Stack:\n    def ",
        "for i in range(10):\n", "# Read a file and count its lines\ndef "})
    prompts.push_back(tok->encode(text, true));
  ThreadPool pool(2);
  const auto cases = test::drafter_cases(*head, pool, target->config().vocab_size, 256);
  test::BatchRunOptions opt;
  opt.max_new_tokens = test::scaled(40);
  opt.sequence_counts = {1, 4, 16};
  EXPECT_EQ(test::check_batch_equality(*target, cases, prompts, opt, pool), 1 + 4 + 16);
}

}  // namespace
}  // namespace eagle2

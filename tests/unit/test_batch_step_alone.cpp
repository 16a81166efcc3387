// BatchDecoder::step_alone: one sequence steps while the others take no part and keep their
// state, each sequence's tokens still exactly its own plain decoding. What the server does with
// the sequences of a failed step (docs/SERVER.md "Faults stay local"): here the step fails
// because the KV pool cannot hold both prompts at once, and each sequence alone runs to its end.
#include <gtest/gtest.h>

#include "speculative/batch_decoder.h"
#include "support/decoding.h"
#include "support/errors.h"
#include "support/random_models.h"

namespace eagle2 {
namespace {

TEST(BatchStepAlone, AStepThatFailsForTwoRunsEachAloneToItsOwnTokens) {
  auto target = test::load_random_model("batch-dec", test::tiny_config(), DType::BF16, 21, 0.3f);
  ThreadPool pool(1);
  auto kv_pool = target->make_pool(48, 16);  // 3 blocks: one 30-token prompt at a time
  BatchDecoder decoder(*target, kv_pool, 48, pool);
  GenerationOptions opt;
  opt.max_new_tokens = 8;
  opt.stop_at_eos = false;
  const std::vector<int32_t> prompt_a(30, 5), prompt_b(30, 6);
  const int64_t a = decoder.add(prompt_a, opt, nullptr);
  const int64_t b = decoder.add(prompt_b, opt, nullptr);
  EXPECT_NE(test::error_of([&] { decoder.step(); }).find("KV memory full"), std::string::npos);
  EXPECT_EQ(kv_pool->used_blocks(), 0);

  while (!decoder.finished(a)) {
    decoder.step_alone(a);
    EXPECT_TRUE(decoder.tokens(b).empty()) << "b took part in a's step";
  }
  EXPECT_EQ(decoder.tokens(a), test::plain_tokens(*target, prompt_a, opt, 48, pool));
  EXPECT_EQ(decoder.step_alone(a), 1);  // finished: nothing to do, b is the one live
  EXPECT_TRUE(decoder.tokens(b).empty());
  while (!decoder.finished(b)) decoder.step_alone(b);
  EXPECT_EQ(decoder.tokens(b), test::plain_tokens(*target, prompt_b, opt, 48, pool));
  EXPECT_EQ(kv_pool->used_blocks(), 0);
  EXPECT_EQ(test::error_of([&] { decoder.step_alone(7); }), "batch decoder: no sequence 7");
}

}  // namespace
}  // namespace eagle2

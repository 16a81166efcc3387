// BatchDecoder::step_alone: one sequence steps while the others take no part and keep their
// state, each sequence's tokens still exactly its own plain decoding. What the server does with
// the sequences of a failed step (docs/SERVER.md "Faults stay local"): here the step fails
// because the KV pool cannot hold both prompts at once, and each sequence alone runs to its end.
#include <gtest/gtest.h>

#include "draft/eagle_head.h"
#include "speculative/batch_decoder.h"
#include "speculative/eagle_drafter.h"
#include "support/decoding.h"
#include "support/errors.h"
#include "support/random_models.h"
#include "support/scripted_drafter.h"

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
  EXPECT_TRUE(decoder.last_failure_in_forward());  // so the step kept nothing: retry alone
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

// The same with EAGLE-2 dynamic trees: the step whose two trees the pool cannot hold fails in
// its forward after both were drafted; each sequence then steps alone, drafting again, and its
// tokens are still its plain decoding's.
TEST(BatchStepAlone, DraftedTreesThatFailTheForwardAreDraftedAgainAlone) {
  auto target = test::load_random_model("batch-dec", test::tiny_config(), DType::BF16, 21, 0.3f);
  auto head = EagleHead::load(test::write_random_head("batch-dec", *target), *target);
  ThreadPool pool(1);
  // 7 blocks of 16: the two 32-token prompts take 4; a tree (31 rows: the context left) takes 2.
  auto kv_pool = target->make_pool(7 * 16, 16);
  BatchDecoder decoder(*target, kv_pool, 64, pool);
  GenerationOptions opt;
  opt.max_new_tokens = 12;
  opt.stop_at_eos = false;
  EagleDrafterOptions eagle;
  eagle.context = 64;
  const std::vector<int32_t> prompt_a(32, 5), prompt_b(32, 6);
  const int64_t a = decoder.add(prompt_a, opt, std::make_unique<EagleDrafter>(*head, pool, eagle));
  const int64_t b = decoder.add(prompt_b, opt, std::make_unique<EagleDrafter>(*head, pool, eagle));
  decoder.step();  // both prompts: 4 blocks
  EXPECT_NE(test::error_of([&] { decoder.step(); }).find("KV memory full"), std::string::npos);
  ASSERT_TRUE(decoder.last_failure_in_forward());
  EXPECT_EQ(kv_pool->used_blocks(), 4);  // the trees' rows were dropped
  while (!decoder.finished(a)) decoder.step_alone(a);
  while (!decoder.finished(b)) decoder.step_alone(b);
  EXPECT_EQ(decoder.tokens(a), test::plain_tokens(*target, prompt_a, opt, 64, pool));
  EXPECT_EQ(decoder.tokens(b), test::plain_tokens(*target, prompt_b, opt, 64, pool));
  EXPECT_GT(decoder.stats(a).drafted_tokens, 0);  // it did draft trees
}

// A drafter whose accept() fails: the step fails after its forward, in verification, which is
// not a failure to retry (a sequence may be half-updated); no rows of the forward stay pending.
class FailingAccept : public test::ScriptedDrafter {
 public:
  FailingAccept() : ScriptedDrafter([](const std::vector<int32_t>&, int64_t, DraftTree&) {}) {}
  void accept(const DraftTree&, std::span<const int32_t>, const float*, int32_t) override {
    throw Error("accept failed");
  }
};

TEST(BatchStepAlone, AFailureInVerificationIsNotOneToRetry) {
  auto target = test::load_random_model("batch-dec", test::tiny_config(), DType::BF16, 21, 0.3f);
  ThreadPool pool(1);
  auto kv_pool = target->make_pool(96, 16);
  BatchDecoder decoder(*target, kv_pool, 48, pool);
  GenerationOptions opt;
  opt.max_new_tokens = 8;
  opt.stop_at_eos = false;
  decoder.add(std::vector<int32_t>(32, 5), opt, std::make_unique<FailingAccept>());
  decoder.add(std::vector<int32_t>(32, 6), opt, nullptr);
  decoder.step();  // the prompts
  EXPECT_EQ(test::error_of([&] { decoder.step(); }), "accept failed");
  EXPECT_FALSE(decoder.last_failure_in_forward());
  // Each cache holds its committed rows only: the unverified sequence its prompt (32: two blocks;
  // its pending root row would take a third), the failed one also its verified root (33: three).
  EXPECT_EQ(kv_pool->used_blocks(), 5);
}

}  // namespace
}  // namespace eagle2

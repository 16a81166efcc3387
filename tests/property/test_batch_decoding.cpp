// Many sequences decoded together in one target forward per step (BatchDecoder) produce, for each
// sequence, exactly the tokens of plain decoding of it alone: greedy and seeded sampling, 1..16
// concurrent sequences with different prompts, drafters (EAGLE-2 and EAGLE-3 dynamic/static/chain,
// lookup, the root alone, a scripted oracle) and lengths, sequences joining mid-way: batches mix
// sequences that capture target layers (EAGLE-3) with sequences that do not. Real models in
// test_batch_decoding_slow.cpp.
#include <gtest/gtest.h>

#include "draft/eagle_head.h"
#include "speculative/batch_decoder.h"
#include "speculative/drafter_spec.h"
#include "speculative/eagle_drafter.h"
#include "speculative/hybrid_drafter.h"
#include "speculative/lookup_drafter.h"
#include "speculative/shared_suffix_index.h"
#include "speculative/suffix_drafter.h"
#include "support/batch_runs.h"
#include "support/decoding.h"
#include "support/eagle3_heads.h"
#include "support/errors.h"
#include "support/random_models.h"

namespace eagle2 {
namespace {

TEST(BatchDecoding, EverySequenceEqualsItsPlainDecodingAlone) {
  auto target = test::load_random_model("batch-dec", test::tiny_config(), DType::BF16, 21, 0.3f);
  auto head = EagleHead::load(test::write_random_head("batch-dec", *target), *target);
  auto head3 = test::load_random_eagle3_head("batch-dec", *target);
  ThreadPool pool(2);
  const auto cases =
      test::drafter_cases(*head, pool, target->config().vocab_size, 256, head3.get());
  const auto prompts = test::random_prompts(3, 5, target->config().vocab_size);
  test::BatchRunOptions opt;
  SamplingParams hot;
  hot.temperature = 0.9f;
  hot.top_k = 20;
  hot.seed = 77;
  opt.sampling = {SamplingParams{}, hot};
  EXPECT_EQ(test::check_batch_equality(*target, cases, prompts, opt, pool), 2 * (1 + 2 + 5 + 16));
}

// Suffix drafters sharing one server-wide index (--suffix-scope server) among plain and lookup
// sequences: outputs published as sequences end change the trees of the sequences still decoding
// and of later batches (the same prompts again, as agents repeat requests), never their tokens.
TEST(BatchDecoding, SuffixDraftersSharingOneIndexStayExact) {
  auto target = test::load_random_model("batch-dec", test::tiny_config(), DType::BF16, 21, 0.3f);
  ThreadPool pool(2);
  auto shared = std::make_shared<SharedSuffixIndex>(SharedSuffixIndex::kMinBytes);
  std::vector<test::DrafterCase> cases;
  cases.push_back({"suffix-shared",
                   [shared](const std::vector<int32_t>&) -> std::unique_ptr<Drafter> {
                     return std::make_unique<SuffixDrafter>(SuffixParams{12, 5, 1},
                                                            SuffixParams::kMaxNodes, shared);
                   },
                   6});
  cases.push_back({"lookup",
                   [](const std::vector<int32_t>&) -> std::unique_ptr<Drafter> {
                     return std::make_unique<LookupDrafter>(3, 1, 5);
                   },
                   5});
  const auto prompts = test::random_prompts(13, 4, target->config().vocab_size);
  test::BatchRunOptions opt;
  SamplingParams hot;
  hot.temperature = 0.8f;
  hot.seed = 31;
  opt.sampling = {SamplingParams{}, hot};
  EXPECT_EQ(test::check_batch_equality(*target, cases, prompts, opt, pool), 2 * (1 + 2 + 5 + 16));
  EXPECT_GT(shared->documents(), 0);  // the outputs were published
}

// Auto-budget drafters whose trees are sized together for each step (choose_batch_budget), among
// drafters of fixed size and plain decoding: the tree sizes change with the company, the tokens
// never do. The scripted cost makes rows free up to 12 and dear after, so that the choice really
// varies with the number of sequences and their candidates.
TEST(BatchDecoding, BatchWideTreeBudgetsKeepEverySequenceExact) {
  auto target = test::load_random_model("batch-dec", test::tiny_config(), DType::BF16, 21, 0.3f);
  auto head = EagleHead::load(test::write_random_head("batch-dec", *target), *target);
  // Two EAGLE-3 heads reading different layers in different orders: one step's forward captures
  // the union, and each drafter gets its own layers (drafted in lockstep per head, catch-up rows
  // of features, later rows of head outputs).
  auto head3 = test::load_random_eagle3_head("batch-dec", *target);
  auto head3b =
      test::load_random_eagle3_head("batch-dec-b", *target, {.aux_layers = {1}, .seed = 8});
  ThreadPool pool(2);
  const VerifyCostModel curve({{1, 1e-3}, {12, 1.1e-3}, {64, 6e-3}});
  auto cost = std::make_shared<const VerifyCostModel>(curve);
  std::vector<test::DrafterCase> cases;
  for (EagleHead* h : {head.get(), head3.get(), head3b.get()}) {
    auto policy = std::make_shared<DraftPolicy>(cost);  // policies are per head
    for (bool calibrate : {true, false}) {
      EagleDrafterOptions o;
      o.auto_budget = true;
      o.calibrate = calibrate;
      o.dynamic.top_k = 4;
      o.dynamic.depth = 3;
      o.context = 256;
      cases.push_back(
          {std::string(calibrate ? "auto-cal-" : "auto-") + std::to_string(cases.size()),
           [h, &pool, o, policy](const std::vector<int32_t>&) -> std::unique_ptr<Drafter> {
             return std::make_unique<EagleDrafter>(*h, pool, o, policy);
           },
           4});
    }
  }
  {
    // A hybrid tree whose size the batch chooses from its merged values (head and suffix), its
    // suffix part drafting from a server-wide index too.
    auto policy = std::make_shared<DraftPolicy>(cost);
    auto shared = std::make_shared<SharedSuffixIndex>(SharedSuffixIndex::kMinBytes);
    EagleDrafterOptions o;
    o.auto_budget = true;
    o.calibrate = true;
    o.record_outcomes = false;
    o.dynamic.top_k = 4;
    o.dynamic.depth = 3;
    o.context = 256;
    cases.push_back({"auto-hybrid",
                     [&head, &pool, o, policy, shared](const std::vector<int32_t>&) {
                       return std::unique_ptr<Drafter>(std::make_unique<HybridDrafter>(
                           std::make_unique<EagleDrafter>(*head, pool, o, policy),
                           std::make_unique<SuffixDrafter>(SuffixParams{12, 5, 1},
                                                           SuffixParams::kMaxNodes, shared),
                           policy, DrafterSpec::kAutoMaxTokens));
                     },
                     6});
  }
  const auto fixed = test::drafter_cases(*head, pool, target->config().vocab_size, 256);
  cases.push_back(fixed[4]);  // chain-3
  cases.push_back(fixed[6]);  // none
  const auto prompts = test::random_prompts(3, 5, target->config().vocab_size);
  test::BatchRunOptions opt;
  opt.batch_cost = std::make_shared<const BatchCostModel>(BatchCostModel::single(curve));
  SamplingParams hot;
  hot.temperature = 0.9f;
  hot.seed = 5;
  opt.sampling = {SamplingParams{}, hot};
  EXPECT_EQ(test::check_batch_equality(*target, cases, prompts, opt, pool), 2 * (1 + 2 + 5 + 16));
}

TEST(BatchDecoding, BadSequencesAreErrors) {
  auto target = test::load_random_model("batch-dec", test::tiny_config(), DType::BF16, 21, 0.3f);
  ThreadPool pool(1);
  BatchDecoder decoder(*target, target->make_pool(64), 32, pool);
  EXPECT_EQ(test::error_of([&] { decoder.add({}, {}, nullptr); }), "the prompt is empty");
  EXPECT_EQ(test::error_of([&] { decoder.add(std::vector<int32_t>(33, 1), {}, nullptr); }),
            "the prompt has 33 tokens but the context holds 32 (raise --ctx)");
  EXPECT_EQ(test::error_of([&] { decoder.tokens(0); }), "batch decoder: no sequence 0");
  // A context that stops a sequence: it finishes at the end of its context, as alone.
  GenerationOptions opt;
  opt.max_new_tokens = 100;
  opt.stop_at_eos = false;
  const int64_t id = decoder.add(std::vector<int32_t>(30, 2), opt, nullptr);
  while (decoder.step() > 0) {
  }
  EXPECT_TRUE(decoder.stats(id).stopped_at_context);
  EXPECT_EQ(decoder.tokens(id).size(), 3u);  // the root from the prefill, then 2 more slots
  decoder.remove(id);
  EXPECT_EQ(test::error_of([&] { decoder.finished(id); }), "batch decoder: no sequence 0");
}

// Two prompts that the pool cannot hold together: the step fails with the pool's message and
// leaves no block held; with one of them removed, the other decodes as it would alone.
TEST(BatchDecoding, APoolTooSmallFailsTheStepAndHoldsNothing) {
  auto target = test::load_random_model("batch-dec", test::tiny_config(), DType::BF16, 21, 0.3f);
  ThreadPool pool(1);
  auto kv_pool = target->make_pool(48, 16);
  BatchDecoder decoder(*target, kv_pool, 48, pool);
  GenerationOptions opt;
  opt.max_new_tokens = 8;
  const std::vector<int32_t> prompt(30, 5);
  const int64_t a = decoder.add(prompt, opt, nullptr);
  const int64_t b = decoder.add(std::vector<int32_t>(30, 6), opt, nullptr);
  EXPECT_EQ(
      test::error_of([&] { decoder.step(); }),
      "KV memory full: a batch of 30 tokens needs 2 more blocks of 16 tokens, 1 of 3 are free");
  EXPECT_EQ(kv_pool->used_blocks(), 0);
  decoder.remove(b);
  while (decoder.step() > 0) {
  }
  EXPECT_EQ(decoder.tokens(a), test::plain_tokens(*target, prompt, opt, 48, pool));
  EXPECT_EQ(kv_pool->used_blocks(), 0);
}

}  // namespace
}  // namespace eagle2

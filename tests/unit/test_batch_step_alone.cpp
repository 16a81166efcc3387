// BatchDecoder's faults stay per sequence. step_alone: one sequence steps while the others take
// no part and keep their state, each sequence's tokens still exactly its own plain decoding. What
// the server does with the sequences of a step that failed in its forward (docs/SERVER.md "Faults
// stay local"): here the step fails because the KV pool cannot hold both prompts at once, and each
// sequence alone runs to its end. A failure in one sequence's drafting or verification fails that
// sequence alone (failed_in_last_step()) while the others decode on.
#include <gtest/gtest.h>

#include <algorithm>

#include "draft/eagle_head.h"
#include "speculative/batch_decoder.h"
#include "speculative/draft_policy.h"
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

// A scripted drafter (random trees) that fails once, in its `failing`-th call of accept() (after
// its sequence's cache kept the path and the tokens were emitted: a half-updated sequence), of
// draft() (before the forward: nothing of the target committed), or of complete() (In::Complete:
// then its tree size is choosable, so with a batch cost model it waits for the batch-wide budget
// and fails there, in the step's second phase).
class FailingDrafter : public test::ScriptedDrafter {
 public:
  enum class In { Accept, Draft, Complete };
  FailingDrafter(int64_t vocab, In in, int failing)
      : ScriptedDrafter(test::random_tree_script(vocab, 7)), in_(in), failing_(failing) {}
  void draft(int64_t max_tokens, DraftTree& tree) override {
    ScriptedDrafter::draft(max_tokens, tree);
    if (in_ == In::Draft && ++calls_ == failing_) throw Error("draft failed");
  }
  void accept(const DraftTree& tree, std::span<const int32_t> path, const float* features,
              int32_t bonus) override {
    ScriptedDrafter::accept(tree, path, features, bonus);
    if (in_ == In::Accept && ++calls_ == failing_) throw Error("accept failed");
  }
  bool choosable() const override { return in_ == In::Complete; }
  Proposal propose(int64_t max_tokens) override {
    if (in_ != In::Complete) return ScriptedDrafter::propose(max_tokens);
    proposed_ = max_tokens;
    values_.clear();  // a tree of T tokens keeps the first T - 1 values, best first
    for (int64_t j = 1; j < max_tokens; ++j) values_.push_back(-0.1f * static_cast<float>(j));
    return Proposal{true, values_, 1, max_tokens, 0};
  }
  void complete(int64_t total_tokens, DraftTree& tree) override {
    if (in_ != In::Complete) return ScriptedDrafter::complete(total_tokens, tree);
    ScriptedDrafter::draft(std::clamp<int64_t>(total_tokens, 1, proposed_), tree);
    if (++calls_ == failing_) throw Error("complete failed");
  }

 private:
  In in_;
  int failing_, calls_ = 0;
  int64_t proposed_ = 1;
  std::vector<float> values_;
};

// Sequence a decodes with EAGLE-2 dynamic trees, b with a drafter that fails in its second cycle:
// b fails alone (reported, finished, its KV memory released), the step does not throw, and a
// decodes on to exactly its solo tokens; the pool holds a's committed rows only. with_cost: as the
// server runs it, with a batch cost model: a's tree size (auto budget) is chosen for the whole
// step with b's proposal, and a is drafted in lockstep (the second phase, complete(), too).
void b_fails_alone_while_a_decodes_on(FailingDrafter::In in, const std::string& message,
                                      bool with_cost = false) {
  auto target = test::load_random_model("batch-dec", test::tiny_config(), DType::BF16, 21, 0.3f);
  auto head = EagleHead::load(test::write_random_head("batch-dec", *target), *target);
  ThreadPool pool(1);
  auto kv_pool = target->make_pool(10 * 16, 16);
  const VerifyCostModel curve({{1, 1e-3}, {12, 1.1e-3}, {64, 6e-3}});
  BatchDecoder decoder(
      *target, kv_pool, 64, pool,
      with_cost ? std::make_shared<const BatchCostModel>(BatchCostModel::single(curve)) : nullptr);
  GenerationOptions opt;
  opt.max_new_tokens = 16;
  opt.stop_at_eos = false;
  EagleDrafterOptions eagle;
  eagle.context = 64;
  eagle.auto_budget = with_cost;
  eagle.dynamic.top_k = 4;
  eagle.dynamic.depth = 3;
  auto policy = std::make_shared<DraftPolicy>(std::make_shared<const VerifyCostModel>(curve));
  const std::vector<int32_t> prompt_a(32, 5), prompt_b(32, 6);
  const int64_t a =
      decoder.add(prompt_a, opt, std::make_unique<EagleDrafter>(*head, pool, eagle, policy));
  const int64_t b = decoder.add(
      prompt_b, opt, std::make_unique<FailingDrafter>(target->config().vocab_size, in, 2));
  decoder.step();  // the prompts
  EXPECT_TRUE(decoder.failed_in_last_step().empty());
  decoder.step();  // b's first cycle
  EXPECT_TRUE(decoder.failed_in_last_step().empty());
  EXPECT_FALSE(decoder.finished(b));
  const size_t a_before = decoder.tokens(a).size();
  EXPECT_EQ(decoder.step(), 1);  // b fails: a is the one live
  EXPECT_EQ(decoder.failed_in_last_step(), std::vector<int64_t>{b});
  // The step's report counts a's verification alone (b's tokens reach no one).
  EXPECT_EQ(decoder.last_step().accepted.size(), 1u) << message;
  EXPECT_EQ(decoder.last_step().committed,
            static_cast<int64_t>(decoder.tokens(a).size() - a_before))
      << message;
  EXPECT_TRUE(decoder.finished(b));
  EXPECT_TRUE(decoder.failed(b));
  EXPECT_FALSE(decoder.failed(a));
  EXPECT_FALSE(decoder.last_failure_in_forward());
  // a's cache: its prompt and every token but its root (the next tree's first row).
  const auto committed = static_cast<int64_t>(prompt_a.size() + decoder.tokens(a).size()) - 1;
  EXPECT_EQ(kv_pool->used_blocks(), (committed + 15) / 16) << message;
  // A no-op step_alone (b has finished) reports on itself, not on the step before it.
  EXPECT_EQ(decoder.step_alone(b), 1);
  EXPECT_TRUE(decoder.failed_in_last_step().empty());
  while (!decoder.finished(a)) {
    decoder.step();
    EXPECT_TRUE(decoder.failed_in_last_step().empty());
  }
  EXPECT_EQ(decoder.tokens(a), test::plain_tokens(*target, prompt_a, opt, 64, pool));
  EXPECT_GT(decoder.stats(a).drafted_tokens, 0);  // it did draft trees
  EXPECT_EQ(kv_pool->used_blocks(), 0);
  // Later steps cleared failed_in_last_step(); failed() still tells b's end from a's length stop.
  EXPECT_TRUE(decoder.failed(b));
  EXPECT_FALSE(decoder.failed(a));
}

TEST(BatchStepAlone, AFailureInVerificationFailsThatSequenceAlone) {
  b_fails_alone_while_a_decodes_on(FailingDrafter::In::Accept, "accept");
}

TEST(BatchStepAlone, AFailureInDraftingFailsThatSequenceAlone) {
  b_fails_alone_while_a_decodes_on(FailingDrafter::In::Draft, "draft");
}

TEST(BatchStepAlone, AFailureInVerificationFailsThatSequenceAloneUnderABatchCostModel) {
  b_fails_alone_while_a_decodes_on(FailingDrafter::In::Accept, "accept", true);
}

TEST(BatchStepAlone, AFailureInDraftingFailsThatSequenceAloneUnderABatchCostModel) {
  b_fails_alone_while_a_decodes_on(FailingDrafter::In::Draft, "draft", true);
}

// b's tree size is the batch's to choose: it fails in complete(), after the budget was chosen for
// it and a; a's tree, sized with b's proposal, still verifies to a's solo tokens.
TEST(BatchStepAlone, AFailureInCompletingAChosenTreeFailsThatSequenceAlone) {
  b_fails_alone_while_a_decodes_on(FailingDrafter::In::Complete, "complete", true);
}

// A step where b's drafting fails and then the forward of a's and c's trees fails too (the pool
// cannot hold both): b is reported as failed alone (a server must not retry it), the step is one
// to retry, and a and c stepped alone end with their solo tokens.
TEST(BatchStepAlone, ADraftingFailureIsReportedWhenTheForwardFailsToo) {
  auto target = test::load_random_model("batch-dec", test::tiny_config(), DType::BF16, 21, 0.3f);
  auto head = EagleHead::load(test::write_random_head("batch-dec", *target), *target);
  ThreadPool pool(1);
  // 7 blocks of 16: three 32-token prompts take 6; b's 2 go back when it fails, and a tree (31
  // rows: the context left) takes 2, so two trees do not fit but one does.
  auto kv_pool = target->make_pool(7 * 16, 16);
  BatchDecoder decoder(*target, kv_pool, 64, pool);
  GenerationOptions opt;
  opt.max_new_tokens = 12;
  opt.stop_at_eos = false;
  EagleDrafterOptions eagle;
  eagle.context = 64;
  const std::vector<int32_t> prompt_a(32, 5), prompt_b(32, 6), prompt_c(32, 7);
  const int64_t a = decoder.add(prompt_a, opt, std::make_unique<EagleDrafter>(*head, pool, eagle));
  const int64_t b = decoder.add(
      prompt_b, opt,
      std::make_unique<FailingDrafter>(target->config().vocab_size, FailingDrafter::In::Draft, 1));
  const int64_t c = decoder.add(prompt_c, opt, std::make_unique<EagleDrafter>(*head, pool, eagle));
  decoder.step();  // the prompts: 6 blocks
  EXPECT_NE(test::error_of([&] { decoder.step(); }).find("KV memory full"), std::string::npos);
  ASSERT_TRUE(decoder.last_failure_in_forward());
  EXPECT_EQ(decoder.failed_in_last_step(), std::vector<int64_t>{b});
  EXPECT_TRUE(decoder.finished(b));
  EXPECT_EQ(kv_pool->used_blocks(), 4);  // a's and c's prompts
  while (!decoder.finished(a)) decoder.step_alone(a);
  while (!decoder.finished(c)) decoder.step_alone(c);
  EXPECT_EQ(decoder.tokens(a), test::plain_tokens(*target, prompt_a, opt, 64, pool));
  EXPECT_EQ(decoder.tokens(c), test::plain_tokens(*target, prompt_c, opt, 64, pool));
  EXPECT_EQ(kv_pool->used_blocks(), 0);
}

// When every sequence of the step fails alone, the step fails (as a step of one always did), with
// the first failure, and reports them; nothing of the forward stays in the pool.
TEST(BatchStepAlone, AStepWhoseEverySequenceFailsThrows) {
  auto target = test::load_random_model("batch-dec", test::tiny_config(), DType::BF16, 21, 0.3f);
  ThreadPool pool(1);
  auto kv_pool = target->make_pool(96, 16);
  BatchDecoder decoder(*target, kv_pool, 48, pool);
  GenerationOptions opt;
  opt.max_new_tokens = 8;
  opt.stop_at_eos = false;
  const int64_t vocab = target->config().vocab_size;
  const int64_t a =
      decoder.add(std::vector<int32_t>(32, 5), opt,
                  std::make_unique<FailingDrafter>(vocab, FailingDrafter::In::Accept, 1));
  const int64_t b =
      decoder.add(std::vector<int32_t>(32, 6), opt,
                  std::make_unique<FailingDrafter>(vocab, FailingDrafter::In::Accept, 1));
  decoder.step();  // the prompts
  EXPECT_EQ(test::error_of([&] { decoder.step(); }), "accept failed");
  EXPECT_FALSE(decoder.last_failure_in_forward());
  EXPECT_EQ(decoder.failed_in_last_step(), (std::vector<int64_t>{a, b}));
  EXPECT_EQ(decoder.live(), 0);
  EXPECT_EQ(kv_pool->used_blocks(), 0);
}

}  // namespace
}  // namespace eagle2

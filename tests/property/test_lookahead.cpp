// Lookahead decoding end to end (speculative/lookahead_drafter.h): its output equals plain
// decoding, greedy and seeded sampling, alone and in a BatchDecoder's company, on the stories260K
// model (where its n-grams are accepted: none, part or all of one) and on random models with
// edge-case W, N, G and a context that runs out; and what it accepts comes from the Jacobi
// trajectories, not from the prompt: some accepted n-grams occur nowhere in it.
#include <gtest/gtest.h>

#include <algorithm>

#include "speculative/batch_decoder.h"
#include "speculative/lookahead_drafter.h"
#include "support/batch_runs.h"
#include "support/decoding.h"
#include "support/equality_runs.h"
#include "support/random_models.h"
#include "support/stories.h"

namespace eagle2 {
namespace {

// Cycles whose verification branch held n-grams, by how much of one was accepted.
struct NgramOutcomes {
  int64_t none = 0, partial = 0, full = 0;
  std::vector<std::vector<int32_t>> accepted;  // root + accepted tokens, per accepting cycle
};

SpeculativeHooks counting(NgramOutcomes& o, int ngram_size) {
  SpeculativeHooks hooks;
  hooks.trace = [&o, ngram_size](const CycleTrace& c) {
    if (c.tree.verifiable_size() <= 1) return;  // no n-gram for this root
    const int64_t a = c.verdict.accepted();
    (a == 0 ? o.none : a == ngram_size - 1 ? o.full : o.partial) += 1;
    if (a == 0) return;
    std::vector<int32_t> gram;
    for (const int32_t node : c.verdict.path)
      gram.push_back(c.tree.tokens[static_cast<size_t>(node)]);
    o.accepted.push_back(gram);
  };
  return hooks;
}

test::DrafterCase lookahead_case(LookaheadParams p) {
  return {"lookahead-" + std::to_string(p.window) + "-" + std::to_string(p.ngram_size) + "-" +
              std::to_string(p.verify_ngrams),
          [p](const std::vector<int32_t>&) -> std::unique_ptr<Drafter> {
            return std::make_unique<LookaheadDrafter>(p);
          },
          p.ngram_size - 1};
}

SamplingParams hot(uint64_t seed) {
  SamplingParams sp;
  sp.temperature = 0.8f;
  sp.top_p = 0.95f;
  sp.seed = seed;
  return sp;
}

// stories260K repeats itself enough for n-grams to be accepted. Each run equals plain decoding,
// and the runs together saw n-grams rejected outright, accepted in part and accepted whole.
TEST(Lookahead, StoriesModelGreedyAndSampledWithEveryKindOfAcceptance) {
  EAGLE2_STORIES(s, 8);
  ThreadPool pool(2);
  const std::vector<LookaheadParams> configs = {{5, 3, 3}, {8, 4, 6}, {3, 5, 2}};
  for (const bool sampled : {false, true}) {
    GenerationOptions opt;
    opt.max_new_tokens = 64;
    std::vector<NgramOutcomes> outcomes(configs.size());
    for (size_t k = 0; k < s.prompts.size(); ++k) {
      if (sampled) opt.sampling = hot(11 + k);
      const auto plain = test::plain_tokens(*s.target, s.prompts[k], opt, 512, pool);
      for (size_t c = 0; c < configs.size(); ++c) {
        LookaheadDrafter d(configs[c]);
        EXPECT_EQ(test::speculative_tokens(*s.target, d, s.prompts[k], opt, 512, pool,
                                           counting(outcomes[c], configs[c].ngram_size)),
                  plain)
            << lookahead_case(configs[c]).name << (sampled ? ", sampled" : ", greedy")
            << ", prompt " << k;
      }
    }
    for (size_t c = 0; c < configs.size(); ++c) {
      const NgramOutcomes& o = outcomes[c];
      const std::string name = lookahead_case(configs[c]).name + (sampled ? " sampled" : " greedy");
      SCOPED_TRACE(name);
      std::printf("%s: n-grams rejected %lld, accepted in part %lld, whole %lld\n", name.c_str(),
                  static_cast<long long>(o.none), static_cast<long long>(o.partial),
                  static_cast<long long>(o.full));
      EXPECT_GT(o.none, 0) << "no n-gram was rejected outright";
      EXPECT_GT(o.full, 0) << "no n-gram was accepted whole";
      EXPECT_GT(o.partial, 0) << "no n-gram was accepted in part";
    }
  }
}

// The pool holds only what the Jacobi iterations produced: accepted n-grams that occur nowhere in
// the prompt (prompt lookup could never have proposed them).
TEST(Lookahead, AcceptsNgramsThatThePromptNeverHeld) {
  EAGLE2_STORIES(s, 10);
  ThreadPool pool(2);
  GenerationOptions opt;
  opt.max_new_tokens = 64;
  int64_t novel = 0, accepted = 0;
  for (const std::vector<int32_t>& prompt : s.prompts) {
    NgramOutcomes o;
    LookaheadDrafter d({5, 3, 3});
    test::speculative_tokens(*s.target, d, prompt, opt, 512, pool, counting(o, 3));
    for (const std::vector<int32_t>& gram : o.accepted) {
      ++accepted;
      EXPECT_GE(gram.size(), 2u);
      if (std::search(prompt.begin(), prompt.end(), gram.begin(), gram.end()) == prompt.end())
        ++novel;
    }
  }
  EXPECT_GT(novel, 0) << "every one of the " << accepted << " accepted n-grams was in its prompt";
  std::printf("accepted n-grams: %lld, not in their prompt: %lld\n",
              static_cast<long long>(accepted), static_cast<long long>(novel));
}

// Random models (little is accepted there, but every path of the drafter runs): edge-case
// parameters (one column, N = 2, G = 0, a window wider than the n-grams), greedy and sampled, and
// a context so tight that the trees shrink every cycle towards its end.
TEST(Lookahead, RandomModelEdgeParametersAndTightContext) {
  auto target = test::load_random_model("lookahead", test::tiny_config(), DType::BF16, 21, 0.3f);
  ThreadPool pool(2);
  std::vector<test::DrafterCase> cases;
  for (const LookaheadParams& p : std::vector<LookaheadParams>{
           {1, 2, 0}, {1, 2, 1}, {3, 2, 2}, {2, 6, 3}, {16, 3, 16}, {4, 4, 0}})
    cases.push_back(lookahead_case(p));
  const auto prompts = test::random_prompts(9, 3, target->config().vocab_size);
  test::Coverage cov;
  GenerationOptions opt;
  opt.max_new_tokens = 32;
  for (const SamplingParams& sp : {SamplingParams{}, hot(3)}) {
    opt.sampling = sp;
    test::check_equality(*target, cases, prompts, opt, 512, pool, cov);
  }
  opt.max_new_tokens = 100;
  opt.stop_at_eos = false;
  for (const SamplingParams& sp : {SamplingParams{}, hot(4)}) {
    opt.sampling = sp;
    test::check_equality(*target, cases, {{1, 5, 7, 9}}, opt, 40, pool, cov);
  }
}

// In a BatchDecoder's company (other lookahead sequences, plain ones, continuous joins), each
// lookahead sequence decodes to its tokens alone: the target's argmax per node reaches each
// drafter from its own rows of the shared forward.
TEST(Lookahead, InABatchEverySequenceEqualsItsSoloDecoding) {
  EAGLE2_STORIES(s, 6);
  ThreadPool pool(2);
  const std::vector<test::DrafterCase> cases = {
      lookahead_case({5, 3, 3}),
      {"none", [](const std::vector<int32_t>&) -> std::unique_ptr<Drafter> { return nullptr; }, 0},
      lookahead_case({8, 4, 6}),
      lookahead_case({2, 2, 1})};
  test::BatchRunOptions opt;
  opt.ctx = 512;
  opt.max_new_tokens = 48;
  opt.sequence_counts = {1, 4, 7};
  opt.sampling = {SamplingParams{}, hot(9)};
  EXPECT_EQ(test::check_batch_equality(*s.target, cases, s.prompts, opt, pool), 2 * (1 + 4 + 7));
}

// Not only the tokens: cycle for cycle, a lookahead sequence in company accepts what it accepts
// alone (its drafter saw the same target outputs at every node), and it does accept n-grams
// there (without the target's outputs its pool would stay empty).
TEST(Lookahead, InABatchEachDrafterSeesItsOwnRows) {
  EAGLE2_STORIES(s, 4);
  ThreadPool pool(2);
  const std::vector<LookaheadParams> params = {{5, 3, 3}, {8, 4, 6}, {4, 3, 2}, {5, 3, 3}};
  GenerationOptions opt;
  opt.max_new_tokens = 64;
  BatchDecoder decoder(*s.target, s.target->make_pool(5 * 512, 16), 512, pool);
  std::vector<int64_t> ids;
  for (size_t k = 0; k < params.size(); ++k)
    ids.push_back(decoder.add(s.prompts[k], opt, std::make_unique<LookaheadDrafter>(params[k])));
  const int64_t plain = decoder.add(s.prompts[0], opt, nullptr);
  while (decoder.step() > 0) {
  }
  for (size_t k = 0; k < params.size(); ++k) {
    LookaheadDrafter alone(params[k]);
    SpeculativeStats st;
    EXPECT_EQ(decoder.tokens(ids[k]),
              test::speculative_tokens(*s.target, alone, s.prompts[k], opt, 512, pool, {}, &st));
    EXPECT_EQ(decoder.stats(ids[k]).accept_histogram, st.accept_histogram) << "sequence " << k;
    EXPECT_GT(st.accept_histogram.size(), 1u) << "sequence " << k << " accepted nothing";
  }
  EXPECT_EQ(decoder.tokens(plain), test::plain_tokens(*s.target, s.prompts[0], opt, 512, pool));
}

}  // namespace
}  // namespace eagle2

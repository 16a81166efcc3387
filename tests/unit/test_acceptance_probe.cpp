// The acceptance probe (speculative/acceptance_probe.h): TV and acceptance per depth along the
// target's sampled path. A constructed case with known values, a draft that is the target itself
// (TV 0 at every temperature), and the probe's per-root chain agreeing with what the speculative
// loop accepts at every cycle's root, for a real EAGLE head and a random EAGLE-3 one.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "core/error.h"
#include "speculative/acceptance_probe.h"
#include "speculative/eagle_drafter.h"
#include "support/decoding.h"
#include "support/eagle3_heads.h"
#include "support/random_models.h"
#include "support/stories.h"

namespace eagle2 {
namespace {

TEST(AcceptanceProbe, ComparePairGivesTheKnownValuesOfAConstructedCase) {
  const Distribution p{{0.5, 0.3, 0.2, 0.0}};
  const Distribution q{{0.2, 0.2, 0.2, 0.4}};
  // The draft ranks by its raw logits: token 3, then the tie 0, 1, 2 towards the lower id.
  const float logits[4] = {std::log(0.2f), std::log(0.2f), std::log(0.2f), std::log(0.4f)};
  const PairAcceptance a = compare_pair(p, q, logits, 4, /*target_token=*/0, 2, 0.1, 0.99);
  EXPECT_NEAR(a.tv, 0.4, 1e-12);  // (0.3 + 0.1 + 0 + 0.4) / 2
  EXPECT_DOUBLE_EQ(a.top1_expected, 0.0);
  EXPECT_DOUBLE_EQ(a.top1_ceiling, 0.5);
  EXPECT_DOUBLE_EQ(a.topk_expected, 0.5);  // tokens 3 and 0
  EXPECT_DOUBLE_EQ(a.topk_ceiling, 0.8);
  EXPECT_NEAR(a.entropy, -(0.5 * std::log(0.5) + 0.3 * std::log(0.3) + 0.2 * std::log(0.2)), 1e-12);
  EXPECT_FALSE(a.top1_hit);
  EXPECT_TRUE(a.topk_hit);
  EXPECT_TRUE(a.sampled_accept);  // u 0.1 draws token 0, p/q = 2.5: always accepted
  EXPECT_FALSE(compare_pair(p, q, logits, 4, 0, 2, 0.9, 0.0).sampled_accept);  // token 3, p = 0

  // Over a grid of both uniforms the sampled acceptance is 1 - TV.
  int accepted = 0, n = 400;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      accepted += compare_pair(p, q, logits, 4, 0, 1, (i + 0.5) / n, (j + 0.5) / n).sampled_accept;
  EXPECT_NEAR(static_cast<double>(accepted) / (n * n), 0.6, 2e-3);
}

TEST(AcceptanceProbe, ADraftThatIsTheTargetHasNoMismatchAtAnyTemperature) {
  auto target = test::load_random_model("acceptance-probe", test::tiny_config());
  ThreadPool pool(1);
  ModelPathSource same(*target, *target, pool);
  for (const float temperature : {0.0f, 0.7f, 1.0f}) {
    AcceptanceProbeOptions o;
    o.sampling.temperature = temperature;
    o.sampling.top_p = temperature == 0.7f ? 0.9f : 1.0f;
    o.sampling.seed = 11;
    o.depth = 3;
    o.new_tokens = 24;
    o.stop_at_eos = false;
    AcceptanceTally tally;
    probe_acceptance(*target, same, {1, 5, 9}, o, pool, tally);
    probe_acceptance(*target, same, {1, 17}, o, pool, tally);
    ASSERT_EQ(tally.depths.size(), 3u);
    EXPECT_EQ(tally.prompts, 2);
    EXPECT_EQ(tally.new_tokens, 48);
    EXPECT_EQ(tally.roots, 2 * 23);
    for (const DepthTally& t : tally.depths) {
      ASSERT_GT(t.pairs, 0);
      EXPECT_EQ(t.tv, 0.0) << "temperature " << temperature;
      EXPECT_EQ(t.sampled, static_cast<double>(t.pairs));
      EXPECT_DOUBLE_EQ(t.top1_expected, t.top1_ceiling);
      EXPECT_DOUBLE_EQ(t.topk_expected, t.topk_ceiling);
      if (temperature == 0) {
        EXPECT_EQ(t.top1, static_cast<double>(t.pairs));
      }
    }
    EXPECT_EQ(tally.sampled_chain, 3 * tally.full_roots);
  }
  // A draft of another vocabulary is refused.
  LlamaConfig other = test::tiny_config();
  other.vocab_size += 1;
  auto wider = test::load_random_model("acceptance-probe-wider", other);
  EXPECT_THROW(ModelPathSource(*wider, *target, pool), Error);
}

// Runs the chain drafter through the speculative loop and checks, at every cycle's root, that the
// probe's rank-1 tokens are the chain's drafted tokens up to the first rejected one and that the
// probe's chain length is what verification accepted.
void expect_probe_matches_the_loop(LlamaModel& target, EagleHead& head,
                                   const std::vector<int32_t>& prompt, float temperature,
                                   int64_t* accepted_total) {
  constexpr int kChainDepth = 3;  // chain:3 drafts 4 tokens
  ThreadPool pool(1);
  EagleDrafterOptions eo;
  eo.shape = EagleDrafterOptions::Shape::Chain;
  eo.chain_depth = kChainDepth;
  eo.context = 256;
  EagleDrafter drafter(head, pool, eo);
  GenerationOptions g;
  g.max_new_tokens = 40;
  g.stop_at_eos = false;
  g.sampling.temperature = temperature;
  g.sampling.seed = 5;
  struct Cycle {
    int64_t root;
    std::vector<int32_t> chain;
    int64_t accepted;
  };
  std::vector<Cycle> cycles;
  SpeculativeHooks hooks;
  hooks.trace = [&](const CycleTrace& t) {
    cycles.push_back({t.committed, t.tree.tokens, t.verdict.accepted()});
  };
  const std::vector<int32_t> out =
      test::speculative_tokens(target, drafter, prompt, g, 256, pool, hooks);

  AcceptanceProbeOptions o;
  o.sampling = g.sampling;
  o.depth = kChainDepth + 1;
  o.new_tokens = g.max_new_tokens;
  o.stop_at_eos = false;
  EagleHeadPathSource source(head, target, pool, 256);
  AcceptanceTally tally;
  std::vector<int32_t> runs;
  // The probe's path is plain decoding's: the loop's output (lossless).
  ASSERT_EQ(probe_acceptance(target, source, prompt, o, pool, tally, &runs), out);

  std::vector<int32_t> path = prompt;
  path.insert(path.end(), out.begin(), out.end());
  const auto P = static_cast<int64_t>(prompt.size()), L = static_cast<int64_t>(path.size());
  const PathForward fw = forward_path(target, path, P, head.feature_layers(), pool);
  source.begin(path, fw.features.data(), P);
  const int64_t vocab = target.config().vocab_size;
  std::vector<float> logits(static_cast<size_t>(o.depth * vocab));
  int64_t compared = 0;
  for (const Cycle& c : cycles) {
    const auto drafted = static_cast<int64_t>(c.chain.size()) - 1;
    // The last cycles may draft (and accept) past the tokens the loop kept: no path there.
    if (drafted < 1 || c.root + drafted > L - 1) continue;
    const auto depth = static_cast<int>(drafted);
    EXPECT_EQ(c.accepted, runs[static_cast<size_t>(c.root - P)]) << "root " << c.root;
    source.draft_logits(c.root, depth, logits.data());
    for (int k = 1; k <= std::min<int64_t>(depth, c.accepted + 1); ++k) {
      const int32_t top = argmax(&logits[static_cast<size_t>((k - 1) * vocab)], vocab);
      EXPECT_EQ(top, c.chain[static_cast<size_t>(k)]) << "root " << c.root << " depth " << k;
    }
    ++compared;
    *accepted_total += c.accepted;
  }
  EXPECT_GT(compared, 5);
}

TEST(AcceptanceProbe, ItsChainIsWhatTheLoopDraftsAndAcceptsWithARealEagleHead) {
  EAGLE2_STORIES(s, 2);
  int64_t accepted = 0;
  for (const float temperature : {0.0f, 0.8f})
    for (const auto& prompt : s.prompts)
      expect_probe_matches_the_loop(*s.target, *s.head, prompt, temperature, &accepted);
  EXPECT_GT(accepted, 10);  // the check covers accepted levels, not only first rejections
}

TEST(AcceptanceProbe, ItsChainIsWhatTheLoopDraftsWithAnEagle3HeadsFeatureLayers) {
  LlamaConfig c = test::tiny_config();
  c.num_layers = 7;  // deep enough for the default feature layers {2, 3, 4}
  auto target = test::load_random_model("acceptance-probe-e3", c, DType::F32, 3, 0.3f);
  auto head = test::load_random_eagle3_head("acceptance-probe-e3", *target);
  int64_t accepted = 0;
  for (const float temperature : {0.0f, 1.0f})
    expect_probe_matches_the_loop(*target, *head, {1, 4, 7, 2}, temperature, &accepted);
}

}  // namespace
}  // namespace eagle2

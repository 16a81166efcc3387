// Lossless sampling: the first tokens generated speculatively follow exactly the target's
// distribution (computed by enumeration on a small-vocabulary model), for scripted trees, a
// random EAGLE head and lookahead decoding's n-grams, with temperature, top-k and top-p, under
// the position-keyed rule (verify_sampling) and, on mixed trees, the sequential rejection rule
// (verify_sampling_rejection).
// Deliberately broken verifiers must fail the very same test (same samples, same threshold). And
// many sequences per step (BatchDecoder, the server's engine): the same distribution.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <numeric>
#include <random>

#include "draft/eagle_head.h"
#include "sampling/position_random.h"
#include "sampling/rng.h"
#include "speculative/batch_decoder.h"
#include "speculative/eagle_drafter.h"
#include "speculative/hydra_drafter.h"
#include "speculative/lookahead_drafter.h"
#include "speculative/lookup_drafter.h"
#include "speculative/medusa_drafter.h"
#include "speculative/speculative_decoder.h"
#include "speculative/sps_drafter.h"
#include "speculative/verify.h"
#include "support/broken_verifiers.h"
#include "support/eagle3_heads.h"
#include "support/lossless_sampling.h"
#include "support/medusa_heads.h"
#include "support/random_models.h"
#include "support/scripted_drafter.h"
#include "support/shared_data.h"

namespace eagle2 {
namespace {

using test::chi_square;
using test::ChiSquare;
using test::exact_distribution;
using test::kPrompt;
using test::kTokens;
using test::Outcome;
using test::run_speculative;
using test::small_vocab_model;

// Trees like a good drafter's: each node's children are the target's most likely tokens, best
// first (so the first child is often rejected with a likely second child behind it: the case
// where renormalization matters most), a duplicate of the first child sometimes, values from a
// draft confidence of 0.3.
test::ScriptedDrafter::Script ranked_tree_script(LlamaModel& m, const SamplingParams& sp,
                                                 ThreadPool& pool, uint32_t seed) {
  auto rng = std::make_shared<std::mt19937>(seed);
  auto cache = std::make_shared<std::map<std::vector<int32_t>, std::vector<double>>>();
  return [&m, sp, &pool, rng, cache](const std::vector<int32_t>& history, int64_t max_tokens,
                                     DraftTree& tree) {
    const int64_t V = m.config().vocab_size;
    auto probs = [&](const std::vector<int32_t>& ctx) -> const std::vector<double>& {
      auto it = cache->find(ctx);
      if (it != cache->end()) return it->second;
      KvCache kv = m.make_cache(64);
      ForwardResult f;
      const int32_t last = static_cast<int32_t>(ctx.size() - 1);
      m.forward(Batch::causal(ctx, 0), kv, std::span(&last, 1), f, pool);
      return (*cache)[ctx] = process_logits(f.logits.data(), V, sp).p;
    };
    std::vector<std::pair<int32_t, std::vector<int32_t>>> frontier = {{0, history}};
    for (int depth = 0; depth < 2; ++depth) {
      decltype(frontier) next;
      for (const auto& [node, ctx] : frontier) {
        const std::vector<double>& p = probs(ctx);
        std::vector<int32_t> order(V);
        std::iota(order.begin(), order.end(), 0);
        std::stable_sort(order.begin(), order.end(),
                         [&](int32_t a, int32_t b) { return p[a] > p[b]; });
        for (int c = 0; c < 3 && tree.size() < max_tokens; ++c) {
          tree.add(order[c], node, tree.values[node] + std::log(0.3f));
          std::vector<int32_t> child_ctx = ctx;
          child_ctx.push_back(order[c]);
          next.push_back({static_cast<int32_t>(tree.size() - 1), child_ctx});
          if (c == 0 && (*rng)() % 4 == 0 && tree.size() < max_tokens)
            tree.add(order[0], node, tree.values[node] + std::log(0.3f));  // duplicate sibling
        }
      }
      frontier = next;
    }
  };
}

class LosslessSampling : public ::testing::Test {
 protected:
  void SetUp() override { model_ = small_vocab_model(); }
  std::unique_ptr<LlamaModel> model_;
  ThreadPool pool_{1};
  int64_t n_ = test::scaled(12000);

  ChiSquare check(const SamplingParams& sp,
                  const std::function<std::unique_ptr<Drafter>(uint32_t)>& make,
                  const SamplingVerifier& verifier, Outcome* outcome = nullptr) {
    const auto exact = exact_distribution(*model_, sp, pool_);
    Outcome o = run_speculative(*model_, sp, n_, make, verifier, pool_);
    if (outcome) *outcome = o;
    return chi_square(exact, o.counts, n_);
  }
  std::function<std::unique_ptr<Drafter>(uint32_t)> ranked(const SamplingParams& sp) {
    // One shared script (its probability cache is reused across samples).
    return [this, sp](uint32_t seed) {
      return std::make_unique<test::ScriptedDrafter>(ranked_tree_script(*model_, sp, pool_, seed));
    };
  }
  std::function<std::unique_ptr<Drafter>(uint32_t)> scripted() {
    const int64_t V = model_->config().vocab_size;
    return [V](uint32_t seed) {
      return std::make_unique<test::ScriptedDrafter>(test::random_tree_script(V, seed));
    };
  }
};

// The first child is accepted with frequency p(x), whatever the rule.
void expect_first_child_acceptance(const Outcome& o) {
  const double z = (static_cast<double>(o.first_child_accepted) - o.first_child_expected) /
                   std::sqrt(o.first_child_variance);
  EXPECT_LT(std::abs(z), 4.0) << "first-child acceptance " << o.first_child_accepted
                              << " vs expected " << o.first_child_expected;
}

TEST_F(LosslessSampling, ScriptedTreesTemperatureAndTopK) {
  const SamplingParams sp{0.6f, 4, 1.0f, 0};
  Outcome o;
  const ChiSquare c = check(sp, scripted(), nullptr, &o);
  EXPECT_LT(c.stat, c.threshold) << "df " << c.df;
  EXPECT_GT(o.all_rejected, n_ / 20) << "the all-siblings-rejected case was not exercised";
  expect_first_child_acceptance(o);
}

TEST_F(LosslessSampling, ScriptedTreesHotTemperatureAndTopP) {
  const SamplingParams sp{1.4f, 0, 0.7f, 0};
  const ChiSquare c = check(sp, scripted(), nullptr);
  EXPECT_LT(c.stat, c.threshold) << "df " << c.df;
}

TEST_F(LosslessSampling, ScriptedTreesTopKThenTopP) {
  const SamplingParams sp{0.9f, 3, 0.8f, 0};
  const ChiSquare c = check(sp, scripted(), nullptr);
  EXPECT_LT(c.stat, c.threshold) << "df " << c.df;
}

TEST_F(LosslessSampling, RandomEagleHeadDynamicTree) {
  const std::string head_dir = test::write_random_head("lossless", *model_, 9, 0.5f);
  auto head = EagleHead::load(head_dir, *model_);
  EagleDrafterOptions opt;
  opt.dynamic = {2, 2, 6};
  opt.context = 32;
  EagleHead* h = head.get();
  const SamplingParams sp{1.0f, 0, 1.0f, 0};
  const ChiSquare c = check(
      sp, [&](uint32_t) { return std::make_unique<EagleDrafter>(*h, pool_, opt); }, nullptr);
  EXPECT_LT(c.stat, c.threshold) << "df " << c.df;
}

// The same with an EAGLE-3 head: its drafts come from captured layer inputs (the last layer's and
// the embedding's on this 2-layer model) and its own 4-token draft vocabulary.
TEST_F(LosslessSampling, RandomEagle3HeadDynamicTree) {
  auto head = test::load_random_eagle3_head("lossless", *model_,
                                            {.draft_vocab = 4, .init_std = 0.5f, .seed = 9});
  EagleDrafterOptions opt;
  opt.dynamic = {2, 2, 6};
  opt.context = 32;
  EagleHead* h = head.get();
  const SamplingParams sp{1.0f, 0, 1.0f, 0};
  const ChiSquare c = check(
      sp, [&](uint32_t) { return std::make_unique<EagleDrafter>(*h, pool_, opt); }, nullptr);
  EXPECT_LT(c.stat, c.threshold) << "df " << c.df;
}

TEST_F(LosslessSampling, RankedTreesTemperature) {
  const SamplingParams sp{0.8f, 0, 1.0f, 0};
  const ChiSquare c = check(sp, ranked(sp), nullptr);
  EXPECT_LT(c.stat, c.threshold) << "df " << c.df;
}

// Half the samples use random noisy trees (where the bonus token is drawn often), half ranked
// trees (where a likely second child follows a rejected first one). Both correct rules pass: the
// position-keyed one (the default) and the sequential rejection rule (kept for drafts sampled
// from a q); the broken variants of the rejection rule fail. (The broken variants of the
// position-keyed rule are the equality test's: one of them keeps the distribution.)
TEST_F(LosslessSampling, BrokenVerifiersAreCaught) {
  const SamplingParams sp{0.6f, 4, 1.0f, 0};
  // The evidence that the test has power is the full-size run. The sanitizer pass (scale < 1) runs
  // the correct rules on fewer samples and leaves the broken ones out: they are test code, and
  // on fewer samples one may legitimately slip through.
  const bool full_size = test::test_scale() >= 1.0;
  auto mixed = [this, sp, noisy = scripted(), good = ranked(sp)](uint32_t seed) {
    return seed % 2 ? noisy(seed) : good(seed);
  };
  const std::vector<test::NamedVerifier> correct = {{"position-keyed rule", nullptr},
                                                    {"rejection rule", verify_sampling_rejection}};
  for (const auto& [name, verifier] : correct) {
    SCOPED_TRACE(name);
    Outcome o;
    const ChiSquare good = check(sp, mixed, verifier, &o);
    EXPECT_LT(good.stat, good.threshold) << "df " << good.df;
    EXPECT_GT(o.all_rejected, n_ / 20) << "the all-siblings-rejected case was not exercised";
    expect_first_child_acceptance(o);
    std::printf("%s: chi2 %.1f (threshold %.1f, df %d)\n", name.c_str(), good.stat, good.threshold,
                good.df);
  }
  if (!full_size) return;
  for (const auto& [name, verifier] : test::broken_rejection_verifiers()) {
    const ChiSquare c = check(sp, mixed, verifier);
    EXPECT_GT(c.stat, c.threshold) << name << " passed the test (df " << c.df << ")";
    std::printf("%s: chi2 %.1f (threshold %.1f, df %d)\n", name.c_str(), c.stat, c.threshold, c.df);
  }
}

// Medusa heads: trees of the heads' top-k products, deterministic given the context, so the
// position-keyed rule keeps them lossless. Medusa's typical acceptance (accept a drafted token
// whose target probability clears an entropy-dependent threshold) is lossy, and the same test with
// the same samples must reject it: why it stays out of the engine.
TEST_F(LosslessSampling, MedusaHeadsAndTypicalAcceptance) {
  test::RandomHeadsOptions ro;
  ro.heads = 3;
  ro.seed = 9;
  ro.scale = 1.0f;
  auto heads = std::shared_ptr<const MedusaHeads>(MedusaHeads::load(
      test::write_random_heads("lossless", *model_, ro), *model_, MedusaHeads::Kind::Medusa));
  const SamplingParams sp{0.8f, 0, 1.0f, 0};
  auto make = [&](uint32_t) -> std::unique_ptr<Drafter> {
    return std::make_unique<MedusaDrafter>(medusa_predictor(heads), pool_, 6);
  };
  Outcome o;
  const ChiSquare good = check(sp, make, nullptr, &o);
  EXPECT_LT(good.stat, good.threshold) << "df " << good.df;
  EXPECT_GT(o.all_rejected, n_ / 20) << "the all-siblings-rejected case was not exercised";
  expect_first_child_acceptance(o);
  const ChiSquare typical = check(sp, make, test::typical_acceptance_verifier());
  if (test::test_scale() >= 1.0) {
    EXPECT_GT(typical.stat, typical.threshold)
        << "typical acceptance passed (df " << typical.df << ")";
  }
  std::printf("medusa: chi2 %.1f (threshold %.1f, df %d); typical acceptance: chi2 %.1f\n",
              good.stat, good.threshold, good.df, typical.stat);
}

// Hydra heads: path-dependent top-k trees (DynamicTreeBuilder), deterministic given the context:
// lossless under the position-keyed rule; typical acceptance on the same trees is rejected.
TEST_F(LosslessSampling, HydraHeadsAndTypicalAcceptance) {
  test::RandomHeadsOptions ro;
  ro.hydra = true;
  ro.heads = 3;
  ro.seed = 10;
  ro.scale = 1.0f;
  auto heads = std::shared_ptr<const MedusaHeads>(MedusaHeads::load(
      test::write_random_heads("lossless", *model_, ro), *model_, MedusaHeads::Kind::Hydra));
  const SamplingParams sp{1.2f, 0, 1.0f, 0};
  auto make = [&](uint32_t) -> std::unique_ptr<Drafter> {
    return std::make_unique<HydraDrafter>(hydra_predictor(heads), pool_, 6, 2);
  };
  Outcome o;
  const ChiSquare good = check(sp, make, nullptr, &o);
  EXPECT_LT(good.stat, good.threshold) << "df " << good.df;
  EXPECT_GT(o.all_rejected, n_ / 20) << "the all-siblings-rejected case was not exercised";
  expect_first_child_acceptance(o);
  const ChiSquare typical = check(sp, make, test::typical_acceptance_verifier());
  if (test::test_scale() >= 1.0) {
    EXPECT_GT(typical.stat, typical.threshold)
        << "typical acceptance passed (df " << typical.df << ")";
  }
  std::printf("hydra: chi2 %.1f (threshold %.1f, df %d); typical acceptance: chi2 %.1f\n",
              good.stat, good.threshold, good.df, typical.stat);
}

// Many sequences per step, as the server decodes them: every BatchDecoder step verifies the trees
// of 16 sequences (scripted trees, a random EAGLE head's dynamic trees with a batch-wide budget,
// prompt lookup, none), each with its own seed, in one target forward. Their first tokens must
// follow the target's distribution all the same. The same counts checked against the exact
// distribution of another temperature must fail, or the test would have no power at this size.
TEST_F(LosslessSampling, ManySequencesPerStep) {
  const std::string head_dir = test::write_random_head("lossless", *model_, 9, 0.5f);
  auto head = EagleHead::load(head_dir, *model_);
  const SamplingParams sp{0.8f, 0, 1.0f, 0};
  const VerifyCostModel curve({{1, 1e-3}, {8, 1.1e-3}, {64, 4e-3}});
  auto policy = std::make_shared<DraftPolicy>(std::make_shared<const VerifyCostModel>(curve));
  EagleDrafterOptions eagle;
  eagle.dynamic = {2, 2, 6};
  eagle.auto_budget = true;
  eagle.context = 32;
  const int64_t V = model_->config().vocab_size;
  auto make = [&](int64_t i) -> std::unique_ptr<Drafter> {
    switch (i % 4) {
      case 0:
        return std::make_unique<test::ScriptedDrafter>(
            test::random_tree_script(V, static_cast<uint32_t>(i)));
      case 1:
        return std::make_unique<EagleDrafter>(*head, pool_, eagle, policy);
      case 2:
        return std::make_unique<LookupDrafter>(3, 1, 3);
      default:
        return nullptr;  // plain decoding in the same steps
    }
  };
  Outcome o;
  int64_t steps = 0, sequences_in_steps = 0;
  for (int64_t first = 0; first < n_; first += 16) {
    BatchDecoder decoder(*model_, model_->make_pool(16 * 32, 16), 32, pool_,
                         std::make_shared<const BatchCostModel>(BatchCostModel::single(curve)));
    std::vector<int64_t> ids;
    for (int64_t i = first; i < std::min(n_, first + 16); ++i) {
      GenerationOptions opt;
      opt.max_new_tokens = kTokens;
      opt.stop_at_eos = false;
      opt.sampling = sp;
      opt.sampling.seed = 1000003ull * static_cast<uint64_t>(i) + 17;
      ids.push_back(decoder.add(kPrompt, opt, make(i)));
    }
    while (decoder.step() > 0) {
      ++steps;
      sequences_in_steps += decoder.last_step().sequences;
    }
    for (int64_t id : ids) ++o.counts[decoder.tokens(id)];
  }
  EXPECT_GT(sequences_in_steps, 8 * steps) << "steps did not hold many sequences";
  const ChiSquare c = chi_square(exact_distribution(*model_, sp, pool_), o.counts, n_);
  EXPECT_LT(c.stat, c.threshold) << "df " << c.df;
  const SamplingParams other{1.1f, 0, 1.0f, 0};
  const ChiSquare wrong = chi_square(exact_distribution(*model_, other, pool_), o.counts, n_);
  if (test::test_scale() >= 1.0) {
    EXPECT_GT(wrong.stat, wrong.threshold) << "the test cannot tell temperature 0.8 from 1.1";
  }
  std::printf(
      "many sequences per step: chi2 %.1f (threshold %.1f, df %d); against T = 1.1: "
      "%.1f\n",
      c.stat, c.threshold, c.df, wrong.stat);
}

// Speculative sampling with a draft model: the chain's tokens are SAMPLED from the draft's q (a
// random model of the same vocabulary, far from the target), and verification applies
// min(1, p/q) with the residual norm(max(0, p - q)). The first tokens must follow the target's
// distribution, with drafts accepted and rejected often; the classic mistakes must fail the same
// test: resampling a rejected position from p instead of the residual, and accepting with p(x)
// as if the draft were deterministic (q ignored).
enum class DraftRuleBreak { None, ResampleFromP, IgnoreQ };

Verdict draft_rule_variant(const DraftTree& tree, const float* logits, int64_t V,
                           const SamplingParams& sp, uint64_t first, DraftRuleBreak how) {
  if (how == DraftRuleBreak::None) return verify_sampled_tree(tree, logits, V, sp, first);
  const auto children = children_of(tree);
  Verdict v;
  v.path.push_back(0);
  for (uint64_t position = first;; ++position) {
    const int32_t node = v.path.back();
    Rng rng(position_word(sp.seed, position));
    Distribution p = process_logits(logits + node * V, V, sp);
    if (children[node].empty()) {
      v.bonus = sample(p, rng);
      return v;
    }
    const int32_t child = children[node][0], x = tree.tokens[child];
    const double* q = &tree.draft_q[static_cast<size_t>(node * V)];
    const double u = rng.uniform();
    const bool accept = how == DraftRuleBreak::IgnoreQ ? u < p.p[x] : u * q[x] < p.p[x];
    if (accept) {
      v.path.push_back(child);
      continue;
    }
    if (how == DraftRuleBreak::ResampleFromP) {
      v.bonus = sample(p, rng);
      return v;
    }
    Distribution r;
    double mass = 0;
    for (int64_t t = 0; t < V; ++t) mass += std::max(0.0, p.p[t] - q[t]);
    for (int64_t t = 0; t < V; ++t)
      r.p.push_back(mass > 0 ? std::max(0.0, p.p[t] - q[t]) / mass : p.p[t]);
    v.bonus = sample(r, rng);
    return v;
  }
}

TEST_F(LosslessSampling, DraftModelChainsSampledFromQ) {
  LlamaConfig cfg = test::tiny_config();
  cfg.vocab_size = 5;
  cfg.num_layers = 1;
  std::shared_ptr<LlamaModel> draft =
      test::load_random_model("lossless-draft", cfg, DType::F32, 57, 0.5f);
  const bool full_size = test::test_scale() >= 1.0;
  for (const SamplingParams& sp :
       {SamplingParams{0.8f, 0, 1.0f, 0}, SamplingParams{1.3f, 4, 0.9f, 0}}) {
    auto make = [&](uint32_t) {
      return std::make_unique<SpsDrafter>(draft, pool_, SpsDrafterOptions{2, 1, 32});
    };
    for (const auto& [name, how] : {std::pair{"min(1, p/q) rule", DraftRuleBreak::None},
                                    std::pair{"resample from p", DraftRuleBreak::ResampleFromP},
                                    std::pair{"q ignored", DraftRuleBreak::IgnoreQ}}) {
      SCOPED_TRACE(name);
      Outcome o;
      const ChiSquare c = check(
          sp, make,
          [how](const DraftTree& t, const float* l, int64_t V, const SamplingParams& p,
                uint64_t f) { return draft_rule_variant(t, l, V, p, f, how); },
          &o);
      std::printf("T %.1f, %s: chi2 %.1f (threshold %.1f, df %d)\n", sp.temperature, name, c.stat,
                  c.threshold, c.df);
      if (how == DraftRuleBreak::None) {
        EXPECT_LT(c.stat, c.threshold) << "df " << c.df;
        EXPECT_GT(o.all_rejected, n_ / 20) << "rejections were not exercised";
        EXPECT_GT(o.first_child_accepted, n_ / 20) << "acceptances were not exercised";
      } else if (full_size) {
        EXPECT_GT(c.stat, c.threshold) << name << " passed the test (df " << c.df << ")";
      }
    }
  }
}

// Lookahead decoding: fresh drafters whose pool fills from the first cycle's Jacobi step, so that
// the later tokens are often verified against n-grams built from the target's argmax. With the
// position-keyed rule the joint distribution is exact; a verifier that enters a child holding the
// argmax outright (right at T = 0) over-emits it and must fail at the same size and threshold.
TEST_F(LosslessSampling, LookaheadNgramsAndAnArgmaxAcceptingVerifier) {
  const SamplingParams sp{0.8f, 0, 1.0f, 0};
  const int64_t n = std::max<int64_t>(1, n_ / 2);  // half the samples: the bug is a large one
  auto lookahead = [](uint32_t) {
    return std::make_unique<LookaheadDrafter>(LookaheadParams{3, 3, 3});
  };
  const auto exact = exact_distribution(*model_, sp, pool_);
  const Outcome good = run_speculative(*model_, sp, n, lookahead, nullptr, pool_);
  const ChiSquare c = chi_square(exact, good.counts, n);
  EXPECT_LT(c.stat, c.threshold) << "df " << c.df;
  // The root's children are the verification branch's n-grams (never the window's nodes). Only
  // the second cycle can have any (the first fills the pool), for 1 in 9 samples or so here.
  EXPECT_GT(good.all_rejected, n / 40) << "n-grams were rarely rejected";
  EXPECT_GT(good.some_accepted, n / 40) << "n-grams were rarely accepted";
  const Outcome bad =
      run_speculative(*model_, sp, n, lookahead, test::argmax_accepting_verifier().verify, pool_);
  const ChiSquare b = chi_square(exact, bad.counts, n);
  if (test::test_scale() >= 1.0) {
    EXPECT_GT(b.stat, b.threshold)
        << test::argmax_accepting_verifier().name << " passed (df " << b.df << ")";
  }
  std::printf(
      "lookahead: chi2 %.1f (threshold %.1f, df %d), cycles with n-grams all rejected "
      "%lld, with a token accepted %lld (of %lld samples); argmax-accepting verifier: "
      "chi2 %.1f\n",
      c.stat, c.threshold, c.df, static_cast<long long>(good.all_rejected),
      static_cast<long long>(good.some_accepted), static_cast<long long>(n), b.stat);
}

}  // namespace
}  // namespace eagle2

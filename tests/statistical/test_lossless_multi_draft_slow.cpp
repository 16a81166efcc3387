// Lossless sampling with several candidates per node drafted from q WITHOUT replacement
// (verify_sampling_from_draft's recursive rule: SpecInfer's multi-candidate verification): the
// first tokens follow the target's exact distribution, a second sibling is accepted often (the
// point of a tree at T > 0), and each of four plausible mistakes fails the same chi-square test:
// the next sibling's q left as it was (as if drawn with replacement), p left as it was after a
// rejection (no residual), the bonus drawn from p instead of the residual, and q ignored. The
// same for the EAGLE drafter's sampled trees (EagleDrafterOptions::Shape::Sampled), plus a
// drafter that orders sampled siblings by q (as a value-ranked tree would).
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <map>
#include <memory>
#include <random>

#include "draft/eagle_head.h"
#include "model/batch.h"
#include "sampling/position_random.h"
#include "sampling/rng.h"
#include "speculative/draft_policy.h"
#include "speculative/eagle_drafter.h"
#include "speculative/verify.h"
#include "support/lossless_sampling.h"
#include "support/random_models.h"
#include "support/scripted_drafter.h"
#include "support/shared_data.h"

namespace eagle2 {
namespace {

enum class SiblingBreak { None, KeepQ, KeepP, BonusFromP, IgnoreQ };

// verify_sampling_from_draft with one deliberate mistake (None: the library's rule itself).
Verdict sibling_rule_variant(const DraftTree& tree, const float* logits, int64_t V,
                             const SamplingParams& sp, uint64_t first, SiblingBreak how) {
  if (how == SiblingBreak::None || tree.draft_q.empty())
    return verify_sampled_tree(tree, logits, V, sp, first);
  const auto children = children_of(tree);
  const auto n = static_cast<size_t>(V);
  Verdict v;
  v.path.push_back(0);
  for (uint64_t position = first;; ++position) {
    const int32_t node = v.path.back();
    Rng rng(position_word(sp.seed, position));
    const Distribution p0 = process_logits(logits + node * V, V, sp);
    Distribution p = p0;
    const double* q0 = &tree.draft_q[static_cast<size_t>(node) * n];
    std::vector<double> q(q0, q0 + n);
    int32_t next = -1;
    for (const int32_t c : children[static_cast<size_t>(node)]) {
      const auto x = static_cast<size_t>(tree.tokens[c]);
      const double u = rng.uniform();
      if (how == SiblingBreak::IgnoreQ ? u < p.p[x] : q[x] > 0 && u * q[x] < p.p[x]) {
        next = c;
        break;
      }
      if (how != SiblingBreak::KeepP) {
        double mass = 0;
        for (size_t t = 0; t < n; ++t) mass += std::max(0.0, p.p[t] - q[t]);
        if (mass > 0)
          for (size_t t = 0; t < n; ++t) p.p[t] = std::max(0.0, p.p[t] - q[t]) / mass;
      } else if (!p.remove_and_renormalize(static_cast<int32_t>(x))) {
        p = p0;
      }
      if (how != SiblingBreak::KeepQ) {
        const double rest = 1 - q[x];
        q[x] = 0;
        if (rest > 0)
          for (double& qt : q) qt /= rest;
      }
    }
    if (next < 0) {
      v.bonus = sample(how == SiblingBreak::BonusFromP ? p0 : p, rng);
      return v;
    }
    v.path.push_back(next);
  }
}

// Trees sampled from a draft model's q (a random model of the target's vocabulary, processed with
// the same settings): 3 children of the root and 2 of each of those, every sibling set drawn
// without replacement, with q at every node in tree.draft_q. The draft's randomness is its own
// (a generator per sample), independent of the verifier's position words. The q of each context
// is computed once for all samples (cache).
using QCache = std::map<std::vector<int32_t>, std::vector<double>>;
// duplicate: the root's second child is a copy of its first (a token q_1 cannot draw, which the
// rule must pass over).
test::ScriptedDrafter::Script sampled_tree_script(LlamaModel& draft, const SamplingParams& sp,
                                                  ThreadPool& pool, uint32_t seed,
                                                  std::shared_ptr<QCache> cache,
                                                  bool duplicate = false) {
  auto rng = std::make_shared<std::mt19937_64>(seed);
  return [&draft, sp, &pool, rng, cache, duplicate](const std::vector<int32_t>& history,
                                                    int64_t max_tokens, DraftTree& tree) {
    const int64_t V = draft.config().vocab_size;
    auto q_at = [&](const std::vector<int32_t>& ctx) -> const std::vector<double>& {
      auto it = cache->find(ctx);
      if (it != cache->end()) return it->second;
      KvCache kv = draft.make_cache(64);
      ForwardResult f;
      const int32_t last = static_cast<int32_t>(ctx.size() - 1);
      draft.forward(Batch::causal(ctx, 0), kv, std::span(&last, 1), f, pool);
      return (*cache)[ctx] = process_logits(f.logits.data(), V, sp).p;
    };
    std::vector<std::vector<int32_t>> contexts = {history};  // per node
    auto draw_children = [&](int32_t node, int k) {
      std::vector<double> q = q_at(contexts[static_cast<size_t>(node)]);
      for (int c = 0; c < k && tree.size() < max_tokens; ++c) {
        double mass = 0;
        for (double x : q) mass += x;
        if (!(mass > 0)) return;
        std::uniform_real_distribution<double> u(0.0, mass);
        const double r = u(*rng);
        int32_t t = 0;
        for (double acc = q[0]; acc <= r && t + 1 < V; acc += q[static_cast<size_t>(++t)]) {
        }
        while (q[static_cast<size_t>(t)] <= 0) --t;  // rounding at the top end
        q[static_cast<size_t>(t)] = 0;               // without replacement
        tree.add(t, node, tree.values[static_cast<size_t>(node)] - 1.0f);
        contexts.push_back(contexts[static_cast<size_t>(node)]);
        contexts.back().push_back(t);
        if (duplicate && node == 0 && c == 0 && tree.size() < max_tokens) {
          tree.add(t, 0, tree.values[0] - 1.0f);  // the first child again, as the second
          contexts.push_back(contexts.back());
        }
      }
    };
    draw_children(0, 3);
    const auto first_level = static_cast<int32_t>(tree.size());
    for (int32_t node = 1; node < first_level; ++node) draw_children(node, 2);
    tree.draft_q_vocab = V;
    tree.draft_q.clear();
    for (const auto& ctx : contexts) {
      const std::vector<double>& q = q_at(ctx);
      tree.draft_q.insert(tree.draft_q.end(), q.begin(), q.end());
    }
  };
}

// The target (vocabulary 5), a random draft model of its vocabulary, T = 0.9, and the target's
// exact distribution of the first tokens.
class LosslessMultiDraft : public testing::Test {
 protected:
  LosslessMultiDraft()
      : target_(test::small_vocab_model()),
        draft_(test::load_random_model("lossless-draft", draft_config(), DType::F32, 57, 0.5f)),
        exact_(test::exact_distribution(*target_, sp_, pool_)) {}
  static LlamaConfig draft_config() {
    LlamaConfig cfg = test::tiny_config();
    cfg.vocab_size = 5;
    cfg.num_layers = 1;
    return cfg;
  }
  // Drafters of sampled trees (one per sample seed), sharing one cache of q.
  std::function<std::unique_ptr<Drafter>(uint32_t)> sampled_trees(bool duplicate) {
    return [this, duplicate, cache = std::make_shared<QCache>()](uint32_t seed) {
      return std::make_unique<test::ScriptedDrafter>(
          sampled_tree_script(*draft_, sp_, pool_, seed, cache, duplicate));
    };
  }
  ThreadPool pool_{1};
  const SamplingParams sp_{0.9f, 0, 1.0f, 0};
  std::unique_ptr<LlamaModel> target_, draft_;
  std::map<std::vector<int32_t>, double> exact_;
};

TEST_F(LosslessMultiDraft, SiblingsSampledWithoutReplacementFromQ) {
  LlamaModel& target = *target_;
  const SamplingParams& sp = sp_;
  const int64_t n = test::scaled(12000);
  const auto& exact = exact_;
  const auto make = sampled_trees(/*duplicate=*/false);
  for (const auto& [name, how] : {std::pair{"recursive rule", SiblingBreak::None},
                                  std::pair{"q kept after a rejection", SiblingBreak::KeepQ},
                                  std::pair{"p kept after a rejection", SiblingBreak::KeepP},
                                  std::pair{"bonus from p", SiblingBreak::BonusFromP},
                                  std::pair{"q ignored", SiblingBreak::IgnoreQ}}) {
    // The sanitizer pass (scale < 1) runs the library's rule only: the mistakes are test code,
    // and on its fewer samples one may legitimately pass.
    if (how != SiblingBreak::None && test::test_scale() < 1.0) continue;
    SCOPED_TRACE(name);
    int64_t later_sibling = 0;  // cycles that accepted a root child other than the first
    // The mistakes fail by a wide margin (chi-square 20-2000 times the threshold at n): a quarter
    // of the samples keeps the suite's time down.
    const int64_t samples = how == SiblingBreak::None ? n : std::max<int64_t>(1, n / 4);
    const test::Outcome o = test::run_speculative(
        target, sp, samples, make,
        [how, &later_sibling](const DraftTree& t, const float* l, int64_t V,
                              const SamplingParams& p, uint64_t f) {
          const Verdict v = sibling_rule_variant(t, l, V, p, f, how);
          if (v.path.size() > 1 && v.path[1] != 1) ++later_sibling;
          return v;
        },
        pool_);
    const test::ChiSquare c = test::chi_square(exact, o.counts, samples);
    std::printf("%s: chi2 %.1f (threshold %.1f, df %d), later sibling accepted in %lld cycles\n",
                name, c.stat, c.threshold, c.df, static_cast<long long>(later_sibling));
    if (how == SiblingBreak::None) {
      EXPECT_LT(c.stat, c.threshold) << "df " << c.df;
      EXPECT_GT(o.all_rejected, n / 40) << "rejections were not exercised";
      EXPECT_GT(later_sibling, n / 40) << "later siblings were not exercised";
    } else {
      EXPECT_GT(c.stat, c.threshold) << name << " passed the test (df " << c.df << ")";
    }
  }
}

// A duplicate sibling (the root's first child again, as its second): q_1 gives it no probability,
// so the rule passes over it; treating it as a rejection (p replaced by its residual against q_1
// once more) skews the first token's distribution, which this test catches.
TEST_F(LosslessMultiDraft, ADuplicateSiblingIsPassedOver) {
  const int64_t n = test::scaled(6000);
  const test::Outcome o = test::run_speculative(*target_, sp_, n, sampled_trees(/*duplicate=*/true),
                                                verify_sampled_tree, pool_);
  const test::ChiSquare c = test::chi_square(exact_, o.counts, n);
  std::printf("duplicate sibling: chi2 %.1f (threshold %.1f, df %d)\n", c.stat, c.threshold, c.df);
  EXPECT_LT(c.stat, c.threshold) << "df " << c.df;
  EXPECT_GT(o.all_rejected, n / 40) << "rejections were not exercised";
}

// The EAGLE drafter's sampled tree, drafting from a random head: its siblings are drawn from the
// head's q without replacement, q rides along in the tree, and the library's rule must give the
// target's distribution; the rule's mistakes (as above) must fail on these trees too.
class SampledEagleTrees : public LosslessMultiDraft {
 protected:
  SampledEagleTrees()
      : head_(EagleHead::load(test::write_random_head("lossless-sampled", *target_, 9, 0.5f),
                              *target_)) {
    opt_.shape = EagleDrafterOptions::Shape::Sampled;
    opt_.dynamic.top_k = 3;  // 3 siblings, 3 levels, 8 tokens: siblings at the first two levels
    opt_.dynamic.depth = 2;
    opt_.dynamic.total_tokens = 8;
    opt_.context = 32;
  }
  std::function<std::unique_ptr<Drafter>(uint32_t)> drafters(EagleDrafterOptions opt) {
    return [this, opt](uint32_t) { return std::make_unique<EagleDrafter>(*head_, pool_, opt); };
  }
  std::unique_ptr<EagleHead> head_;
  EagleDrafterOptions opt_;
};

TEST_F(SampledEagleTrees, EagleHeadSiblingsSampledFromItsQ) {
  const int64_t n = test::scaled(6000);
  for (const auto& [name, how] :
       {std::pair{"recursive rule", SiblingBreak::None},
        std::pair{"q not renormalized after a rejection (drawn with replacement)",
                  SiblingBreak::KeepQ},
        std::pair{"p instead of the residual", SiblingBreak::KeepP},
        std::pair{"bonus from p", SiblingBreak::BonusFromP},
        std::pair{"q ignored", SiblingBreak::IgnoreQ}}) {
    if (how != SiblingBreak::None && test::test_scale() < 1.0) continue;
    SCOPED_TRACE(name);
    int64_t sampled_trees = 0, later_sibling = 0;
    const int64_t samples = how == SiblingBreak::None ? n : std::max<int64_t>(1, n / 3);
    const test::Outcome o = test::run_speculative(
        *target_, sp_, samples, drafters(opt_),
        [&](const DraftTree& t, const float* l, int64_t V, const SamplingParams& p, uint64_t f) {
          if (!t.draft_q.empty()) ++sampled_trees;
          const Verdict v = sibling_rule_variant(t, l, V, p, f, how);
          if (v.path.size() > 1 && v.path[1] != 1) ++later_sibling;
          return v;
        },
        pool_);
    const test::ChiSquare c = test::chi_square(exact_, o.counts, samples);
    std::printf(
        "EAGLE sampled tree, %s: chi2 %.1f (threshold %.1f, df %d), later sibling accepted "
        "in %lld cycles\n",
        name, c.stat, c.threshold, c.df, static_cast<long long>(later_sibling));
    if (how == SiblingBreak::None) {
      EXPECT_LT(c.stat, c.threshold) << "df " << c.df;
      EXPECT_GE(sampled_trees, n) << "the trees did not carry q";
      EXPECT_GT(o.all_rejected, n / 40) << "rejections were not exercised";
      EXPECT_GT(later_sibling, n / 40) << "later siblings were not exercised";
    } else {
      EXPECT_GT(c.stat, c.threshold) << name << " passed the test (df " << c.df << ")";
    }
  }
}

// With top-k and top-p on q as on p: q often has fewer tokens of mass than siblings asked for.
// The sibling slots past the last token q holds are left out of the tree (not drafted, not
// verified), and the output is still the target's.
TEST_F(SampledEagleTrees, TopKAndTopPShrinkQBelowTheSiblings) {
  const SamplingParams sp{0.8f, 3, 0.9f, 0};
  const auto exact = test::exact_distribution(*target_, sp, pool_);
  const int64_t n = test::scaled(6000);
  int64_t duplicates = 0, short_trees = 0;
  const test::Outcome o = test::run_speculative(
      *target_, sp, n, drafters(opt_),
      [&](const DraftTree& t, const float* l, int64_t V, const SamplingParams& p, uint64_t f) {
        for (size_t i = 2; i < t.tokens.size(); ++i)
          if (t.parents[i] == t.parents[i - 1] && t.tokens[i] == t.tokens[i - 1]) ++duplicates;
        if (t.size() < opt_.dynamic.total_tokens) ++short_trees;
        return verify_sampled_tree(t, l, V, p, f);
      },
      pool_);
  const test::ChiSquare c = test::chi_square(exact, o.counts, n);
  std::printf(
      "EAGLE sampled tree, top-k 3, top-p 0.9: chi2 %.1f (threshold %.1f, df %d), %lld trees "
      "with sibling slots left out\n",
      c.stat, c.threshold, c.df, static_cast<long long>(short_trees));
  EXPECT_LT(c.stat, c.threshold) << "df " << c.df;
  EXPECT_EQ(duplicates, 0) << "a sibling repeats a draw the rule cannot accept";
  EXPECT_GT(short_trees, n / 40) << "q never ran out of tokens";
}

// sampled:auto: each tree keeps the first T - 1 paths of its shape, T chosen before any draw from
// sibling counts that every sequence shares (one DraftPolicy) and a verify cost. The tree size
// moves as the counts do, and the output must still be the target's.
TEST_F(SampledEagleTrees, AutoBudgetTreesKeepTheDistribution) {
  const SamplingParams sp{0.9f, 0, 1.0f, 0};
  const auto exact = test::exact_distribution(*target_, sp, pool_);
  const int64_t n = test::scaled(6000);
  EagleDrafterOptions o = opt_;
  o.auto_budget = true;
  // Each token past the first costs 0.4 of one: trees of a few tokens pay, wider ones not.
  const auto policy = std::make_shared<DraftPolicy>(std::make_shared<const VerifyCostModel>(
      std::vector<std::pair<int64_t, double>>{{1, 1.0}, {8, 1.0 + 0.4 * 7}}));
  std::map<int64_t, int64_t> sizes;
  const test::Outcome out = test::run_speculative(
      *target_, sp, n,
      [&](uint32_t) { return std::make_unique<EagleDrafter>(*head_, pool_, o, policy); },
      [&](const DraftTree& t, const float* l, int64_t V, const SamplingParams& p, uint64_t f) {
        ++sizes[t.size()];
        return verify_sampled_tree(t, l, V, p, f);
      },
      pool_);
  const test::ChiSquare c = test::chi_square(exact, out.counts, n);
  std::printf(
      "EAGLE sampled tree, auto budget: chi2 %.1f (threshold %.1f, df %d), %zu tree sizes\n",
      c.stat, c.threshold, c.df, sizes.size());
  EXPECT_LT(c.stat, c.threshold) << "df " << c.df;
  EXPECT_GE(sizes.size(), 2u) << "the budget never moved";
}

// Why the sampled tree's shape is fixed before its tokens are drawn: a drafter that puts the
// likelier of its sampled siblings first (what ranking the drafted nodes by value does) offers
// draws that are no longer distributed as q, and the output leaves the target's distribution.
// The draw-order half also fails when the draft's stream is verification's (the draws and the
// acceptance tests correlated: checked by mutation of EagleDrafter::sampled_draft_word).
class LikelierSiblingFirst : public Drafter {
 public:
  explicit LikelierSiblingFirst(std::unique_ptr<Drafter> inner) : inner_(std::move(inner)) {}
  std::string name() const override { return "likelier-sibling-first"; }
  void set_sampling(const SamplingParams& params) override { inner_->set_sampling(params); }
  void begin(std::span<const int32_t> context, const float* features, int32_t root) override {
    inner_->begin(context, features, root);
  }
  void draft(int64_t max_tokens, DraftTree& tree) override {
    inner_->draft(max_tokens, tree);
    if (tree.draft_q.empty()) return;
    // One level (depth 0): the root's children are leaves, so sorting their tokens is the tree
    // sorted.
    const double* q = tree.draft_q.data();
    std::stable_sort(tree.tokens.begin() + 1, tree.tokens.end(),
                     [q](int32_t a, int32_t b) { return q[a] > q[b]; });
  }
  void accept(const DraftTree& tree, std::span<const int32_t> path, const float* features,
              int32_t bonus) override {
    inner_->accept(tree, path, features, bonus);
  }

 private:
  std::unique_ptr<Drafter> inner_;
};

TEST_F(SampledEagleTrees, FlatQSiblingsMustKeepTheirDrawOrder) {
  if (test::test_scale() < 1.0) GTEST_SKIP() << "a mistake's power is checked at full scale";
  // A head of small weights, whose q is far from one-hot (the fixture's puts nearly all of q on
  // one token, which then comes first either way), and a high temperature flatten q further.
  const SamplingParams sp{1.5f, 0, 1.0f, 0};
  const auto exact = test::exact_distribution(*target_, sp, pool_);
  const auto flat_head =
      EagleHead::load(test::write_random_head("lossless-flat", *target_, 9, 0.1f), *target_);
  EagleDrafterOptions one_level = opt_;
  one_level.dynamic.depth = 0;
  one_level.dynamic.total_tokens = 3;  // the root and two sampled siblings
  const int64_t n = 3000;
  for (const bool sorted : {false, true}) {
    const test::Outcome o = test::run_speculative(
        *target_, sp, n,
        [&](uint32_t) -> std::unique_ptr<Drafter> {
          auto inner = std::make_unique<EagleDrafter>(*flat_head, pool_, one_level);
          if (!sorted) return inner;
          return std::make_unique<LikelierSiblingFirst>(std::move(inner));
        },
        verify_sampled_tree, pool_);
    const test::ChiSquare c = test::chi_square(exact, o.counts, n);
    std::printf("EAGLE sampled tree, one level, siblings %s: chi2 %.1f (threshold %.1f, df %d)\n",
                sorted ? "sorted by q" : "in draw order", c.stat, c.threshold, c.df);
    if (sorted)
      EXPECT_GT(c.stat, c.threshold) << "sorted siblings passed the test (df " << c.df << ")";
    else
      EXPECT_LT(c.stat, c.threshold) << "df " << c.df;
  }
}

}  // namespace
}  // namespace eagle2

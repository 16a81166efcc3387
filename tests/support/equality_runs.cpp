#include "support/equality_runs.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <random>
#include <sstream>

#include "speculative/eagle_drafter.h"
#include "speculative/hybrid_drafter.h"
#include "speculative/lookahead_drafter.h"
#include "speculative/lookup_drafter.h"
#include "speculative/suffix_drafter.h"
#include "support/decoding.h"
#include "support/scripted_drafter.h"

namespace eagle2::test {

std::vector<DrafterCase> drafter_cases(EagleHead& head, ThreadPool& pool, int64_t vocab,
                                       int64_t ctx, EagleHead* head3) {
  auto eagle = [&head, &pool, ctx](EagleDrafterOptions o) {
    o.context = ctx;
    return [&head, &pool, o](const std::vector<int32_t>&) -> std::unique_ptr<Drafter> {
      return std::make_unique<EagleDrafter>(head, pool, o);
    };
  };
  using Shape = EagleDrafterOptions::Shape;
  auto options = [](Shape shape, int top_k, int depth, int total, TreeChoices choices, int chain) {
    EagleDrafterOptions o;
    o.shape = shape;
    o.dynamic.top_k = top_k;
    o.dynamic.depth = depth;
    o.dynamic.total_tokens = total;
    o.choices = std::move(choices);
    o.chain_depth = chain;
    return o;
  };
  std::vector<DrafterCase> cases;
  cases.push_back({"dynamic-60-5-10", eagle(options(Shape::Dynamic, 10, 5, 60, {}, 5)), 6});
  cases.push_back({"dynamic-16-3-4", eagle(options(Shape::Dynamic, 4, 3, 16, {}, 5)), 4});
  cases.push_back({"dynamic-6-2-2", eagle(options(Shape::Dynamic, 2, 2, 6, {}, 5)), 3});
  cases.push_back(
      {"static-mc-sim", eagle(options(Shape::Static, 10, 5, 60, mc_sim_7b_63(), 5)), 5});
  cases.push_back({"chain-3", eagle(options(Shape::Chain, 10, 5, 60, {}, 3)), 4});
  cases.push_back({"lookup",
                   [](const std::vector<int32_t>&) -> std::unique_ptr<Drafter> {
                     return std::make_unique<LookupDrafter>(3, 1, 5);
                   },
                   5});
  cases.push_back({"none",
                   [](const std::vector<int32_t>&) -> std::unique_ptr<Drafter> {
                     return std::make_unique<NoDrafter>();
                   },
                   0});
  cases.push_back({"scripted",
                   [vocab](const std::vector<int32_t>& truth) -> std::unique_ptr<Drafter> {
                     return std::make_unique<ScriptedDrafter>(
                         oracle_script(truth, 5, vocab, static_cast<uint32_t>(truth.size())));
                   },
                   5});
  // The EAGLE-2 paper's ablation: other trees from the same head, the same output. Last, so that
  // the indices above stay as tests pick them.
  auto ablation = options(Shape::Dynamic, 4, 3, 16, {}, 5);
  ablation.dynamic.ranking = DynamicTreeParams::Ranking::OwnConfidence;
  cases.push_back({"dynamic-16-3-4-novalue", eagle(ablation), 4});
  ablation.dynamic.ranking = DynamicTreeParams::Ranking::Value;
  ablation.dynamic.rerank = false;
  cases.push_back({"dynamic-16-3-4-norerank", eagle(ablation), 4});
  // Lookahead decoding (no head): also after the indices tests pick.
  cases.push_back({"lookahead-4-3-3",
                   [](const std::vector<int32_t>&) -> std::unique_ptr<Drafter> {
                     return std::make_unique<LookaheadDrafter>(LookaheadParams{4, 3, 3});
                   },
                   2});
  // Suffix decoding (no head): a frequency-scored tree over the prompt and the output so far;
  // small P so that rare continuations are drafted too (siblings that verification rejects).
  cases.push_back({"suffix-12-5-1",
                   [](const std::vector<int32_t>&) -> std::unique_ptr<Drafter> {
                     return std::make_unique<SuffixDrafter>(SuffixParams{12, 5, 1});
                   },
                   6});
  // Hybrid trees (dynamic+suffix): the head's and the suffix drafter's candidates merged into one
  // tree of 16 tokens, ranked by one calibrated estimate; each drafter learns into its own policy.
  cases.push_back({"dynamic-16-3-4+suffix-12-5-1",
                   [&head, &pool, ctx](const std::vector<int32_t>&) -> std::unique_ptr<Drafter> {
                     EagleDrafterOptions o;
                     o.dynamic.top_k = 4;
                     o.dynamic.depth = 3;
                     o.dynamic.total_tokens = 16;
                     o.context = ctx;
                     o.calibrate = true;
                     o.record_outcomes = false;
                     auto policy = std::make_shared<DraftPolicy>();
                     return std::make_unique<HybridDrafter>(
                         std::make_unique<EagleDrafter>(head, pool, o, policy),
                         std::make_unique<SuffixDrafter>(SuffixParams{12, 5, 1}), policy, 16);
                   },
                   6});
  if (head3) {
    // EAGLE-3: the decoding loops capture the head's layers in the prefill and verify forwards.
    auto eagle3 = [head3, &pool, ctx](EagleDrafterOptions o) {
      o.context = ctx;
      return [head3, &pool, o](const std::vector<int32_t>&) -> std::unique_ptr<Drafter> {
        return std::make_unique<EagleDrafter>(*head3, pool, o);
      };
    };
    cases.push_back({"eagle3-dynamic-16-3-4", eagle3(options(Shape::Dynamic, 4, 3, 16, {}, 5)), 4});
    cases.push_back(
        {"eagle3-dynamic-60-5-10", eagle3(options(Shape::Dynamic, 10, 5, 60, {}, 5)), 6});
    cases.push_back({"eagle3-chain-3", eagle3(options(Shape::Chain, 10, 5, 60, {}, 3)), 4});
  }
  return cases;
}

void Coverage::add(const std::string& name, const SpeculativeStats& st) {
  auto& h = hist[name];
  if (h.size() < st.accept_histogram.size()) h.resize(st.accept_histogram.size(), 0);
  for (size_t a = 0; a < st.accept_histogram.size(); ++a) h[a] += st.accept_histogram[a];
}

int64_t Coverage::at(const std::string& name, size_t accepted) const {
  auto it = hist.find(name);
  return it == hist.end() || accepted >= it->second.size() ? 0 : it->second[accepted];
}

void check_equality(LlamaModel& target, const std::vector<DrafterCase>& cases,
                    const std::vector<std::vector<int32_t>>& prompts, const GenerationOptions& opt,
                    int64_t ctx, ThreadPool& pool, Coverage& cov, const SpeculativeHooks& hooks) {
  for (size_t p = 0; p < prompts.size(); ++p) {
    const std::vector<int32_t> plain = plain_tokens(target, prompts[p], opt, ctx, pool);
    std::vector<int32_t> truth = prompts[p];
    truth.insert(truth.end(), plain.begin(), plain.end());
    for (const DrafterCase& c : cases) {
      auto drafter = c.make(truth);
      SpeculativeStats st;
      const std::vector<int32_t> spec =
          speculative_tokens(target, *drafter, prompts[p], opt, ctx, pool, hooks, &st);
      ASSERT_EQ(spec, plain) << "drafter " << c.name << ", prompt " << p << " ("
                             << prompts[p].size() << " tokens), temperature "
                             << opt.sampling.temperature << ", seed " << opt.sampling.seed;
      cov.add(c.name, st);
    }
  }
}

std::vector<std::string> held_out_openings(const std::string& corpus, size_t n) {
  std::ifstream in(corpus);
  std::vector<std::string> stories;
  std::string line, cur;
  while (std::getline(in, line)) {
    if (line.empty()) {
      if (!cur.empty()) stories.push_back(cur);
      cur.clear();
    } else {
      cur += (cur.empty() ? "" : " ") + line;
    }
  }
  if (!cur.empty()) stories.push_back(cur);
  std::vector<std::string> out;
  for (size_t i = stories.size() - std::min(n, stories.size()); i < stories.size(); ++i) {
    // Mixed lengths: the first 1..40 words.
    std::istringstream words(stories[i]);
    std::string w, text;
    const size_t want = 1 + (i * 7) % 40;
    for (size_t k = 0; k < want && words >> w; ++k) text += (k ? " " : "") + w;
    out.push_back(text);
  }
  return out;
}

std::vector<std::vector<int32_t>> random_prompts(uint32_t seed, int count, int64_t vocab) {
  std::mt19937 rng(seed);
  std::vector<std::vector<int32_t>> prompts;
  for (int p = 0; p < count; ++p) {
    std::vector<int32_t> ids(1 + rng() % 30);
    for (auto& t : ids) t = static_cast<int32_t>(rng() % vocab);
    prompts.push_back(ids);
  }
  return prompts;
}

}  // namespace eagle2::test

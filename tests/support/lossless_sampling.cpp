#include "support/lossless_sampling.h"

#include <cmath>
#include <span>

#include "model/batch.h"
#include "model/kv_cache.h"
#include "speculative/verify.h"
#include "support/random_models.h"

namespace eagle2::test {

std::unique_ptr<LlamaModel> small_vocab_model() {
  LlamaConfig cfg = test::tiny_config();
  cfg.vocab_size = 5;
  return test::load_random_model("lossless", cfg, DType::F32, 31, 0.5f);
}

std::map<std::vector<int32_t>, double> exact_distribution(LlamaModel& m, const SamplingParams& sp,
                                                          ThreadPool& pool) {
  std::map<std::vector<int32_t>, double> dist;
  const int64_t V = m.config().vocab_size;
  std::function<void(std::vector<int32_t>, double)> rec = [&](std::vector<int32_t> seq, double pr) {
    if (static_cast<int>(seq.size() - kPrompt.size()) == kTokens) {
      dist[std::vector<int32_t>(seq.begin() + static_cast<std::ptrdiff_t>(kPrompt.size()),
                                seq.end())] = pr;
      return;
    }
    KvCache kv = m.make_cache(32);
    ForwardResult out;
    const int32_t last = static_cast<int32_t>(seq.size() - 1);
    m.forward(Batch::causal(seq, 0), kv, std::span(&last, 1), out, pool);
    const Distribution p = process_logits(out.logits.data(), V, sp);
    for (int32_t t = 0; t < V; ++t) {
      if (p.p[t] <= 0) continue;
      std::vector<int32_t> next = seq;
      next.push_back(t);
      rec(next, pr * p.p[t]);
    }
  };
  rec(kPrompt, 1.0);
  return dist;
}

ChiSquare chi_square(const std::map<std::vector<int32_t>, double>& exact,
                     const std::map<std::vector<int32_t>, int64_t>& observed, int64_t n) {
  ChiSquare c;
  double merged_expected = 0;
  int64_t merged_observed = 0;
  int cells = 0;
  for (const auto& [seq, pr] : exact) {
    const double e = pr * static_cast<double>(n);
    const auto it = observed.find(seq);
    const int64_t o = it == observed.end() ? 0 : it->second;
    if (e < 5) {
      merged_expected += e;
      merged_observed += o;
      continue;
    }
    c.stat += (o - e) * (o - e) / e;
    ++cells;
  }
  if (merged_expected > 0) {
    c.stat +=
        (merged_observed - merged_expected) * (merged_observed - merged_expected) / merged_expected;
    ++cells;
  }
  for (const auto& [seq, o] : observed)
    if (!exact.count(seq)) c.stat += 1e9 * static_cast<double>(o);  // an impossible sequence
  c.df = cells - 1;
  const double z = 3.09, k = c.df;
  c.threshold = k * std::pow(1 - 2 / (9 * k) + z * std::sqrt(2 / (9 * k)), 3);
  return c;
}

Outcome run_speculative(LlamaModel& m, const SamplingParams& base, int64_t n_samples,
                        const std::function<std::unique_ptr<Drafter>(uint32_t)>& make_drafter,
                        const SamplingVerifier& verifier, ThreadPool& pool) {
  Outcome out;
  const int64_t V = m.config().vocab_size;
  GenerationOptions opt;
  opt.max_new_tokens = kTokens;
  opt.stop_at_eos = false;
  for (int64_t i = 0; i < n_samples; ++i) {
    opt.sampling = base;
    opt.sampling.seed = 1000003ull * static_cast<uint64_t>(i) + 17;
    auto drafter = make_drafter(static_cast<uint32_t>(i));
    KvCache kv = m.make_cache(32);
    std::vector<int32_t> seq;
    SpeculativeHooks hooks;
    hooks.verify_sampling = verifier;
    hooks.trace = [&](const CycleTrace& c) {
      const auto children = children_of(c.tree);
      if (!children[0].empty() && c.verdict.accepted() == 0) ++out.all_rejected;
      if (c.verdict.accepted() > 0) ++out.some_accepted;
      if (c.cycle == 0 && !children[0].empty()) {
        // P(first child accepted) = p(x) under the root's processed distribution: the root's
        // logits are the target's at the node, identical to a plain forward (batch invariance).
        ForwardResult f;
        KvCache kv2 = m.make_cache(32);
        std::vector<int32_t> ctx = kPrompt;
        ctx.push_back(c.tree.tokens[0]);
        const int32_t last = static_cast<int32_t>(ctx.size() - 1);
        m.forward(Batch::causal(ctx, 0), kv2, std::span(&last, 1), f, pool);
        const double px =
            process_logits(f.logits.data(), V, opt.sampling).p[c.tree.tokens[children[0][0]]];
        out.first_child_expected += px;
        out.first_child_variance += px * (1 - px);
        if (c.verdict.path.size() > 1 && c.verdict.path[1] == children[0][0])
          ++out.first_child_accepted;
      }
    };
    speculative_generate(
        m, kv, *drafter, kPrompt, opt, pool,
        [&](int32_t t) {
          seq.push_back(t);
          return true;
        },
        hooks);
    ++out.counts[seq];
  }
  return out;
}

}  // namespace eagle2::test

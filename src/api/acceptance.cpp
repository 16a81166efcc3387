// eagle2/acceptance.h over speculative/acceptance_probe.h.
#include "eagle2/acceptance.h"

#include <algorithm>

#include "api/handles.h"
#include "core/error.h"
#include "speculative/acceptance_probe.h"

namespace eagle2::api {

namespace {

AcceptanceReport run_probe(LlamaModel& target, PathDraftSource& source,
                           const std::vector<std::vector<int32_t>>& prompts,
                           const AcceptanceOptions& options, ThreadPool& pool) {
  if (prompts.empty()) fail("acceptance: no prompts");
  AcceptanceProbeOptions o;
  o.sampling.temperature = options.temperature;
  o.sampling.top_k = options.top_k;
  o.sampling.top_p = options.top_p;
  o.sampling.seed = options.seed;
  o.depth = options.depth;
  o.new_tokens = options.new_tokens;
  o.draft_top_k = options.draft_top_k;
  AcceptanceTally tally;
  for (const std::vector<int32_t>& prompt : prompts)
    probe_acceptance(target, source, prompt, o, pool, tally);
  AcceptanceReport r;
  r.prompts = tally.prompts;
  r.new_tokens = tally.new_tokens;
  r.roots = tally.roots;
  r.full_roots = tally.full_roots;
  if (tally.full_roots > 0) {
    const auto n = static_cast<double>(tally.full_roots);
    r.tau_top1_chain = 1 + static_cast<double>(tally.top1_chain) / n;
    r.tau_sampled_chain = 1 + static_cast<double>(tally.sampled_chain) / n;
  }
  for (const DepthTally& t : tally.depths) {
    DepthAcceptance d;
    d.pairs = t.pairs;
    if (t.pairs > 0) {
      const auto n = static_cast<double>(t.pairs);
      d.tv = t.tv / n;
      d.sampled = t.sampled / n;
      d.top1 = t.top1 / n;
      d.top1_expected = t.top1_expected / n;
      d.top1_ceiling = t.top1_ceiling / n;
      d.topk = t.topk / n;
      d.topk_expected = t.topk_expected / n;
      d.topk_ceiling = t.topk_ceiling / n;
      d.entropy = t.entropy / n;
    }
    r.depths.push_back(d);
  }
  return r;
}

int64_t longest_path(const std::vector<std::vector<int32_t>>& prompts, int64_t new_tokens) {
  int64_t n = 0;
  for (const auto& p : prompts) n = std::max(n, static_cast<int64_t>(p.size()));
  return n + std::max<int64_t>(new_tokens, 0);
}

}  // namespace

AcceptanceReport measure_acceptance(Model& target, Head& head,
                                    const std::vector<std::vector<int32_t>>& prompts,
                                    const AcceptanceOptions& options, Threads& threads) {
  LlamaModel& m = *target.impl().model;
  const int64_t context = longest_path(prompts, options.new_tokens);
  if (context > m.config().max_position_embeddings)
    fail("acceptance: a prompt plus ", options.new_tokens, " new tokens (", context,
         ") exceeds the model's context of ", m.config().max_position_embeddings);
  EagleHeadPathSource source(*head.impl().head, m, threads.impl().pool, context);
  return run_probe(m, source, prompts, options, threads.impl().pool);
}

AcceptanceReport measure_acceptance(Model& target, Model& draft,
                                    const std::vector<std::vector<int32_t>>& prompts,
                                    const AcceptanceOptions& options, Threads& threads) {
  LlamaModel& m = *target.impl().model;
  ModelPathSource source(*draft.impl().model, m, threads.impl().pool);
  return run_probe(m, source, prompts, options, threads.impl().pool);
}

}  // namespace eagle2::api

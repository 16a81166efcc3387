// eagle2/generate.h over speculative/generation.h and speculative/speculative_decoder.h.
#include "eagle2/generate.h"

#include "api/convert.h"
#include "api/handles.h"
#include "core/error.h"

namespace eagle2::api {

void SamplingOptions::validate() const {
  to_internal(*this).validate();
}

KvCache::KvCache(const Model& model, int64_t capacity)
    : impl_(std::make_unique<Impl>(Impl{model.impl().model->make_cache(capacity)})) {}
KvCache::~KvCache() = default;
KvCache::KvCache(KvCache&&) noexcept = default;
KvCache& KvCache::operator=(KvCache&&) noexcept = default;

Stats generate_plain(Model& model, KvCache& kv, const std::vector<int32_t>& prompt,
                     const GenerateOptions& options, Threads& threads,
                     const TokenCallback& on_token) {
  return to_public(eagle2::generate_plain(*model.impl().model, kv.impl().kv, prompt,
                                          to_internal(options), threads.impl().pool, on_token));
}

Stats generate_speculative(Model& model, KvCache& kv, Drafter& drafter,
                           const std::vector<int32_t>& prompt, const GenerateOptions& options,
                           Threads& threads, const TokenCallback& on_token,
                           const CycleCallback& on_cycle) {
  if (!drafter) fail("generate_speculative: no drafter (the spec \"plain\" decodes plainly)");
  SpeculativeHooks hooks;
  // Only with a callback: without one the loop calls nothing per cycle.
  if (on_cycle) {
    hooks.trace = [&on_cycle](const CycleTrace& c) {
      Cycle view;
      view.cycle = c.cycle;
      view.committed = c.committed;
      view.tokens = c.tree.tokens;
      view.parents = c.tree.parents;
      view.values = c.tree.values;
      view.path = c.verdict.path;
      view.accepted = c.verdict.accepted();
      view.bonus = c.verdict.bonus;
      on_cycle(view);
    };
  }
  return to_public(speculative_generate(*model.impl().model, kv.impl().kv, *drafter.impl().drafter,
                                        prompt, to_internal(options), threads.impl().pool, on_token,
                                        hooks));
}

}  // namespace eagle2::api

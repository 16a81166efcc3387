#include "support/decoding.h"

namespace eagle2::test {

std::vector<int32_t> plain_tokens(LlamaModel& model, const std::vector<int32_t>& prompt,
                                  const GenerationOptions& opt, int64_t ctx, ThreadPool& pool) {
  KvCache kv = model.make_cache(ctx);
  std::vector<int32_t> out;
  generate_plain(model, kv, prompt, opt, pool, [&](int32_t t) {
    out.push_back(t);
    return true;
  });
  return out;
}

std::vector<int32_t> speculative_tokens(LlamaModel& model, Drafter& drafter,
                                        const std::vector<int32_t>& prompt,
                                        const GenerationOptions& opt, int64_t ctx, ThreadPool& pool,
                                        const SpeculativeHooks& hooks, SpeculativeStats* stats) {
  KvCache kv = model.make_cache(ctx);
  std::vector<int32_t> out;
  const SpeculativeStats st = speculative_generate(
      model, kv, drafter, prompt, opt, pool,
      [&](int32_t t) {
        out.push_back(t);
        return true;
      },
      hooks);
  if (stats) *stats = st;
  return out;
}

}  // namespace eagle2::test

// eagle2/engine.h over speculative/batch_decoder.h: the engine owns the drafting policies its
// sequences share and makes each sequence's drafter from its spec.
#include "eagle2/engine.h"

#include "api/convert.h"
#include "api/handles.h"
#include "speculative/batch_decoder.h"
#include "speculative/drafter_spec.h"
#include "speculative/shared_suffix_index.h"

namespace eagle2::api {

struct Engine::Impl {
  Impl(Model& model, int64_t kv_tokens, int64_t context, Threads& threads, const VerifyCost* cost)
      : pool(threads.impl().pool),
        context(context),
        policies(cost ? cost->impl().model : nullptr, model.impl().model.get()),
        decoder(*model.impl().model, model.impl().model->make_pool(kv_tokens), context, pool,
                batch_cost(cost)) {}

  // The multi-sequence curves when measured, else one sequence's curve for the whole step.
  static std::shared_ptr<const BatchCostModel> batch_cost(const VerifyCost* cost) {
    if (!cost) return nullptr;
    if (cost->impl().batch) return cost->impl().batch;
    return std::make_shared<const BatchCostModel>(BatchCostModel::single(*cost->impl().model));
  }

  ThreadPool& pool;
  int64_t context;
  DraftPolicies policies;  // before the decoder: its drafters hold policies of these
  BatchDecoder decoder;
  StepReport report;  // last_step() in the public spelling
};

Engine::Engine(Model& model, int64_t kv_tokens, int64_t context, Threads& threads,
               const VerifyCost* cost)
    : impl_(std::make_unique<Impl>(model, kv_tokens, context, threads, cost)) {}
Engine::~Engine() = default;

int64_t Engine::kv_tokens_for(int64_t sequences, int64_t context) {
  constexpr int64_t block = eagle2::KvCache::kDefaultBlockSize;
  return sequences * KvPool::blocks_for_tokens(context, block) * block;
}

void Engine::share_suffix_index(int64_t max_bytes) {
  impl_->policies.share_suffix_index(std::make_shared<SharedSuffixIndex>(max_bytes));
}

Engine::SuffixIndexUsage Engine::suffix_index_usage() const {
  SuffixIndexUsage u;
  const std::shared_ptr<SharedSuffixIndex> index = impl_->policies.suffix_index();
  if (!index) return u;
  u.bytes = index->bytes();
  u.max_bytes = index->max_bytes();
  u.node_slots = index->node_slots();
  u.max_nodes = index->max_nodes();
  u.documents = index->documents();
  u.evictions = index->evictions();
  return u;
}

int64_t Engine::add(std::vector<int32_t> prompt, const GenerateOptions& options,
                    const DrafterSpec& spec, Head* head) {
  const GenerationOptions opt = to_internal(options);
  opt.sampling.validate();  // the sampling error first, not the drafter's view of the temperature
  std::unique_ptr<eagle2::Drafter> drafter =
      make_drafter(to_internal(spec), head ? head->impl().head.get() : nullptr, impl_->pool,
                   impl_->context, impl_->policies, opt.sampling.temperature);
  return impl_->decoder.add(std::move(prompt), opt, std::move(drafter));
}

int64_t Engine::step() {
  return impl_->decoder.step();
}
int64_t Engine::step_alone(int64_t id) {
  return impl_->decoder.step_alone(id);
}
bool Engine::last_failure_in_forward() const {
  return impl_->decoder.last_failure_in_forward();
}
const std::vector<int64_t>& Engine::failed_in_last_step() const {
  return impl_->decoder.failed_in_last_step();
}
int64_t Engine::live() const {
  return impl_->decoder.live();
}
bool Engine::finished(int64_t id) const {
  return impl_->decoder.finished(id);
}
bool Engine::failed(int64_t id) const {
  return impl_->decoder.failed(id);
}
const std::vector<int32_t>& Engine::tokens(int64_t id) const {
  return impl_->decoder.tokens(id);
}
Stats Engine::stats(int64_t id) const {
  return to_public(impl_->decoder.stats(id));
}
void Engine::cancel(int64_t id) {
  impl_->decoder.cancel(id);
}
void Engine::remove(int64_t id) {
  impl_->decoder.remove(id);
}
static_assert(Engine::kDraftedByHead == (eagle2::DraftTree::kFromHead << 1) &&
              Engine::kDraftedBySuffix == (eagle2::DraftTree::kFromSuffix << 1) &&
              eagle2::BatchDecoder::kDraftedToken == 1);
const std::vector<uint8_t>& Engine::drafted(int64_t id) const {
  return impl_->decoder.drafted(id);
}
std::vector<TokenLogprobs> Engine::logprobs(int64_t id, size_t from) const {
  const std::vector<eagle2::RowLogprobs>& rows = impl_->decoder.logprobs(id);
  std::vector<TokenLogprobs> out;
  for (size_t i = from; i < rows.size(); ++i) {
    TokenLogprobs t;
    t.logprob = rows[i].chosen;
    for (const auto& [token, logprob] : rows[i].top) t.top.push_back({token, logprob});
    out.push_back(std::move(t));
  }
  return out;
}
const StepReport& Engine::last_step() const {
  const eagle2::StepReport& r = impl_->decoder.last_step();
  impl_->report = StepReport{r.sequences, r.rows,          r.prefill_rows,   r.accepted,
                             r.committed, r.draft_seconds, r.forward_seconds};
  return impl_->report;
}
int64_t Engine::kv_blocks_used() const {
  return impl_->decoder.kv_pool().used_blocks();
}
int64_t Engine::kv_blocks_total() const {
  return impl_->decoder.kv_pool().n_blocks();
}

}  // namespace eagle2::api

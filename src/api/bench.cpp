// eagle2/bench.h and eagle2/prompts.h over bench/bench_runner.h, bench/bench_charts.h and
// bench/prompt_set.h.
#include "eagle2/bench.h"

#include "api/convert.h"
#include "api/handles.h"
#include "bench/bench_charts.h"
#include "bench/prompt_set.h"

namespace eagle2::api {

std::vector<Prompt> load_prompt_set(const std::string& path, const PromptSetOptions& options) {
  std::vector<Prompt> out;
  for (const eagle2::Prompt& p : eagle2::load_prompt_set(path, to_internal(options)))
    out.push_back(to_public(p));
  return out;
}

BenchRun::BenchRun(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
BenchRun::~BenchRun() = default;
BenchRun::BenchRun(BenchRun&&) noexcept = default;
BenchRun& BenchRun::operator=(BenchRun&&) noexcept = default;

size_t BenchRun::size() const {
  return impl_->records.size();
}
const std::vector<int32_t>& BenchRun::tokens(size_t run) const {
  return impl_->records.at(run).tokens;
}
const std::vector<BenchSummary>& BenchRun::summary() const {
  return impl_->rows;
}

std::vector<BenchSummary> BenchRun::summary_of(const std::vector<size_t>& runs) const {
  std::vector<RunRecord> some;
  for (const size_t r : runs) some.push_back(impl_->records.at(r));
  std::vector<BenchSummary> out;
  for (const Summary& s : summarize(some)) out.push_back(to_public(s));
  return out;
}

std::vector<std::string> BenchRun::greedy_mismatches() const {
  return eagle2::greedy_mismatches(impl_->records);
}
std::string BenchRun::json() const {
  return bench_to_json(impl_->summary, impl_->records);
}
std::string BenchRun::csv() const {
  return summaries_to_csv(impl_->summary);
}
std::vector<std::pair<std::string, std::string>> BenchRun::charts() const {
  return bench_charts(impl_->summary);
}

BenchRun run_bench(Model& model, Head* head, const Tokenizer& tokenizer,
                   const std::vector<PromptSet>& sets, const std::vector<DrafterSpec>& specs,
                   const BenchOptions& options, Threads& threads, const BenchProgress& progress) {
  std::vector<eagle2::PromptSet> internal_sets;
  for (const PromptSet& s : sets) {
    eagle2::PromptSet set{s.name, {}};
    for (const Prompt& p : s.prompts) set.prompts.push_back(to_internal(p));
    internal_sets.push_back(std::move(set));
  }
  std::vector<eagle2::DrafterSpec> internal_specs;
  for (const DrafterSpec& s : specs) internal_specs.push_back(to_internal(s));
  auto impl = std::make_unique<BenchRun::Impl>();
  impl->records = eagle2::run_bench(*model.impl().model, head ? head->impl().head.get() : nullptr,
                                    *tokenizer.impl().tokenizer, internal_sets, internal_specs,
                                    to_internal(options), threads.impl().pool, progress);
  impl->summary = summarize(impl->records);
  for (const Summary& s : impl->summary) impl->rows.push_back(to_public(s));
  return BenchRun(std::move(impl));
}

}  // namespace eagle2::api

// eagle2/cost.h over model/cost_curve.h, kernels/bandwidth.h and speculative/tree_budget.h.
#include "eagle2/cost.h"

#include <algorithm>

#include "api/convert.h"
#include "api/handles.h"
#include "kernels/bandwidth.h"

namespace eagle2::api {

std::vector<CostPoint> measure_cost_curve(Model& model, const CostCurveOptions& options,
                                          Threads& threads) {
  return to_public(
      eagle2::measure_cost_curve(*model.impl().model, to_internal(options), threads.impl().pool));
}

std::vector<CostPoint> measure_sequence_cost(Model& model,
                                             const std::vector<int64_t>& sequence_counts,
                                             const CostCurveOptions& options, Threads& threads) {
  return to_public(eagle2::measure_sequence_cost(*model.impl().model, sequence_counts,
                                                 to_internal(options), threads.impl().pool));
}

double measure_read_bandwidth_gbs(Threads& threads, size_t bytes) {
  return eagle2::measure_read_bandwidth_gbs(threads.impl().pool, bytes);
}

VerifyCost VerifyCost::measure(Model& target, int64_t ctx, Threads& threads,
                               int64_t max_sequences) {
  auto impl = std::make_unique<Impl>();
  std::vector<eagle2::CostPoint> curve;
  LlamaModel& model = *target.impl().model;
  impl->model = measure_verify_cost(model, ctx, threads.impl().pool, &curve);
  impl->curve = to_public(curve);
  if (max_sequences > 1) {
    // Past 64 sequences the start-up measurement would take many seconds; larger batches follow
    // the 64-sequence curve (extrapolated along its rows).
    const int64_t largest = std::min<int64_t>(max_sequences, 64);
    std::vector<int64_t> counts;
    for (int64_t b = 1; b < largest; b *= 2) counts.push_back(b);
    counts.push_back(largest);
    // The same short context as the single-sequence curve; the extra rows need room on top.
    const int64_t context = std::min<int64_t>(64, std::max<int64_t>(1, ctx - 65));
    impl->batch = std::make_shared<const BatchCostModel>(
        measure_batch_cost(model, counts, context, threads.impl().pool));
    for (const auto& [b, c] : impl->batch->curves()) {
      std::vector<CostPoint> points;
      for (const auto& [k, seconds] : c.points())
        points.push_back({k, seconds, seconds / c.points().front().second});
      impl->batch_curves.emplace_back(b, std::move(points));
    }
  }
  return VerifyCost(std::move(impl));
}

VerifyCost::VerifyCost(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
VerifyCost::~VerifyCost() = default;
VerifyCost::VerifyCost(VerifyCost&&) noexcept = default;
VerifyCost& VerifyCost::operator=(VerifyCost&&) noexcept = default;
const std::vector<CostPoint>& VerifyCost::curve() const {
  return impl_->curve;
}
const std::vector<std::pair<int64_t, std::vector<CostPoint>>>& VerifyCost::batch_curves() const {
  return impl_->batch_curves;
}

}  // namespace eagle2::api

// eagle2/cost.h over model/cost_curve.h, kernels/bandwidth.h and speculative/tree_budget.h.
#include "eagle2/cost.h"

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

VerifyCost VerifyCost::measure(Model& target, int64_t ctx, Threads& threads) {
  auto impl = std::make_unique<Impl>();
  std::vector<eagle2::CostPoint> curve;
  impl->model = measure_verify_cost(*target.impl().model, ctx, threads.impl().pool, &curve);
  impl->curve = to_public(curve);
  return VerifyCost(std::move(impl));
}

VerifyCost::VerifyCost(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
VerifyCost::~VerifyCost() = default;
VerifyCost::VerifyCost(VerifyCost&&) noexcept = default;
VerifyCost& VerifyCost::operator=(VerifyCost&&) noexcept = default;
const std::vector<CostPoint>& VerifyCost::curve() const { return impl_->curve; }

}  // namespace eagle2::api

#include "speculative/draft_policy.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"

namespace eagle2 {

DraftPolicy::DraftPolicy(std::shared_ptr<const VerifyCostModel> cost) : cost_(std::move(cost)) {}

AcceptanceCalibration DraftPolicy::calibration() const {
  std::lock_guard lock(mutex_);
  return calibration_;
}

void DraftPolicy::record(std::span<const NodeOutcome> outcomes) {
  std::lock_guard lock(mutex_);
  for (const NodeOutcome& o : outcomes) calibration_.record(o.logp, o.rank, o.accepted);
}

AcceptanceCalibration DraftPolicy::suffix_calibration() const {
  std::lock_guard lock(mutex_);
  return suffix_calibration_;
}

void DraftPolicy::record_suffix(std::span<const NodeOutcome> outcomes) {
  std::lock_guard lock(mutex_);
  for (const NodeOutcome& o : outcomes) suffix_calibration_.record(o.logp, o.rank, o.accepted);
}

void DraftPolicy::forget() {
  std::lock_guard lock(mutex_);
  calibration_ = AcceptanceCalibration();
  suffix_calibration_ = AcceptanceCalibration();
  siblings_ = SiblingCounts();
}

DraftPolicy::SiblingCounts DraftPolicy::sibling_counts() const {
  std::lock_guard lock(mutex_);
  return siblings_;
}

void DraftPolicy::record_siblings(std::span<const int64_t> tried,
                                  std::span<const int64_t> accepted) {
  if (accepted.size() != tried.size())
    fail("draft policy: sibling counts of two sizes (internal error)");
  std::lock_guard lock(mutex_);
  if (siblings_.tried.size() < tried.size()) {
    siblings_.tried.resize(tried.size(), 0);
    siblings_.accepted.resize(tried.size(), 0);
  }
  for (size_t i = 0; i < tried.size(); ++i) {
    siblings_.tried[i] += tried[i];
    siblings_.accepted[i] += accepted[i];
  }
  // A window: past kSiblingWindow tries of the first sibling every count is halved, so recent
  // requests outweigh old ones (and a burst of hopeless ones is forgotten).
  if (!siblings_.tried.empty() && siblings_.tried[0] > kSiblingWindow)
    for (size_t i = 0; i < siblings_.tried.size(); ++i) {
      siblings_.tried[i] /= 2;
      siblings_.accepted[i] /= 2;
    }
}

DraftPolicies::DraftPolicies(std::shared_ptr<const VerifyCostModel> cost, LlamaModel* target)
    : cost_(std::move(cost)), assets_(target) {}

int DraftPolicies::temperature_bucket(float temperature) {
  if (temperature == 0.0f) return 0;  // greedy (and -0) is a regime of its own
  const double steps = std::min<double>(temperature / kBucketWidth, kLastBucket);
  return 1 + static_cast<int>(std::lround(steps));
}

std::shared_ptr<DraftPolicy> DraftPolicies::get(const EagleHead& head, float temperature) {
  // The sampler refuses these too (and +inf, which is harmless here); a NaN key would also break
  // the map's ordering.
  if (!(temperature >= 0.0f)) fail("draft policy: temperature ", temperature, " must be >= 0");
  std::lock_guard lock(mutex_);
  auto& slot = policies_[{&head, temperature_bucket(temperature)}];
  if (!slot) slot = std::make_shared<DraftPolicy>(cost_);
  return slot;
}

void DraftPolicies::forget() {
  std::lock_guard lock(mutex_);
  for (auto& [key, policy] : policies_) policy->forget();
}

size_t DraftPolicies::size() const {
  std::lock_guard lock(mutex_);
  return policies_.size();
}

void DraftPolicies::share_suffix_index(std::shared_ptr<SharedSuffixIndex> index) {
  std::lock_guard lock(mutex_);
  suffix_index_ = std::move(index);
}

std::shared_ptr<SharedSuffixIndex> DraftPolicies::suffix_index() const {
  std::lock_guard lock(mutex_);
  return suffix_index_;
}

}  // namespace eagle2

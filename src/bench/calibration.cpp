#include "bench/calibration.h"

#include <algorithm>
#include <cmath>

namespace eagle2 {

int Calibration::bin_of(double p) {
  const int b = static_cast<int>(std::floor(std::clamp(p, 0.0, 1.0) * kBins));
  return std::min(b, kBins - 1);
}

void Calibration::add(const DraftTree& tree, const Verdict& verdict) {
  std::vector<char> on_path(static_cast<size_t>(tree.size()), 0);
  for (const int32_t n : verdict.path)
    if (n >= 0 && n < tree.size()) on_path[static_cast<size_t>(n)] = 1;
  // Only nodes verification could accept: a lookahead window's nodes carry no estimate.
  for (int64_t i = 1; i < tree.verifiable_size(); ++i) {
    const double p = std::exp(static_cast<double>(tree.values[static_cast<size_t>(i)]));
    const int b = bin_of(p);
    ++nodes[b];
    estimate_sum[b] += p;
    accepted[b] += on_path[static_cast<size_t>(i)];
  }
}

void Calibration::merge(const Calibration& other) {
  for (int b = 0; b < kBins; ++b) {
    nodes[b] += other.nodes[b];
    accepted[b] += other.accepted[b];
    estimate_sum[b] += other.estimate_sum[b];
  }
}

int64_t Calibration::total_nodes() const {
  int64_t n = 0;
  for (const int64_t v : nodes) n += v;
  return n;
}

int64_t Calibration::total_accepted() const {
  int64_t n = 0;
  for (const int64_t v : accepted) n += v;
  return n;
}

}  // namespace eagle2

#include "speculative/tree_budget.h"

#include <algorithm>
#include <cmath>
#include <functional>

#include "core/error.h"
#include "model/cost_curve.h"

namespace eagle2 {

VerifyCostModel::VerifyCostModel(std::vector<std::pair<int64_t, double>> points,
                                 double draft_seconds)
    : points_(std::move(points)), draft_seconds_(draft_seconds) {
  if (points_.empty()) fail("verify cost model: no (k, seconds) points");
  for (size_t i = 0; i < points_.size(); ++i) {
    const auto [k, s] = points_[i];
    if (k < 1) fail("verify cost model: batch size ", k, " must be >= 1");
    if (i > 0 && k <= points_[i - 1].first)
      fail("verify cost model: batch sizes must be strictly increasing (", points_[i - 1].first,
           " then ", k, ")");
    if (!(s > 0) || !std::isfinite(s))
      fail("verify cost model: time ", s, "s at k = ", k, " must be positive and finite");
  }
  if (!(draft_seconds_ >= 0) || !std::isfinite(draft_seconds_))
    fail("verify cost model: draft time ", draft_seconds_, "s must be >= 0 and finite");
}

double VerifyCostModel::seconds(int64_t k) const {
  const auto& p = points_;
  if (k <= p.front().first) return p.front().second;
  if (k >= p.back().first) {
    const double slope =
        p.size() == 1
            ? p.back().second / static_cast<double>(p.back().first)
            : std::max(0.0, (p.back().second - p[p.size() - 2].second) /
                                static_cast<double>(p.back().first - p[p.size() - 2].first));
    return p.back().second + slope * static_cast<double>(k - p.back().first);
  }
  // First point with a larger k; k lies inside (hi - 1, hi].
  const auto hi =
      std::upper_bound(p.begin(), p.end(), k, [](int64_t x, const auto& q) { return x < q.first; });
  const auto lo = hi - 1;
  const double t = static_cast<double>(k - lo->first) / static_cast<double>(hi->first - lo->first);
  return lo->second + t * (hi->second - lo->second);
}

int64_t choose_total_tokens(std::span<const float> values_desc, const VerifyCostModel& cost,
                            double draft_seconds, int64_t max_tokens) {
  // Past values_desc.size() + 1 the expected tokens stop growing, so no larger T can win a tie.
  const int64_t t_max = std::max<int64_t>(
      1, std::min<int64_t>(max_tokens, static_cast<int64_t>(values_desc.size()) + 1));
  int64_t best_t = 1;
  double expected = 1;  // the bonus token is always emitted
  double best_rate = expected / (draft_seconds + cost.seconds(1));
  for (int64_t t = 2; t <= t_max; ++t) {
    expected += std::exp(static_cast<double>(values_desc[static_cast<size_t>(t - 2)]));
    const double rate = expected / (draft_seconds + cost.seconds(t));
    if (rate > best_rate) {
      best_rate = rate;
      best_t = t;
    }
  }
  return best_t;
}

namespace {

// max over T of (1 + sum of the T - 1 best exp(values)) / (seconds + cost(T)).
double best_rate(std::vector<float>& values, const VerifyCostModel& cost, double seconds,
                 int64_t max_tokens) {
  std::sort(values.begin(), values.end(), std::greater<float>());
  const int64_t t_max =
      std::max<int64_t>(1, std::min<int64_t>(max_tokens, static_cast<int64_t>(values.size()) + 1));
  double expected = 1, best = expected / (seconds + cost.seconds(1));
  for (int64_t t = 2; t <= t_max; ++t) {
    expected += std::exp(static_cast<double>(values[static_cast<size_t>(t - 2)]));
    best = std::max(best, expected / (seconds + cost.seconds(t)));
  }
  return best;
}

}  // namespace

bool deeper_level_may_pay(std::span<const float> values, std::span<const float> frontier,
                          const VerifyCostModel& cost, double drafted_seconds, double level_seconds,
                          int64_t max_tokens) {
  std::vector<float> now(values.begin(), values.end());
  std::vector<float> deeper = now;
  deeper.insert(deeper.end(), frontier.begin(), frontier.end());
  return best_rate(deeper, cost, drafted_seconds + level_seconds, max_tokens) >
         best_rate(now, cost, drafted_seconds, max_tokens);
}

int AcceptanceCalibration::bin_of(float logp, int rank) {
  // Clamped in double before the int conversion, which is undefined for NaN and out-of-range
  // values: a NaN log-prob lands in the lowest bin, +inf in the highest.
  double x = std::exp(static_cast<double>(logp)) * kBins;
  if (!(x >= 0)) x = 0;
  x = std::min(x, static_cast<double>(kBins - 1));
  return (rank == 0 ? 0 : kBins) + static_cast<int>(x);
}

void AcceptanceCalibration::record(float logp, int rank, bool accepted) {
  const int b = bin_of(logp, rank), r = rank == 0 ? 0 : 1;
  seen_[b] += 1;
  rank_seen_[r] += 1;
  if (accepted) {
    accepted_[b] += 1;
    rank_accepted_[r] += 1;
  }
}

double AcceptanceCalibration::estimate(float logp, int rank) const {
  const double p = std::min(1.0, std::exp(static_cast<double>(logp)));
  const int b = bin_of(logp, rank), r = rank == 0 ? 0 : 1;
  const double prior = (rank_accepted_[r] + kPrior * p) / (rank_seen_[r] + kPrior);
  return (accepted_[b] + kPrior * prior) / (seen_[b] + kPrior);
}

float AcceptanceCalibration::log_confidence(float logp, int rank) const {
  return std::min(0.0f, static_cast<float>(std::log(estimate(logp, rank))));
}

std::shared_ptr<const VerifyCostModel> measure_verify_cost(LlamaModel& target, int64_t ctx,
                                                           ThreadPool& pool,
                                                           std::vector<CostPoint>* curve) {
  CostCurveOptions opt;
  opt.context = std::min<int64_t>(64, ctx / 2);
  opt.repetitions = 3;
  opt.ks.clear();
  // Every k up to 8, where the chooser mostly lands and where the kernels' tile shapes make the
  // curve uneven (a 3-token forward can cost less than a 2-token one), then doubling to 64.
  for (int64_t k = 1; k <= 64 && opt.context + k <= ctx; k = k < 8 ? k + 1 : 2 * k)
    opt.ks.push_back(k);
  if (opt.ks.empty())
    fail("auto tree budget: a context of ", ctx, " is too small to time the target");
  const std::vector<CostPoint> measured = measure_cost_curve(target, opt, pool);
  std::vector<std::pair<int64_t, double>> points;
  for (const CostPoint& p : measured) points.emplace_back(p.k, p.seconds);
  if (curve) *curve = measured;
  return std::make_shared<const VerifyCostModel>(std::move(points));
}

}  // namespace eagle2

// What drafters learn and are told about one (head, temperature) pair, apart from the mechanism
// that drafts (the head and the tree builders) and from each sequence's own state (DraftPacing):
// the verify cost model that sizes trees and the AcceptanceCalibration that ranks their nodes.
// How often a head's top choice is accepted depends on the head and on the temperature, not on
// the request, so every sequence decoding with that head at that temperature learns into, and
// drafts from, one DraftPolicy; an engine owns them in a DraftPolicies keyed by the pair.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <utility>
#include <vector>

#include "speculative/draft_assets.h"
#include "speculative/tree_budget.h"

namespace eagle2 {

class EagleHead;
class SharedSuffixIndex;

// A verified node whose parent was accepted: its draft log-prob, its sibling rank, and whether it
// was accepted (AcceptanceCalibration::record).
struct NodeOutcome {
  float logp;
  int rank;
  bool accepted;
};

// Thread-safety: any number of threads may use one policy at once. The cost model is immutable;
// the calibration is guarded by a mutex, read as a whole (a snapshot per draft, so that one tree
// is ranked by one consistent state whatever other sequences record meanwhile) and written one
// cycle's outcomes at a time.
class DraftPolicy {
 public:
  // cost: the target's verify cost curve for auto budgets (nullptr: no auto budget possible).
  explicit DraftPolicy(std::shared_ptr<const VerifyCostModel> cost = nullptr);
  const VerifyCostModel* cost() const { return cost_.get(); }

  // A copy of what has been learned so far.
  AcceptanceCalibration calibration() const;
  void record(std::span<const NodeOutcome> outcomes);
  // The same for suffix-drafted nodes of hybrid trees (hybrid_drafter.h), whose "log-prob" is the
  // log of the node's empirical frequency among its siblings and whose rank is its frequency
  // rank: how often such a node was accepted, learned beside the head's so that both sources'
  // nodes are ranked by one acceptance estimate. Kept apart because the two scores mean
  // different things (a suffix continuation seen once has frequency 1).
  AcceptanceCalibration suffix_calibration() const;
  void record_suffix(std::span<const NodeOutcome> outcomes);
  // Sampled trees with an auto budget (sampled:auto): of the children tried at a node, how often
  // the one at each sibling index was tried and accepted, by every sequence of this (head,
  // temperature bucket). Shared because the budget needs the request's temperature's acceptance
  // from its first cycle on; a fixed sampled tree keeps its own per-sequence counts (its text then
  // depends on the seed alone). The shape stays exact: what other sequences recorded does not
  // depend on this cycle's draws.
  struct SiblingCounts {
    std::vector<int64_t> tried, accepted;  // per sibling index
  };
  SiblingCounts sibling_counts() const;
  // Adds one cycle's counts (index i of both spans: sibling index i). Past kSiblingWindow tries
  // of the first sibling all counts are halved.
  static constexpr int64_t kSiblingWindow = 4096;
  void record_siblings(std::span<const int64_t> tried, std::span<const int64_t> accepted);
  // Back to nothing learned (drafters holding this policy see it at their next draft).
  void forget();

 private:
  std::shared_ptr<const VerifyCostModel> cost_;
  mutable std::mutex mutex_;
  AcceptanceCalibration calibration_;
  AcceptanceCalibration suffix_calibration_;
  SiblingCounts siblings_;
};

// The engine's policies, one per (head, temperature bucket), made on first use and kept for the
// owner's lifetime (what is learned outlives the requests that taught it). A head is identified by
// its address: the owner must not outlive the heads it was asked about, nor be asked about a head
// whose draft vocabulary changed since (EagleHead::restrict_vocab). Temperatures share a policy
// by bucket (temperature_bucket): acceptance changes little between T = 0.70 and 0.71, so a
// request at 0.71 drafts from what requests at 0.7 learned instead of starting over, and a client
// choosing a new temperature per request cannot grow the map without bound (it was keyed by the
// exact float). Thread-safe: get() and forget() lock. The owner also holds what its
// drafters load from their specs' folders (assets(): draft models, Medusa and Hydra heads), which,
// unlike what is learned, forget() keeps.
class DraftPolicies {
 public:
  // cost: the target's verify cost curve, shared by every policy (the verify cost is the
  // target's, whatever the head or the temperature); nullptr when no drafter uses an auto budget.
  // target: the engine's target model, for drafters that read it (DraftAssets::target).
  explicit DraftPolicies(std::shared_ptr<const VerifyCostModel> cost = nullptr,
                         LlamaModel* target = nullptr);
  DraftAssets& assets() { return assets_; }
  // The policy of (head, temperature_bucket(temperature)); Error for a negative or NaN
  // temperature.
  std::shared_ptr<DraftPolicy> get(const EagleHead& head, float temperature);
  // 0 for T = 0 (and -0) alone; then buckets kBucketWidth wide centred on multiples of it
  // (T = 0.7 is bucket 15, [0.675, 0.725)); every T >= (kLastBucket - 0.5) * kBucketWidth
  // (1.975) is the last one, 1 + kLastBucket.
  static constexpr double kBucketWidth = 0.05;
  static constexpr int kLastBucket = 40;
  static int temperature_bucket(float temperature);
  // Every policy forgets what it learned (they stay shared by the drafters holding them).
  void forget();
  const std::shared_ptr<const VerifyCostModel>& cost() const { return cost_; }
  size_t size() const;
  // The server-wide suffix index that suffix drafters made from now on draft from and publish to
  // (--suffix-scope server); nullptr (the default): each drafter indexes its own request only.
  void share_suffix_index(std::shared_ptr<SharedSuffixIndex> index);
  std::shared_ptr<SharedSuffixIndex> suffix_index() const;

 private:
  std::shared_ptr<SharedSuffixIndex> suffix_index_;
  std::shared_ptr<const VerifyCostModel> cost_;
  DraftAssets assets_;
  mutable std::mutex mutex_;
  std::map<std::pair<const EagleHead*, int>, std::shared_ptr<DraftPolicy>> policies_;
};

}  // namespace eagle2

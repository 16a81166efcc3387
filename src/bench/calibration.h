// Calibration of a drafter's acceptance estimates. A node's value is the sum of draft log-probs
// along its path, so exp(value) estimates the probability that the target accepts the whole path
// up to that node; EAGLE-2's reranking (and the tree budget chooser) rely on that estimate. Here
// every drafted node (root excluded) is binned by exp(value) into equal bins of [0, 1], and per bin
// we count the nodes, sum their estimates, and count those on the accepted path: a calibrated
// drafter has observed rate = mean estimate in every bin.
#pragma once

#include <cstdint>
#include <vector>

#include "draft/draft_tree.h"
#include "speculative/verify.h"

namespace eagle2 {

struct Calibration {
  static constexpr int kBins = 10;
  std::vector<int64_t> nodes = std::vector<int64_t>(kBins, 0);
  std::vector<int64_t> accepted = std::vector<int64_t>(kBins, 0);
  std::vector<double> estimate_sum = std::vector<double>(kBins, 0.0);

  // One verified cycle: tree nodes 1.. with verdict.path the accepted nodes (root first).
  void add(const DraftTree& tree, const Verdict& verdict);
  void merge(const Calibration& other);
  int64_t total_nodes() const;
  int64_t total_accepted() const;
  // Bin of an estimate p in [0, 1] (clamped): floor(p * kBins), with p = 1 in the last bin.
  static int bin_of(double p);
};

}  // namespace eagle2

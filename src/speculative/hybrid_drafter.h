// Hybrid trees (spec "dynamic:...+suffix[:T[:D[:P]]]"): each cycle an EAGLE-2 dynamic tree from the
// head and a suffix tree from the request's (and, under --suffix-scope server, the server's) text
// are merged into one tree verified in one target forward. Every node of both is scored by one
// calibrated acceptance estimate: the head's nodes by the head's calibration (the ":cal" ranking,
// AcceptanceCalibration over the draft log-prob and sibling rank), the suffix nodes by a
// calibration of their own learned the same way over the node's empirical frequency among its
// siblings and its frequency rank (DraftPolicy::suffix_calibration); a node's value is the sum of
// log-estimates along its path, as in a calibrated dynamic tree. Identical token paths from both
// sources are one node, valued at the larger of the two values (each estimate is conditioned on
// one source's score only; the larger is the better-informed bet, and taking the maximum keeps
// values non-increasing along every path). The tree keeps the global top M - 1 nodes of the union
// best first (M: the dynamic part's tree tokens, or the size an auto budget chooses from the
// merged values), so a cycle drafts from whichever source is right at that position.
//
// Exactness: the merged tree is a deterministic draft (no sampled q), so at T > 0 it is verified by
// position-keyed sampling (verify_sampling in verify.h), which emits plain sampling's token at
// every position whatever the tree holds; sibling order, duplicates and the source of a node
// change what is accepted, never what is emitted. At T = 0 greedy verification likewise.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "speculative/draft_policy.h"
#include "speculative/drafter.h"

namespace eagle2 {

class EagleDrafter;
class SuffixDrafter;

// The union of two candidate trees with the same root, ranked best first. Both trees' values must
// be natural-log acceptance estimates summed along paths (non-increasing from parent to child).
class HybridCandidates {
 public:
  enum Source { kHead = 0, kSuffix = 1 };
  // Merges head and suffix (nodes of the same token path become one node).
  void build(const DraftTree& head, const DraftTree& suffix);
  // Every merged node but the root, best first (ties: the node merged first, head before suffix,
  // shallower before deeper): the i-th is the i-th node a tree of more than i + 1 tokens keeps.
  // Each node's parent precedes it.
  std::span<const float> values_desc() const { return values_desc_; }
  // The tree of the best total_tokens - 1 nodes (root included; clamped to [1, all]). Node i's
  // logp and rank are its head node's when the head drafted it, else its suffix node's; the
  // tree's sources say which drafted each node.
  // source_node(i, s) is node i's index in source s's tree (-1: that source did not draft it).
  void finish(int64_t total_tokens, DraftTree& tree);
  int32_t source_node(size_t tree_node, Source s) const { return kept_[s][tree_node]; }
  // Nodes of the tree finish() wrote last.
  int64_t finished_size() const { return static_cast<int64_t>(kept_[kHead].size()); }

 private:
  struct Node {
    int32_t token, parent;
    float value;
    std::array<int32_t, 2> from{-1, -1};
    std::vector<int32_t> children;
  };
  void add_tree(const DraftTree& t, Source s);

  std::vector<Node> nodes_;  // nodes_[0] is the root
  std::unordered_map<uint64_t, int32_t> edges_;
  std::vector<int32_t> order_;  // merged node indices, best first
  std::vector<float> values_desc_;
  std::vector<int32_t> tree_of_;              // merged node -> node in the finished tree
  std::array<std::vector<int32_t>, 2> kept_;  // finished tree node -> source node
  const DraftTree* sources_[2] = {nullptr, nullptr};
};

class HybridDrafter : public Drafter {
 public:
  // head: a calibrated dynamic EagleDrafter that does not record its own outcomes
  // (EagleDrafterOptions::record_outcomes = false); policy: its policy, into which this drafter
  // records both sources' outcomes; tree_tokens: M for a fixed budget (the dynamic spec's T).
  HybridDrafter(std::unique_ptr<EagleDrafter> head, std::unique_ptr<SuffixDrafter> suffix,
                std::shared_ptr<DraftPolicy> policy, int64_t tree_tokens);
  ~HybridDrafter() override;
  std::string name() const override;
  std::span<const int32_t> feature_layers() const override;
  void begin(std::span<const int32_t> context, const float* features, int32_t root) override;
  void draft(int64_t max_tokens, DraftTree& tree) override;
  bool choosable() const override;
  Proposal propose(int64_t max_tokens) override;
  void complete(int64_t total_tokens, DraftTree& tree) override;
  void accept(const DraftTree& tree, std::span<const int32_t> path, const float* features,
              int32_t bonus) override;
  void reset() override;

  EagleDrafter& head() const { return *head_; }

 private:
  std::unique_ptr<EagleDrafter> head_;
  std::unique_ptr<SuffixDrafter> suffix_;
  std::shared_ptr<DraftPolicy> policy_;
  int64_t tree_tokens_;
  DraftTree head_tree_, suffix_tree_;
  HybridCandidates candidates_;
  Proposal head_proposal_;
  int64_t max_tokens_ = 1;
  bool proposed_ = false;
  std::vector<NodeOutcome> outcomes_[2];  // accept()'s scratch
};

}  // namespace eagle2

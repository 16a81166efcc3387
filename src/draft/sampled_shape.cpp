#include "draft/sampled_shape.h"

#include <algorithm>
#include <utility>
#include <vector>

namespace eagle2 {

namespace {

// A path that may join the tree next: its parent is in, and so is its previous sibling.
struct SampledShapeSlot {
  double parent_key;  // the parent's key (0 for the root's children)
  double key;         // parent_key + log_share[path.back()]
  std::vector<int> path;
};

// The heap's order: "a after b" when a is worse (lower key, then longer, then larger path).
// Paths in the open set are distinct, so this is a strict total order on them and the pops come
// out in one order whatever the heap does.
struct SampledShapeWorse {
  bool operator()(const SampledShapeSlot& a, const SampledShapeSlot& b) const {
    if (a.key != b.key) return a.key < b.key;
    if (a.path.size() != b.path.size()) return a.path.size() > b.path.size();
    return a.path > b.path;
  }
};

}  // namespace

TreeChoices sampled_tree_shape(std::span<const double> log_share, int64_t nodes, size_t levels,
                               std::vector<float>* keys) {
  const auto K = static_cast<int>(log_share.size());
  TreeChoices shape;
  if (keys) keys->clear();
  if (K == 0 || levels == 0 || nodes <= 0) return shape;
  // A binary heap over a vector (std::priority_queue cannot hand its top out by move).
  std::vector<SampledShapeSlot> open;
  const auto push = [&](SampledShapeSlot s) {
    open.push_back(std::move(s));
    std::push_heap(open.begin(), open.end(), SampledShapeWorse{});
  };
  push({0.0, log_share[0], {0}});
  while (static_cast<int64_t>(shape.size()) < nodes && !open.empty()) {
    std::pop_heap(open.begin(), open.end(), SampledShapeWorse{});
    SampledShapeSlot slot = std::move(open.back());
    open.pop_back();
    // A child opens once its parent is in, a sibling once the one before it is: every node's
    // children are then a prefix of its draws, in draw order.
    if (slot.path.size() < levels) {
      std::vector<int> child = slot.path;
      child.push_back(0);
      push({slot.key, slot.key + log_share[0], std::move(child)});
    }
    if (slot.path.back() + 1 < K) {
      std::vector<int> sibling = slot.path;
      const int next = ++sibling.back();
      push({slot.parent_key, slot.parent_key + log_share[static_cast<size_t>(next)],
            std::move(sibling)});
    }
    if (keys) keys->push_back(static_cast<float>(slot.key));
    shape.push_back(std::move(slot.path));
  }
  return shape;
}

}  // namespace eagle2

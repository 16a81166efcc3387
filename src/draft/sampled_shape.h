// The shape of a tree whose siblings are drawn from the draft's q without replacement
// (EagleDrafterOptions::Shape::Sampled): chosen best first from each sibling index's measured
// acceptance, before any token is drawn, so that every node's children are the first draws of
// its q whatever they turn out to be (the condition under which the multi-candidate rule is
// exact; speculative/eagle_drafter_sampled.cpp says why).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "draft/tree_choices.h"

namespace eagle2 {

// Up to `nodes` sibling-index paths of at most `levels` entries, best first by the sum along
// the path of log_share[index] (the log-probability that a reached node's child at that sibling
// index is the accepted one); ties go to the shorter path, then the lexicographically smaller.
// A path's parent and its previous sibling always come before it. log_share.size() is the
// number of siblings per node (K). O(nodes * (log nodes + levels)): the CLI lets a tree take up
// to the whole context.
// keys, when given, receives each path's key (its sum of log_share), in the same order.
TreeChoices sampled_tree_shape(std::span<const double> log_share, int64_t nodes, size_t levels,
                               std::vector<float>* keys = nullptr);

}  // namespace eagle2

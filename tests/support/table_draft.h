// Plays the drafter's part for a tree builder (draft/tree_builder.h) from a scripted table of
// children instead of a draft model: answers every step the builder asks, the way EagleDrafter
// does, and records what it was asked. Tree builders are tested through it.
#pragma once

#include <functional>
#include <map>
#include <span>
#include <utility>
#include <vector>

#include "draft/tree_builder.h"

namespace eagle2::test {

// children[path of tokens from the root (excluded)] = {(token, logp)...} best first.
using ChildTable = std::map<std::vector<int32_t>, std::vector<std::pair<int32_t, float>>>;

struct TableDraft {
  using Children =
      std::function<std::vector<std::pair<int32_t, float>>(const std::vector<int32_t>& path)>;
  explicit TableDraft(ChildTable table);
  explicit TableDraft(Children children) : children(std::move(children)) {}

  Children children;
  // Optional: the confidences handed to the dynamic builder with each answer (a drafter with a
  // calibration computes them from the log-prob and the sibling rank).
  std::function<float(float logp, int rank)> confidence;
  // Optional: the answer to a ChooseBudget step (pool values best first, max_tokens). When set,
  // dynamic trees are built with a chosen budget.
  std::function<int64_t(std::span<const float>, int64_t)> choose;
  // Optional, with `choose`: asked at each Expand step (pool values, frontier values) whether to
  // draft the level, as an auto budget's drafter does; false stops expanding there.
  std::function<bool(std::span<const float>, std::span<const float>)> expand;

  std::vector<DraftStep> steps;                 // every step asked, in order (Done excluded)
  std::vector<std::vector<int32_t>> fed_steps;  // tokens fed at each Expand step, in order

  void build(DynamicTreeBuilder& builder, int32_t root, const DynamicTreeParams& params,
             int64_t max_tokens, DraftTree& tree);
  void build(StaticTreeBuilder& builder, int32_t root, const TreeChoices& choices,
             int64_t max_tokens, DraftTree& tree);

 private:
  // The step's answer, [rows, k] row-major, in tokens_ and logp_ (and confidence_ if set).
  void answer(const DraftStep& step, const std::vector<FedNode>& fed);
  std::vector<int32_t> tokens_;
  std::vector<float> logp_, confidence_;
};

// The dynamic tree `draft` builds from root token 1 (a fresh builder, a budget of max_tokens).
DraftTree dynamic_tree_of(TableDraft& draft, const DynamicTreeParams& params, int64_t max_tokens);

}  // namespace eagle2::test

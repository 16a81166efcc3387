// The Hydra drafter (Ankner et al. 2024): Medusa heads made sequentially dependent. Head k reads
// the target's feature of the root's parent and the embeddings of the root and of the k - 1
// drafted tokens above the node it expands (draft/medusa_heads.h), so a node's children depend on
// its path and the tree is grown level by level: EAGLE-2's DynamicTreeBuilder (K children per node,
// the K best frontier nodes by value expanded per level, the pool reranked to the best T - 1), one
// head per level over all of the level's nodes (one matmul per head, one lm_head pass). Like
// Medusa, no draft state is carried across cycles: every cycle starts from the target's feature.
//
// Deterministic drafts (top-k), so greedy and position-keyed sampling verification are lossless.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/thread_pool.h"
#include "draft/medusa_heads.h"
#include "draft/tree_builder.h"
#include "speculative/drafter.h"

namespace eagle2 {

// Where a Hydra drafter's predictions come from: the loaded heads (hydra_predictor()), a script in
// tests.
class HydraPredictor {
 public:
  virtual ~HydraPredictor() = default;
  virtual int num_heads() const = 0;
  virtual int64_t hidden_size() const = 0;
  virtual int64_t vocab_size() const = 0;
  // Head `head`'s (0-based) draft log-probs for n nodes at depth head (0: the root): tokens
  // [n, head + 1] holds each node's path, root first and the node itself last; feature ([hidden])
  // is the target's feature of the root's parent. out [n, vocab].
  virtual void predict(int head, const float* feature, std::span<const int32_t> tokens, int64_t n,
                       float* out, ThreadPool& pool) = 0;
};

// The heads as a predictor, with this drafter's own scratch (the heads are shared).
std::unique_ptr<HydraPredictor> hydra_predictor(std::shared_ptr<const MedusaHeads> heads);

class HydraDrafter : public Drafter {
 public:
  // K children per node: 4 by default. A tree of the default 8 tokens keeps 7 nodes, and a head's
  // 5th choice rarely ranks among them; each level then runs its head on at most 4 nodes.
  static constexpr int kDefaultTopK = 4;
  // total_tokens: T (root included); depth: the heads' count - 1 expansions after level 1.
  HydraDrafter(std::unique_ptr<HydraPredictor> predictor, ThreadPool& pool, int total_tokens,
               int top_k = kDefaultTopK);
  std::string name() const override { return "hydra"; }
  void begin(std::span<const int32_t> context, const float* features, int32_t root) override;
  void draft(int64_t max_tokens, DraftTree& tree) override;
  void accept(const DraftTree& tree, std::span<const int32_t> path, const float* features,
              int32_t bonus) override;

 private:
  void answer(const DraftStep& step);

  std::unique_ptr<HydraPredictor> predictor_;
  ThreadPool& pool_;
  DynamicTreeParams params_;
  int64_t d_, vocab_;
  int32_t root_ = 0;
  std::vector<float> feature_;  // the target's feature at the root's parent; empty before begin()
  DynamicTreeBuilder builder_;
  std::vector<int32_t> paths_, top_tokens_;
  std::vector<float> logp_, top_logp_;
};

}  // namespace eagle2

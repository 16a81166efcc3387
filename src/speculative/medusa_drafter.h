// The Medusa drafter: once per cycle, every head reads the target's feature of the last accepted
// token (the state whose lm_head gave the root) and predicts its own depth; the tree is the best
// T - 1 nodes of the heads' top-k product (draft/product_tree.h). No draft model state is carried
// across cycles: the feature is the target's, so a cycle costs K small head forwards and one
// lm_head pass over K rows, whatever was accepted before.
//
// Drafts are deterministic given the context (top-k of the heads), so greedy and position-keyed
// sampling verification are lossless; Medusa's "typical acceptance" (accept a drafted token when
// its target probability clears an entropy-dependent threshold) changes the output distribution
// and is left out, as in the paper's lossless comparisons.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/thread_pool.h"
#include "draft/medusa_heads.h"
#include "speculative/draft_policy.h"
#include "speculative/drafter.h"

namespace eagle2 {

// Where a Medusa drafter's predictions come from: the loaded heads in the engine
// (medusa_predictor()), a script in tests (full, partial and zero acceptance on purpose).
class MedusaPredictor {
 public:
  virtual ~MedusaPredictor() = default;
  virtual int num_heads() const = 0;
  virtual int64_t hidden_size() const = 0;
  virtual int64_t vocab_size() const = 0;
  // Every head's draft log-probs from the target's feature f ([hidden]): out [heads, vocab].
  virtual void predict(const float* feature, float* out, ThreadPool& pool) = 0;
};

// The heads as a predictor, with this drafter's own scratch (the heads are shared).
std::unique_ptr<MedusaPredictor> medusa_predictor(std::shared_ptr<const MedusaHeads> heads);

class MedusaDrafter : public Drafter {
 public:
  // total_tokens: T, the tree's tokens root included (at most max_tokens of each draft).
  MedusaDrafter(std::unique_ptr<MedusaPredictor> predictor, ThreadPool& pool, int total_tokens);
  std::string name() const override { return "medusa"; }
  void begin(std::span<const int32_t> context, const float* features, int32_t root) override;
  void draft(int64_t max_tokens, DraftTree& tree) override;
  void accept(const DraftTree& tree, std::span<const int32_t> path, const float* features,
              int32_t bonus) override;

 private:
  std::unique_ptr<MedusaPredictor> predictor_;
  ThreadPool& pool_;
  int total_tokens_;
  int64_t d_, vocab_;
  int32_t root_ = 0;
  std::vector<float> feature_;  // the target's feature at the root's parent; empty before begin()
  std::vector<float> logp_;     // [heads, vocab]
  std::vector<int32_t> top_tokens_;
  std::vector<float> top_logp_;
};

// The drafter of "medusa:DIR:T" or "hydra:DIR:T" (kind "medusa" or "hydra"): the heads are loaded
// once per engine (policies.assets(), checked against its target and quantized like it, as
// --draft-weights auto does for an EAGLE head). Error naming `label` when the engine has no
// target model.
std::unique_ptr<Drafter> make_heads_drafter(const std::string& kind, const std::string& folder,
                                            int total_tokens, const std::string& label,
                                            ThreadPool& pool, DraftPolicies& policies);

}  // namespace eagle2

// Speculative sampling with a separate small draft model (SpS; Leviathan et al. 2023, Chen et al.
// 2023; llama.cpp's main speculative mode): any LLaMA model sharing the target's tokenizer drafts
// with its own KV cache, one draft forward per level.
//
// - Chain (K = 1): D + 1 tokens, each the draft's argmax at temperature 0; at temperature > 0 each
//   is SAMPLED from the draft's processed distribution q (same temperature, top-k, top-p as the
//   target's), and q is handed to verification (DraftTree::draft_q) for the min(1, p/q) rule.
// - Tree (K > 1): the same DynamicTreeBuilder as EAGLE-2 (top-K children per node, D expansions,
//   the best 1 + K(D + 1) - 1 nodes by summed draft log-prob), deterministic at every temperature
//   and verified like any top-k tree (position-keyed sampling is lossless for those).
//
// The draft cache holds the committed context and, after a chain, the drafted tokens the draft ran
// (at their final positions); accept() truncates it to the accepted prefix, so an accepted draft
// token is never run twice. A tree level cannot see the previous level's pending rows
// (LlamaModel::forward attaches a batch to the committed context only), so each level re-runs
// the fed nodes of the levels above it: a tree costs sum over levels of the nodes fed so far.
#pragma once

#include <memory>
#include <vector>

#include "draft/tree_builder.h"
#include "model/kv_cache.h"
#include "model/llama_model.h"
#include "speculative/drafter.h"

namespace eagle2 {

class ThreadPool;

struct SpsDrafterOptions {
  int depth = 4;           // D: draft levels after the first
  int top_k = 1;           // K: 1 = a chain
  int64_t context = 2048;  // the draft cache's capacity (the target's context)
};

class SpsDrafter : public Drafter {
 public:
  // draft: shared by every sequence of an engine (forwards run one at a time, on the engine's
  // thread); its vocabulary must be the target's (make_drafter checks).
  SpsDrafter(std::shared_ptr<LlamaModel> draft, ThreadPool& pool, SpsDrafterOptions options);
  std::string name() const override { return opt_.top_k > 1 ? "sps-tree" : "sps"; }
  void set_sampling(const SamplingParams& params) override { sampling_ = params; }
  void begin(std::span<const int32_t> context, const float* features, int32_t root) override;
  void draft(int64_t max_tokens, DraftTree& tree) override;
  void accept(const DraftTree& tree, std::span<const int32_t> path, const float* features,
              int32_t bonus) override;

  // The draft's uniform for the token at output position n: a stream of its own (another key than
  // verification's position_word(seed, n)), since min(1, p/q) needs the draft's pick and the
  // acceptance test to be independent.
  static double draft_uniform(uint64_t seed, uint64_t n);
  int64_t cached() const { return kv_.size(); }  // tokens in the draft's cache (tests)

 private:
  void catch_up();  // runs the pending tokens (the root last); leaves the root's logits in out_
  void draft_chain(int64_t n_draft, DraftTree& tree);
  void draft_tree(int64_t max_tokens, DraftTree& tree);

  std::shared_ptr<LlamaModel> model_;
  ThreadPool& pool_;
  SpsDrafterOptions opt_;
  SamplingParams sampling_;
  KvCache kv_;
  std::vector<int32_t> pending_;  // committed tokens not yet in the draft cache, the root last
  int64_t emitted_ = 0;           // tokens emitted so far (root included): the root's position + 1
  int64_t chain_ran_ = 0;         // drafted chain tokens run into the cache this cycle
  int64_t stable_ = 0;            // cache size before this cycle's drafted tokens
  ForwardResult out_;
  DynamicTreeBuilder builder_;
  std::vector<int32_t> top_tokens_;
  std::vector<float> top_logp_;
};

}  // namespace eagle2

// Where acceptance goes at temperature > 0 (issue 44): the target's processed distribution p and
// a drafter's q compared depth by depth along the target's own sampled path, for a head or a draft
// model, without running the speculative loop.
//
// Along a path x_0..x_{L-1} (prompt + the target's sampled continuation), a cycle whose root is
// x_s drafts depth d (d = 1..D) from the context x_0..x_s and the path's own tokens
// x_{s+1}..x_{s+d-1} as the already drafted (accepted) ones: exactly what the drafter computes at
// depth d of a cycle whose first d - 1 levels were accepted. At each (s, d):
// - TV(p, q) = 1/2 sum |p - q| with p and q both processed with the serving settings
//   (temperature, top-k, top-p; one-hot argmax at temperature 0). 1 - TV is the acceptance of a
//   token sampled from q and verified with min(1, p/q) (verify_sampling_from_draft): a head with
//   q = p is always accepted, whatever the target's entropy.
// - For deterministic drafts ranked by the draft's raw log-probs (EAGLE top-k, verified by the
//   coupled rule verify_sampling): the rank-1 token is accepted iff it is the target's sampled
//   x_{s+d} (empirical), with probability p(top-1 of q) (expected) and at most max p (the best
//   any deterministic draft can do: 1 - max p is lost to the target's entropy, max p - p(top-1)
//   to the head's ranking); likewise a level of k siblings with the mass of p on them.
// The empirical figures are exactly what the speculative loop sees at those roots with the same
// seed (position-keyed sampling: the target's sampled path is the coupled verifier's choice).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "core/thread_pool.h"
#include "draft/eagle_head.h"
#include "model/kv_cache.h"
#include "model/llama_model.h"
#include "sampling/logits_processor.h"

namespace eagle2 {

// The draft's logits along a fixed path (the caller's), for the probe.
class PathDraftSource {
 public:
  virtual ~PathDraftSource() = default;
  // The target features the source reads per position (as Drafter::feature_layers).
  virtual std::span<const int32_t> feature_layers() const { return {}; }
  // path: x_0..x_{L-1}; features: the target's features of x_0..x_{L-2} ([L - 1, width]), kept
  // by reference until the next begin(). first_root: the smallest root draft_logits() is asked.
  virtual void begin(std::span<const int32_t> path, const float* features, int64_t first_root) = 0;
  // The draft's logits over the target's vocabulary for x_{root+1}..x_{root+depth} (out: [depth,
  // vocab]; -inf for tokens it cannot propose), drafted from x_0..x_root with the path's tokens
  // as the drafted ones. root in [first_root, L - 1 - depth], never smaller than the last call's.
  virtual void draft_logits(int64_t root, int depth, float* out) = 0;
};

// An EAGLE-1/2 or EAGLE-3 head, run as EagleDrafter runs it: the pairs (f_j, x_{j+1}) of the
// context in its stable cache, then one row per depth fed with its own previous output.
class EagleHeadPathSource : public PathDraftSource {
 public:
  // context: the longest path (head cache slots); target: the head's (its vocabulary).
  EagleHeadPathSource(EagleHead& head, const LlamaModel& target, ThreadPool& pool, int64_t context);
  std::span<const int32_t> feature_layers() const override { return head_.feature_layers(); }
  void begin(std::span<const int32_t> path, const float* features, int64_t first_root) override;
  void draft_logits(int64_t root, int depth, float* out) override;

 private:
  EagleHead& head_;
  ThreadPool& pool_;
  int64_t vocab_;
  KvCache kv_;
  std::span<const int32_t> path_;
  const float* features_ = nullptr;
  int64_t committed_ = 0;  // pairs in the stable cache
  std::vector<float> last_out_, fed_out_, scratch_, logp_;
};

// A separate draft model (speculative sampling's `sps:`): its own causal context, so its logits at
// a position do not depend on the root.
class ModelPathSource : public PathDraftSource {
 public:
  // Error unless the draft's vocabulary is the target's.
  ModelPathSource(LlamaModel& draft, const LlamaModel& target, ThreadPool& pool);
  void begin(std::span<const int32_t> path, const float* features, int64_t first_root) override;
  void draft_logits(int64_t root, int depth, float* out) override;

 private:
  LlamaModel& draft_;
  ThreadPool& pool_;
  int64_t first_row_ = 0;
  std::vector<float> logits_;  // rows first_row_ .. L - 2
};

// One forward of the target over a whole path (in chunks; bit-identical to decoding it token by
// token): the logits of rows first_logit_row..L-2 ([L - 1 - first_logit_row, vocab]) and the
// features of rows 0..L-2 (final-norm states, or the inputs of `layers` concatenated).
struct PathForward {
  std::vector<float> logits, features;
};
PathForward forward_path(LlamaModel& target, std::span<const int32_t> path, int64_t first_logit_row,
                         std::span<const int32_t> layers, ThreadPool& pool);

// p processed as decoding processes it: one-hot at the argmax when params.greedy().
Distribution processed_distribution(const float* logits, int64_t n, const SamplingParams& params);

// What one (root, depth) contributes. target_token: the target's sampled x_{s+d}; draft_logits:
// the raw draft logits (their ranking is the deterministic draft's); sampled_accept: whether a
// token drawn from q was accepted by min(1, p/q) with the given two uniforms.
struct PairAcceptance {
  double tv = 0;
  double top1_expected = 0, top1_ceiling = 0;  // p(rank-1 of the draft), max p
  double topk_expected = 0, topk_ceiling = 0;  // p on the draft's top k, the k largest p
  double entropy = 0;                          // of p, nats
  bool top1_hit = false, topk_hit = false;
  bool sampled_accept = false;
};
PairAcceptance compare_pair(const Distribution& p, const Distribution& q, const float* draft_logits,
                            int64_t vocab, int32_t target_token, int draft_top_k, double u_draw,
                            double u_accept);

struct AcceptanceProbeOptions {
  SamplingParams sampling;
  int depth = 6;            // D: depths 1..D per root
  int64_t new_tokens = 64;  // the target's continuation per prompt
  int draft_top_k = 8;      // siblings of a deterministic level
  bool stop_at_eos = true;  // end the continuation at an EOS (its text ends there)
};

// Sums per depth (index d - 1); means are sum / pairs.
struct DepthTally {
  int64_t pairs = 0;
  double tv = 0, sampled = 0, top1 = 0, top1_expected = 0, top1_ceiling = 0, topk = 0,
         topk_expected = 0, topk_ceiling = 0, entropy = 0;
};

struct AcceptanceTally {
  std::vector<DepthTally> depths;
  int64_t prompts = 0, new_tokens = 0, roots = 0;
  // Over roots with a full D levels of path after them: accepted chain length (consecutive
  // accepted depths from 1) summed, for the rank-1 chain and for the sampled chain.
  int64_t full_roots = 0, top1_chain = 0, sampled_chain = 0;
};

// One prompt (non-empty): samples the continuation with the target (plain decoding: the same
// tokens as `generate` with that seed), then probes every root of it into tally. Returns the
// continuation; top1_runs, when given, gets per root s (index s - prompt length) the accepted
// length of the rank-1 chain of depth min(D, L - 1 - s).
std::vector<int32_t> probe_acceptance(LlamaModel& target, PathDraftSource& source,
                                      const std::vector<int32_t>& prompt,
                                      const AcceptanceProbeOptions& options, ThreadPool& pool,
                                      AcceptanceTally& tally,
                                      std::vector<int32_t>* top1_runs = nullptr);

}  // namespace eagle2

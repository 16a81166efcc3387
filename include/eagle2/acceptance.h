// Where speculation's acceptance goes: the target's processed distribution p and a drafter's q
// compared depth by depth along the target's own sampled continuation of each prompt (issue 44).
// Per depth d (a cycle's d-th drafted level, its first d - 1 levels accepted):
// - tv: the mean total variation TV(p, q); 1 - tv is the acceptance of a token drawn from q and
//   verified with min(1, p/q) (sps at T > 0), and `sampled` that rule's empirical rate.
// - top1 / topk: how often the draft's rank-1 token (one of its top k) is the target's sampled
//   token: what the coupled verifier of deterministic drafts (EAGLE, at any temperature) accepts
//   at that depth; top1_expected / topk_expected the same in expectation (p on those tokens);
//   top1_ceiling / topk_ceiling the best any deterministic draft could do (max p, the k largest
//   p): what the target's entropy leaves.
// - entropy: of p, nats.
//
// Contract. Borrows the models, head and threads for the call; the result is plain values.
// Errors: eagle2::Error for an empty prompt, a prompt plus new tokens beyond the context, options
// out of range, a draft model of another vocabulary. Threads: one call at a time per model.
#pragma once

#include <cstdint>
#include <vector>

#include "eagle2/head.h"
#include "eagle2/model.h"
#include "eagle2/runtime.h"

namespace eagle2::api {

struct AcceptanceOptions {
  float temperature = 1.0f;  // 0: greedy (p and q one-hot at their argmax)
  int32_t top_k = 0;         // the sampling filter (0: off)
  float top_p = 1.0f;
  uint64_t seed = 1;        // the target's sampled continuation (as `generate --seed`)
  int32_t depth = 6;        // depths 1..depth per root
  int64_t new_tokens = 64;  // continuation per prompt (ends early at an EOS)
  int32_t draft_top_k = 8;  // k of topk
};

struct DepthAcceptance {
  int64_t pairs = 0;  // roots measured at this depth
  double tv = 0, sampled = 0, top1 = 0, top1_expected = 0, top1_ceiling = 0, topk = 0,
         topk_expected = 0, topk_ceiling = 0, entropy = 0;  // means over pairs
};

struct AcceptanceReport {
  std::vector<DepthAcceptance> depths;  // index d - 1
  int64_t prompts = 0, new_tokens = 0, roots = 0;
  // Chains of `depth` drafted tokens at every root with that many path tokens after it: tokens
  // per target forward (1 + mean accepted length, bonus included) for the rank-1 chain (coupled
  // verification) and for a chain sampled from q (min(1, p/q), measured along the target's path).
  int64_t full_roots = 0;
  double tau_top1_chain = 0, tau_sampled_chain = 0;
};

// With an EAGLE-1/2 or EAGLE-3 head of `target`.
AcceptanceReport measure_acceptance(Model& target, Head& head,
                                    const std::vector<std::vector<int32_t>>& prompts,
                                    const AcceptanceOptions& options, Threads& threads);
// With a separate draft model of the same vocabulary (sps).
AcceptanceReport measure_acceptance(Model& target, Model& draft,
                                    const std::vector<std::vector<int32_t>>& prompts,
                                    const AcceptanceOptions& options, Threads& threads);

}  // namespace eagle2::api

// The one logits processor used by plain sampling, speculative verification and the tests, so that
// "lossless" means "the same distribution as plain sampling with the same settings".
// Order (Hugging Face): temperature, then top-k, then top-p, then renormalize.
#pragma once

#include <cstdint>
#include <vector>

#include "sampling/rng.h"

namespace eagle2 {

struct SamplingParams {
  float temperature = 0.0f;  // 0 = greedy
  int32_t top_k = 0;         // 0 = off; clamped to the vocabulary
  float top_p = 1.0f;        // 1 = off; in (0, 1]
  uint64_t seed = 0;

  bool greedy() const { return temperature <= 0.0f; }
  void validate() const;  // Error for a negative temperature, top_p outside (0, 1], top_k < 0
};

// A probability distribution over the vocabulary (dense; zeros for removed tokens), in double so
// that renormalization after removals stays exact enough for the statistical tests.
struct Distribution {
  std::vector<double> p;

  // Sets p[token] = 0 and renormalizes. If no mass would remain (underflow, or the last token
  // removed) the distribution is left as it was and false is returned.
  bool remove_and_renormalize(int32_t token);
};

// The one check of a row of logits before a token is picked from it, shared by greedy and
// sampling so that both fail alike: Error on an empty row, a NaN or +inf logit (the model's
// weights or activations are not finite) or a row with no finite logit (all -inf: nothing can be
// picked). -inf entries beside finite ones are masked tokens and fine.
void check_logits(const float* logits, int64_t n);

// argmax with ties broken towards the lowest index (as torch.argmax); check_logits first.
int32_t argmax(const float* logits, int64_t n);

// temperature -> top-k -> top-p -> normalized probabilities. Requires !params.greedy();
// check_logits first.
// Top-p keeps the smallest set of most likely tokens whose mass reaches top_p (at least one).
// Ties at the top-k cut are broken towards lower token ids, deterministically.
Distribution process_logits(const float* logits, int64_t n, const SamplingParams& params);

// The token a uniform u in [0, 1) picks from d: the inverse CDF over token order, i.e. the first
// token whose cumulative mass (relative to d's total) exceeds u. Deterministic, so the same u and
// the same d give the same token wherever it is called: plain sampling and verification both pick
// through it. Tokens without mass are never returned. Error for u outside [0, 1) or a d without
// mass.
int32_t sample_with(const Distribution& d, double u);

// sample_with one uniform number from rng.
int32_t sample(const Distribution& d, Rng& rng);

// The token at output position `position` (sampling/position_random.h): greedy argmax when
// params.greedy(), else process + sample_with(counter_uniform(params.seed, position)).
int32_t sample_token(const float* logits, int64_t n, const SamplingParams& params,
                     uint64_t position);

}  // namespace eagle2

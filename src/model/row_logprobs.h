// A row of the target's logits as log-probabilities: the log-softmax over the whole vocabulary in
// double precision (max-shifted log-sum-exp), at temperature 1 and before any top-k/top-p: the
// model's own distribution. One function for `eagle2 logprobs` (api/logprobs.cpp) and for the
// engine's per-token log-probs (a server's `logprobs`), so that both report the same numbers for
// the same logits.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace eagle2 {

struct RowLogprobs {
  double chosen = 0;  // of `token` (0 when none was given)
  // The `top` most likely tokens, most likely first (equal logits: the lower id first, as greedy
  // decoding picks).
  std::vector<std::pair<int32_t, double>> top;
};

// token: the id whose log-prob is wanted, or -1; top in [0, vocab].
RowLogprobs row_logprobs(const float* logits, int64_t vocab, int32_t top, int32_t token);

}  // namespace eagle2

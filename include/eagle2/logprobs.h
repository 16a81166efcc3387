// Next-token log-probabilities along a given token path: what the model assigns after each prefix
// of the path. For comparing a model's numbers with another implementation's (llama.cpp's
// n_probs, scripts/llama-logprob-parity.py) and for scoring text.
//
// Contract. Units: natural-log probabilities (nats), token ids in [0, vocab). Ownership: borrows
// the model and threads for the call; the result is plain values. Errors: eagle2::Error (listed
// at path_logprobs). Threads: one call at a time per model (eagle2/error.h).
#pragma once

#include <cstdint>
#include <vector>

#include "eagle2/model.h"
#include "eagle2/runtime.h"

namespace eagle2::api {

struct TokenLogprob {
  int32_t token = 0;
  double logprob = 0;  // natural log of the softmax probability over the whole vocabulary
};

// Row i of a path: the distribution after tokens[0..i].
struct PositionLogprobs {
  std::vector<TokenLogprob> top;  // the `top` most likely next tokens, most likely first (equal
                                  // logits: the lower id first, as greedy decoding picks)
  double next_logprob = 0;        // of tokens[i + 1]; 0 in the last row, which has no next token
};

// One forward over the whole path from an empty cache (the prompt's BOS, if wanted, is the
// caller's), each row's logits turned into log-probabilities in double precision (max-shifted
// log-sum-exp). The logits are bit-identical to those plain decoding computes token by token.
// Error for an empty path, a token outside the vocabulary, a path longer than the model's context,
// top outside [1, vocab size].
std::vector<PositionLogprobs> path_logprobs(Model& model, const std::vector<int32_t>& tokens,
                                            int32_t top, Threads& threads);

}  // namespace eagle2::api

// Scoring a text: the negative log-likelihood a model gives each token of a sequence, and the
// perplexity figure made of them. `eagle2 perplexity` cuts a file into chunks the way
// llama-perplexity does (docs/PARITY.md) and scores each chunk with token_nlls.
//
// Contract. Units: negative log-likelihoods in nats; perplexity = exp(mean NLL). Ownership:
// token_nlls borrows the model and threads for the call (its KV memory is its own, freed on
// return); results are plain values. Errors: eagle2::Error (listed at each function). Threads: one
// call at a time per model; estimate_perplexity is pure (eagle2/error.h).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "eagle2/model.h"
#include "eagle2/runtime.h"

namespace eagle2::api {

// -log p(tokens[i + 1] | tokens[0..i]) for every i in [first, tokens.size() - 1), in that order,
// from a fresh context (tokens[0] at position 0; a BOS, if any, is the caller's). The sequence
// runs through the model in causal forwards of at most `batch` rows (one forward when batch >=
// tokens.size()); logits are computed only for the scored rows. The forward is batch invariant,
// so `batch` changes the memory used, never a figure. Error for fewer than 2 tokens, first
// outside [0, tokens.size() - 1), batch < 1, a token outside the vocabulary, or more tokens than
// the model's context.
std::vector<double> token_nlls(Model& model, std::span<const int32_t> tokens, int64_t first,
                               int64_t batch, Threads& threads);

// Perplexity over scored tokens: exp(mean NLL), and its standard error by the delta method:
// ppl * sqrt(var / (count - 1)) with var = mean(NLL^2) - mean(NLL)^2 (the figure llama-perplexity
// prints after "+/-"). error is 0 for a single token or a zero variance.
struct PerplexityEstimate {
  double ppl = 0;
  double error = 0;
  int64_t count = 0;
  double mean_nll = 0;
};
// Error for an empty list.
PerplexityEstimate estimate_perplexity(std::span<const double> nlls);

}  // namespace eagle2::api

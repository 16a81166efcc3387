// Deliberately broken sampling verifiers, plugged in through SpeculativeHooks::verify_sampling:
// the evidence that the lossless tests have power is that each of these fails them.
#pragma once

#include <string>
#include <vector>

#include "speculative/speculative_decoder.h"

namespace eagle2::test {

struct NamedVerifier {
  std::string name;
  SamplingVerifier verify;
};

// Bugs of the sequential rejection rule (verify_sampling_rejection) that change the distribution
// of the output: the chi-square test must reject each.
//  - the bonus drawn from the untempered distribution (the reference code's old bug);
//  - the draft's q = exp(value step) used in min(1, p/q), although top-k drafts are deterministic;
//  - rejected tokens zeroed but the rest not renormalized.
std::vector<NamedVerifier> broken_rejection_verifiers();

// Bugs of the position-keyed rule (verify_sampling) in which uniform a level uses: every emitted
// token is still drawn from its p, so the distribution moves little or not at all, but the tokens
// are not those of plain sampling with the seed; the equality test must catch each.
//  - one uniform (the first position's) for every level of a cycle;
//  - the node's index in the tree instead of its depth (right on chains, wrong past a first child).
std::vector<NamedVerifier> broken_position_verifiers();

// A verifier that is right at temperature 0 and wrong above it: a child holding the target's
// argmax is accepted outright, other children only when they hold the position's sampled token.
// Drafts built from the target's argmax (lookahead decoding's n-grams) then emit the argmax far
// more often than p gives it: the chi-square test must reject it.
NamedVerifier argmax_accepting_verifier();

}  // namespace eagle2::test

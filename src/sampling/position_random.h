// The randomness of sampled decoding, keyed by (seed, output position) and nothing else.
//
// Output position n is the index of a generated token among the new tokens: 0 is the first token
// after the prompt (sampled from the prefill's logits), 1 the next, and so on. The token at
// position n is drawn from the one uniform counter_uniform(seed, n), whether plain decoding
// samples it or speculative verification does, at whatever tree node, in whatever cycle or batch.
// A stateful stream would instead hand out numbers in the order they are asked for, which depends
// on the tree (how many siblings were tried, how many levels were accepted per cycle); keyed by
// position, the same seed means the same thing everywhere, and speculative sampled output equals
// plain sampled output token for token (see speculative/verify.h).
//
// The 64-bit word of position n is the (n + 1)-th output of the SplitMix64 stream that starts at
// splitmix64_mix(seed): the seed is mixed first so that nearby seeds (0, 1, 2...) start far apart
// on the Weyl sequence, and consecutive positions are consecutive outputs of one SplitMix64
// stream (which passes BigCrush). Values are pinned by tests/unit/test_sampling.cpp: changing them
// changes every sampled output of every seed.
#pragma once

#include <cstdint>

#include "core/splitmix64.h"

namespace eagle2 {

// The random word of output position n under `seed`. A rule that needs more than one number at a
// position (the rejection verifier) seeds a stream with it, so the word is still used once.
constexpr uint64_t position_word(uint64_t seed, uint64_t n) {
  return splitmix64_at(splitmix64_mix(seed), n + 1);
}

// The uniform of output position n: [0, 1) from the word's top 53 bits (a multiple of 2^-53, exact
// in a double).
constexpr double counter_uniform(uint64_t seed, uint64_t n) {
  return static_cast<double>(position_word(seed, n) >> 11) * 0x1.0p-53;
}

}  // namespace eagle2

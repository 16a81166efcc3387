// The checks of one speculative cycle, shared by the one-sequence loop (speculative_decoder.cpp)
// and the many-sequence one (batch_decoder.cpp): a drafter's tree and a verdict are untrusted
// until checked, because they index the KV cache and the logits.
#pragma once

#include <cstdint>
#include <string>

#include "draft/draft_tree.h"
#include "speculative/verify.h"

namespace eagle2 {

// A drafter's tree is untrusted input to the target forward and the verifier: a malformed one is
// a bug of that drafter, reported by name instead of indexing out of bounds.
void check_drafted_tree(const DraftTree& tree, int64_t vocab, int32_t root, int64_t room,
                        const std::string& drafter);

// A verdict (possibly from a hook) must be a root-to-node path of the tree through verifiable
// nodes only (DraftTree::verifiable) with a bonus token in the vocabulary before it edits the KV
// cache and emits tokens.
void check_verdict(const Verdict& v, const DraftTree& tree, int64_t vocab);

}  // namespace eagle2

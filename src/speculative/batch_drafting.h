// EAGLE-2 dynamic trees of many sequences drafted in lockstep on one head. Drafting a tree is a
// chain of small head forwards (the catch-up on the last accepted tokens, then one per tree
// level), each of which reads the head's weights for a handful of rows: done per sequence, a step
// of B sequences pays B times the weight reads, and at a few sequences drafting costs more than
// the target's forward. In lockstep every level is ONE head forward over the fed nodes of all
// sequences (each row attached to its own sequence's head cache; EagleHead::forward over several
// caches is bit-identical per row to running alone) and ONE draft lm_head over all their rows, so
// drafting, like verification, reads each weight once per step. The trees are those each drafter
// would have drafted alone; only the time changes.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/thread_pool.h"
#include "speculative/eagle_drafter.h"

namespace eagle2 {

// Drafter::propose() of each drafter (all lockstep_capable on `head`) with its max_tokens;
// proposals[i] is drafters[i]'s. Each drafter's pacing learns an equal share of the time.
void propose_in_lockstep(std::span<EagleDrafter* const> drafters,
                         std::span<const int64_t> max_tokens, EagleHead& head, ThreadPool& pool,
                         std::vector<Drafter::Proposal>& proposals);

}  // namespace eagle2

// Many sequences decoded together (BatchDecoder) against each decoded alone: the runs shared by
// the fast test on random models and the slow one on real models.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "core/thread_pool.h"
#include "model/llama_model.h"
#include "speculative/batch_budget.h"
#include "speculative/generation.h"
#include "support/equality_runs.h"

namespace eagle2::test {

struct BatchRunOptions {
  std::vector<int> sequence_counts = {1, 2, 5, 16};
  int64_t ctx = 256;            // each sequence's context
  int64_t block_size = 16;      // of the shared KV pool
  int64_t max_new_tokens = 24;  // the longest; sequences get 1/3..all of it
  std::vector<SamplingParams> sampling = {SamplingParams{}};  // greedy by default
  // When set, auto-budget drafters' trees are sized together per step (batch_budget.h).
  std::shared_ptr<const BatchCostModel> batch_cost;
};

// For each count B: B sequences with different prompts (round-robin), drafters (the cases,
// round-robin from a rotating start) and lengths, half added before the first step and the rest
// joining after two steps (continuous batching), decoded to the end in one BatchDecoder over one
// KV pool; every sequence's tokens must equal plain decoding of it alone with the same options.
// At the end every KV block is back in the pool. Returns the number of sequences checked.
int64_t check_batch_equality(LlamaModel& target, const std::vector<DrafterCase>& cases,
                             const std::vector<std::vector<int32_t>>& prompts,
                             const BatchRunOptions& options, ThreadPool& pool);

}  // namespace eagle2::test

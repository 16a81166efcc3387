// The tokens of a whole greedy (or sampled) generation, plain or speculative, on a fresh KV cache:
// the comparison every losslessness test makes.
#pragma once

#include <cstdint>
#include <vector>

#include "core/thread_pool.h"
#include "model/llama_model.h"
#include "speculative/drafter.h"
#include "speculative/generation.h"
#include "speculative/speculative_decoder.h"

namespace eagle2::test {

std::vector<int32_t> plain_tokens(LlamaModel& model, const std::vector<int32_t>& prompt,
                                  const GenerationOptions& opt, int64_t ctx, ThreadPool& pool);

// stats, when given, receives the run's statistics.
std::vector<int32_t> speculative_tokens(LlamaModel& model, Drafter& drafter,
                                        const std::vector<int32_t>& prompt,
                                        const GenerationOptions& opt, int64_t ctx, ThreadPool& pool,
                                        const SpeculativeHooks& hooks = {},
                                        SpeculativeStats* stats = nullptr);

}  // namespace eagle2::test

// BatchDecoder's per-sequence state, private to its sources (batch_decoder.cpp, the step itself;
// batch_decoder_faults.cpp, how a step's failures are kept per sequence).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "core/stopwatch.h"
#include "speculative/batch_decoder.h"

namespace eagle2 {

struct BatchDecoder::Sequence {
  Sequence(std::vector<int32_t> p, const GenerationOptions& o, std::unique_ptr<Drafter> dr,
           KvCache cache)
      : prompt(std::move(p)), options(o), drafter(std::move(dr)), kv(std::move(cache)) {}
  std::vector<int32_t> prompt;
  GenerationOptions options;
  std::unique_ptr<Drafter> drafter;
  KvCache kv;
  SpeculativeStats stats;
  std::vector<int32_t> tokens;
  std::vector<uint8_t> drafted;       // per token of `tokens`
  std::vector<RowLogprobs> logprobs;  // per token of `tokens` when options.logprobs >= 0
  int32_t root = 0;
  int64_t prefilled = 0;                   // prompt tokens in the cache
  std::vector<float> prompt_features;      // their features, for the drafter's begin()
  std::vector<int32_t> feature_layers;     // the drafter's (empty: final-norm states)
  bool started = false, finished = false;  // started: decoding (the prompt is in)
  bool failed = false;                     // finished by a failure of its own (fail_alone)
  int64_t id = 0;
  DraftTree tree;
  SteadyClock::time_point decode_start;
};

}  // namespace eagle2

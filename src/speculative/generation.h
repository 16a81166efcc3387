// Plain (non-speculative) generation: prefill the prompt, then one target forward per token.
// The speculative decoder reuses prefill() and must match generate_plain() token for token at
// temperature 0.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "core/thread_pool.h"
#include "model/llama_model.h"
#include "sampling/logits_processor.h"

namespace eagle2 {

struct GenerationOptions {
  int64_t max_new_tokens = 128;
  SamplingParams sampling;
  bool stop_at_eos = true;
  // Prompts are run in chunks of this many tokens (results do not depend on it: batch invariance).
  int64_t prefill_chunk = 64;
  // The batch decoder only (a server's `logprobs`): -1 = off; N >= 0 = record each generated
  // token's log-prob and the N most likely tokens of the distribution it came from.
  int32_t logprobs = -1;
  // The batch decoder only, for tests of fault handling (api::GenerateOptions::TestFault; a
  // server sets it only from its test-only EAGLE2_TEST_FAULT, never from a request): from its
  // `test_fault_after_cycles`-th verified cycle on, this sequence's drafting (an EAGLE head's
  // expansion, in lockstep or alone, or the drafter's call) or verification (after its drafter's
  // accept) throws, as a faulty drafter would. Admission: add() throws std::bad_alloc (what
  // running out of memory throws: not an eagle2::Error).
  enum class TestFault { None, Drafting, Verification, Admission };
  TestFault test_fault = TestFault::None;
  int64_t test_fault_after_cycles = 0;
};

struct GenerationStats {
  int64_t prompt_tokens = 0;
  int64_t new_tokens = 0;
  int64_t target_forwards = 0;  // decode-phase forwards (not prefill)
  double prefill_seconds = 0;
  double decode_seconds = 0;
  bool stopped_at_eos = false;
  bool stopped_at_context = false;

  double prefill_tokens_per_second() const {
    return prefill_seconds > 0 ? static_cast<double>(prompt_tokens) / prefill_seconds : 0;
  }
  double decode_tokens_per_second() const {
    return decode_seconds > 0 ? static_cast<double>(new_tokens) / decode_seconds : 0;
  }
};

// Runs `tokens` causally after kv's committed context (in chunks) and commits them; `out` gets the
// last row's logits, every row's final-norm hidden state and, when capture_layers is not empty,
// every row's inputs of those layers (ForwardResult::captured [tokens, layers * hidden], see
// ForwardCapture), all taken by the same forwards. Error if the context is too small.
void prefill(LlamaModel& model, KvCache& kv, const std::vector<int32_t>& tokens, int64_t chunk,
             ForwardResult& out, ThreadPool& pool, std::span<const int32_t> capture_layers = {});

// Called with each new token; return false to stop.
using TokenCallback = std::function<bool(int32_t token)>;

// Generates from an empty cache: prompt (with BOS if the caller wants it), then up to
// max_new_tokens, stopping at an EOS id of the model (emitted EOS is not passed to on_token) or
// when the context is full.
GenerationStats generate_plain(LlamaModel& model, KvCache& kv, const std::vector<int32_t>& prompt,
                               const GenerationOptions& options, ThreadPool& pool,
                               const TokenCallback& on_token);

bool is_eos(const LlamaConfig& cfg, int32_t token);

}  // namespace eagle2

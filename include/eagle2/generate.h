// Generating one sequence: plain decoding (one target forward per token) or speculative decoding
// (cycles of draft -> one target forward over the tree -> verify). Both are lossless: at
// temperature 0 and, with the same seed, at any temperature, the speculative tokens are the plain
// ones. Tokens reach the caller through a callback as they are committed; the statistics come back
// at the end.
// Both calls borrow everything they take for their duration and run on the calling thread (with
// the workers of `threads`); the callbacks run on the calling thread too. Errors (eagle2::Error,
// eagle2/error.h): invalid sampling options, an empty prompt, a prompt that does not fit the
// cache, a cache that is not empty (speculative), an empty drafter; an exception thrown by a
// callback propagates, and the cache is then to be discarded.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "eagle2/drafter.h"
#include "eagle2/model.h"
#include "eagle2/runtime.h"

namespace eagle2::api {

// Hugging Face's order: temperature, then top-k, then top-p.
struct SamplingOptions {
  float temperature = 0.0f;  // 0 = greedy
  int32_t top_k = 0;         // 0 = off
  float top_p = 1.0f;        // 1 = off; in (0, 1]
  uint64_t seed = 0;         // the token at output position n is drawn with (seed, n)
  // Error for a negative temperature, top_p outside (0, 1] or top_k < 0.
  void validate() const;
};

struct GenerateOptions {
  int64_t max_new_tokens = 128;
  SamplingOptions sampling;
  bool stop_at_eos = true;  // an EOS of the model ends the sequence (and is not emitted)
  // api::Engine only: -1 = off; N >= 0 = record each generated token's log-prob under the target
  // (the log-softmax of its logits at temperature 1, as eagle2/logprobs.h) and the N most likely
  // tokens at that position (Engine::logprobs).
  int32_t logprobs = -1;
  // api::Engine only, for tests of fault handling (never from a client: `eagle2 serve` sets it
  // only from its test-only EAGLE2_TEST_FAULT, docs/SERVER.md): from its
  // `test_fault_after_cycles`-th verified cycle on, this sequence's drafting or verification
  // throws, as a faulty drafter would; the engine then fails it alone (Engine::failed).
  // Admission: Engine::add throws std::bad_alloc (an exception that is not an eagle2::Error).
  enum class TestFault { None, Drafting, Verification, Admission };
  TestFault test_fault = TestFault::None;
  int64_t test_fault_after_cycles = 0;
};

// What one sequence did. The speculative part stays 0 for plain decoding.
struct Stats {
  int64_t prompt_tokens = 0;
  int64_t new_tokens = 0;
  int64_t target_forwards = 0;  // decode-phase forwards (not prefill)
  double prefill_seconds = 0;
  double decode_seconds = 0;
  double prefill_tokens_per_second = 0;
  double decode_tokens_per_second = 0;
  bool stopped_at_eos = false;
  bool stopped_at_context = false;
  // Speculative decoding:
  int64_t cycles = 0;
  std::vector<int64_t> accept_histogram;  // [accepted draft tokens] -> cycles
  int64_t drafted_tokens = 0;             // tree nodes verified, roots excluded
  // Hybrid trees (dynamic...+suffix): tree nodes drafted and accepted per source (a node both
  // drafted counts for both); zero for other drafters.
  int64_t head_drafted = 0, head_accepted = 0, suffix_drafted = 0, suffix_accepted = 0;
  // Tree nodes drafted and accepted per depth: [source][depth - 1], source 0 every node, 1 head,
  // 2 suffix (hybrid trees only, as above); nodes deeper than kDepthBins count at kDepthBins.
  static constexpr int kDepthBins = 16;
  std::array<std::array<int64_t, kDepthBins>, 3> drafted_by_depth{}, accepted_by_depth{};
  double draft_seconds = 0;
  double verify_seconds = 0;  // target forward over the tree + acceptance
  double other_seconds = 0;   // decode_seconds - draft - verify
  double tau = 0;             // tokens committed per target forward, bonus included
};

// One speculative cycle as verification saw it (valid during the callback only).
struct Cycle {
  int64_t cycle = 0;
  int64_t committed = 0;  // tokens in the target's cache before the cycle: the root's position
  std::span<const int32_t> tokens;   // the draft tree, node 0 the root
  std::span<const int32_t> parents;  // -1 for the root
  std::span<const float> values;     // the drafter's value of each node
  std::span<const int32_t> path;     // accepted nodes, root first
  int64_t accepted = 0;              // draft tokens accepted (path.size() - 1)
  int32_t bonus = 0;                 // the target's token after the path: the next root
};

using TokenCallback = std::function<bool(int32_t token)>;  // return false to stop
using CycleCallback = std::function<void(const Cycle& cycle)>;

// One sequence's KV cache: `capacity` tokens, prompt included. Error for more than the model's
// max_position_embeddings (or its sliding window), or than this machine's memory.
class KvCache {
 public:
  KvCache(const Model& model, int64_t capacity);
  ~KvCache();
  KvCache(KvCache&&) noexcept;
  KvCache& operator=(KvCache&&) noexcept;

  struct Impl;  // the library's side of the handle (src/api)
  Impl& impl() const { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

// Both start from an empty cache: the prompt (BOS included if the caller wants one), then up to
// max_new_tokens, stopping at an EOS or when the cache is full.
Stats generate_plain(Model& model, KvCache& kv, const std::vector<int32_t>& prompt,
                     const GenerateOptions& options, Threads& threads,
                     const TokenCallback& on_token);
// drafter: not empty (Drafter::make of a spec other than "plain").
Stats generate_speculative(Model& model, KvCache& kv, Drafter& drafter,
                           const std::vector<int32_t>& prompt, const GenerateOptions& options,
                           Threads& threads, const TokenCallback& on_token,
                           const CycleCallback& on_cycle = nullptr);

}  // namespace eagle2::api

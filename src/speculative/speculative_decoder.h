// The speculative decoding loop: prefill, then cycles of draft -> one target forward over the
// whole tree -> verify -> keep the accepted path in the KV cache -> emit accepted tokens + bonus.
// At temperature 0 its output equals generate_plain() token for token (batch-invariant kernels +
// exact greedy verification); at temperature > 0 too, with the same seed (verify_sampling draws
// the token at output position n from the same counter_uniform(seed, n) as generate_plain).
#pragma once

#include <array>
#include <functional>
#include <vector>

#include "speculative/drafter.h"
#include "speculative/generation.h"
#include "speculative/verify.h"

namespace eagle2 {

struct SpeculativeStats : GenerationStats {
  int64_t cycles = 0;
  std::vector<int64_t> accept_histogram;  // [accepted draft tokens] -> cycles
  int64_t drafted_tokens = 0;             // tree nodes verified, roots excluded
  double draft_seconds = 0;
  double verify_seconds = 0;  // target forward over the tree + acceptance
  double other_seconds() const { return decode_seconds - draft_seconds - verify_seconds; }
  // Tokens committed per target forward in the decode phase, bonus included (plain = 1).
  double tau() const;
  // Tree nodes drafted and accepted per source, from trees that record it (DraftTree::sources:
  // hybrid trees); a node both sources drafted counts for both. Zero for other drafters.
  int64_t head_drafted = 0, head_accepted = 0, suffix_drafted = 0, suffix_accepted = 0;
  // Tree nodes drafted and accepted per depth (bin 0: the root's children; nodes deeper than
  // kDepthBins count in the last bin), per source: [0] every node, [1] head, [2] suffix (the
  // last two from trees that record sources, as above).
  static constexpr int kDepthBins = 16;
  std::array<std::array<int64_t, kDepthBins>, 3> drafted_by_depth{}, accepted_by_depth{};
  // Adds one verified cycle's tree (roots excluded) and accepted path to the counts above.
  void count_sources(const DraftTree& tree, const std::vector<int32_t>& path);
};

struct CycleTrace {
  int64_t cycle;
  int64_t committed;  // target KV length before the cycle = the root's position
  const DraftTree& tree;
  const Verdict& verdict;
};
using TraceCallback = std::function<void(const CycleTrace&)>;
// (tree, logits, vocab, params, first_position): first_position is the output position of the
// token after the root (the number of tokens emitted before the cycle).
using SamplingVerifier = std::function<Verdict(const DraftTree&, const float* logits, int64_t vocab,
                                               const SamplingParams&, uint64_t first_position)>;

struct SpeculativeHooks {
  TraceCallback trace;  // called after each cycle's verification
  // Default eagle2::verify_sampling; verify_sampling_rejection fits too (tests plug in broken
  // ones).
  SamplingVerifier verify_sampling;
};

// kv must be empty (Error otherwise): the drafter learns only `prompt` as context.
SpeculativeStats speculative_generate(LlamaModel& model, KvCache& kv, Drafter& drafter,
                                      const std::vector<int32_t>& prompt,
                                      const GenerationOptions& options, ThreadPool& pool,
                                      const TokenCallback& on_token,
                                      const SpeculativeHooks& hooks = {});

}  // namespace eagle2

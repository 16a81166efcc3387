// The equality tests' runs: every drafter kind (EAGLE dynamic at three budgets, static, chain,
// lookup, the root alone, a scripted oracle, EAGLE-2 without the value and without reranking,
// lookahead decoding, suffix decoding, a hybrid dynamic+suffix tree), each run speculatively on
// every prompt and compared token for token with plain decoding. Greedy equality and seeded sampled
// equality share them, so a drafter added here is checked by both.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/thread_pool.h"
#include "draft/eagle_head.h"
#include "model/llama_model.h"
#include "speculative/drafter.h"
#include "speculative/speculative_decoder.h"

namespace eagle2::test {

struct DrafterCase {
  std::string name;
  // truth: the prompt followed by the plain output (the scripted oracle proposes it).
  std::function<std::unique_ptr<Drafter>(const std::vector<int32_t>& truth)> make;
  int64_t full_depth;  // the longest acceptance this drafter can produce
};

// head and pool must outlive the drafters; ctx is the EAGLE drafters' context. With an EAGLE-3
// head (head3, which must outlive them too), its dynamic trees and chain are added last
// ("eagle3-dynamic-16-3-4", "eagle3-dynamic-60-5-10", "eagle3-chain-3"), after the indices
// tests pick.
std::vector<DrafterCase> drafter_cases(EagleHead& head, ThreadPool& pool, int64_t vocab,
                                       int64_t ctx, EagleHead* head3 = nullptr);

// Accepted-length histograms per drafter, summed over runs: the evidence that the runs covered
// total rejection, partial and full acceptance.
struct Coverage {
  std::map<std::string, std::vector<int64_t>> hist;
  void add(const std::string& name, const SpeculativeStats& st);
  int64_t at(const std::string& name, size_t accepted) const;
};

// For every prompt: plain tokens under opt (greedy, or sampled with opt.sampling.seed), then every
// case speculatively with the same opt and hooks; a gtest failure names the drafter and the prompt
// where they differ.
void check_equality(LlamaModel& target, const std::vector<DrafterCase>& cases,
                    const std::vector<std::vector<int32_t>>& prompts, const GenerationOptions& opt,
                    int64_t ctx, ThreadPool& pool, Coverage& cov,
                    const SpeculativeHooks& hooks = {});

// Openings (the first 1..40 words) of the last n stories of a blank-line-separated corpus: text
// held out from the stories260K head's training, which used the start.
std::vector<std::string> held_out_openings(const std::string& corpus, size_t n);

// count prompts of 1..30 random tokens.
std::vector<std::vector<int32_t>> random_prompts(uint32_t seed, int count, int64_t vocab);

}  // namespace eagle2::test

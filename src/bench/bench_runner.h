// The end-to-end benchmark: drafters run on the same prompts, interleaved, with repetitions, at
// temperature 0 and > 0; per drafter: tokens/s, speedup over plain decoding measured in the same
// run, tau, draft/verify time shares, and the distinct-4-gram ratio of the outputs (so degenerate
// repetitive text cannot pass for a good speedup). Greedy outputs must equal plain decoding's.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "bench/calibration.h"
#include "bench/prompt_set.h"
#include "draft/eagle_head.h"
#include "draft/tree_builder.h"
#include "model/llama_model.h"
#include "speculative/drafter.h"
#include "speculative/drafter_spec.h"
#include "speculative/tree_budget.h"
#include "tokenizer/tokenizer.h"

namespace eagle2 {

struct BenchOptions {
  int repetitions = 1;
  int64_t max_new_tokens = 128;
  std::vector<float> temperatures = {0.0f, 1.0f};
  uint64_t seed = 1;
  int64_t ctx = 2048;
  // Unmeasured generations each drafter runs, after its reset, before every (temperature,
  // repetition) pass: the first this many prompts, so that learning drafters (calibration, auto
  // budget) are measured warm and in the same state whatever ran before them.
  int warmup_prompts = 2;
};

struct RunRecord {
  std::string prompt_set, prompt_id, drafter;
  float temperature = 0;
  int rep = 0;
  int64_t new_tokens = 0, cycles = 0;
  int64_t drafted_tokens = 0;  // tree nodes verified over all cycles, roots excluded
  double decode_seconds = 0, draft_seconds = 0, verify_seconds = 0;
  std::vector<int64_t> accept_histogram;
  std::vector<int32_t> tokens;
  Calibration calibration;  // of the drafted nodes (empty for plain decoding)
};

struct Summary {
  std::string prompt_set, drafter;
  float temperature = 0;
  int64_t runs = 0, new_tokens = 0, cycles = 0;
  double decode_seconds = 0, draft_seconds = 0, verify_seconds = 0;
  double tokens_per_second = 0, speedup = 0, tau = 0, draft_share = 0, verify_share = 0;
  double distinct4 = 0;
  int64_t drafted_tokens = 0;
  // Tokens verified per cycle, root included (1 + drafted / cycles; 1 for plain decoding): what
  // an auto budget chose on average, the fixed size for chain and static trees.
  double tree_tokens = 0;
  Calibration calibration;
};

struct PromptSet {
  std::string name;
  std::vector<Prompt> prompts;
};

using ProgressCallback = std::function<void(int64_t done, int64_t total)>;

// Runs everything; the first spec should be "plain" (speedups are relative to it; without it the
// speedup column is 0).
std::vector<RunRecord> run_bench(LlamaModel& model, EagleHead* head, const Tokenizer& tok,
                                 const std::vector<PromptSet>& sets,
                                 const std::vector<DrafterSpec>& specs, const BenchOptions& options,
                                 ThreadPool& pool, const ProgressCallback& progress = nullptr);

std::vector<Summary> summarize(const std::vector<RunRecord>& records);

// Greedy outputs of every drafter against plain decoding on the same prompt; returns one line per
// mismatch (empty = all equal).
std::vector<std::string> greedy_mismatches(const std::vector<RunRecord>& records);

// Distinct 4-grams / all 4-grams over the given token sequences (1 when there are none).
double distinct_ngram_ratio(const std::vector<std::vector<int32_t>>& outputs, size_t n = 4);

std::string summaries_to_csv(const std::vector<Summary>& s);
std::string bench_to_json(const std::vector<Summary>& s, const std::vector<RunRecord>& records);

}  // namespace eagle2

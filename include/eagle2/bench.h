// The end-to-end benchmark: drafters run side by side on the same prompts (interleaved, with
// repetitions, at several temperatures); per prompt set, drafter and temperature: tokens/s,
// speedup over plain decoding measured in the same run, tau, draft/verify time shares and the
// distinct-4-gram ratio of the outputs. Greedy outputs must equal plain decoding's.
//
// Contract. Units: tokens/s and seconds of wall time, tau in tokens per target forward, shares in
// [0, 1]. Ownership: run_bench borrows the model, head, tokenizer and threads for the call; the
// BenchRun it returns owns every run's tokens and statistics and refers to none of them.
// Errors: eagle2::Error for a prompt longer than options.ctx, a negative warmup_prompts, a spec
// that needs a head or folder that is missing; a greedy output that differs from plain decoding's
// is not thrown but listed by greedy_mismatches(). The progress callback runs on the calling
// thread; its exception propagates. Threads: one call at a time per model (eagle2/error.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "eagle2/drafter.h"
#include "eagle2/head.h"
#include "eagle2/model.h"
#include "eagle2/prompts.h"
#include "eagle2/runtime.h"
#include "eagle2/tokenizer.h"

namespace eagle2::api {

struct BenchOptions {
  int repetitions = 1;
  int64_t max_new_tokens = 128;
  std::vector<float> temperatures = {0.0f, 1.0f};
  uint64_t seed = 1;
  int64_t ctx = 2048;
  // Unmeasured generations (the first prompts) each drafter runs, after a reset, before every
  // (temperature, repetition) pass: learning drafters are measured warm and in the same state.
  int warmup_prompts = 2;
};

// One row of the table.
struct BenchSummary {
  std::string prompt_set, drafter;
  float temperature = 0;
  int64_t runs = 0, new_tokens = 0, cycles = 0;
  double decode_seconds = 0, draft_seconds = 0, verify_seconds = 0;
  double tokens_per_second = 0, speedup = 0, tau = 0, draft_share = 0, verify_share = 0;
  double distinct4 = 0;
  int64_t drafted_tokens = 0;  // tree nodes verified, roots excluded
  double tree_tokens = 0;      // tokens verified per cycle, root included (plain decoding: 1)
};

// The runs of one benchmark, in run order: for each temperature, repetition, prompt set and
// prompt, one run per drafter in the order given.
class BenchRun {
 public:
  ~BenchRun();
  BenchRun(BenchRun&&) noexcept;
  BenchRun& operator=(BenchRun&&) noexcept;

  size_t size() const;                                   // runs
  const std::vector<int32_t>& tokens(size_t run) const;  // what run `run` generated
  const std::vector<BenchSummary>& summary() const;      // every run, summarized
  std::vector<BenchSummary> summary_of(const std::vector<size_t>& runs) const;
  // One line per greedy output that differs from plain decoding's on the same prompt.
  std::vector<std::string> greedy_mismatches() const;
  std::string json() const;  // the summary and every run
  std::string csv() const;   // the summary
  // File name -> SVG text: speedup and tau per drafter, against the tree size, calibration.
  std::vector<std::pair<std::string, std::string>> charts() const;

  struct Impl;  // the library's side of the handle (src/api)
  explicit BenchRun(std::unique_ptr<Impl> impl);

 private:
  std::unique_ptr<Impl> impl_;
};

using BenchProgress = std::function<void(int64_t done, int64_t total)>;

// Runs every spec on every prompt; the first spec should be "plain" (speedups are relative to it).
// `head`: for the EAGLE drafters (may be null when none runs).
BenchRun run_bench(Model& model, Head* head, const Tokenizer& tokenizer,
                   const std::vector<PromptSet>& sets, const std::vector<DrafterSpec>& specs,
                   const BenchOptions& options, Threads& threads,
                   const BenchProgress& progress = nullptr);

}  // namespace eagle2::api

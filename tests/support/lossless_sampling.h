// The statistical machinery of the lossless-sampling tests (tests/statistical): the exact joint
// distribution of a small-vocabulary model's first tokens by enumeration, Pearson's chi-square
// against it, and many seeded speculative generations counted by their first tokens.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <vector>

#include "core/thread_pool.h"
#include "model/llama_model.h"
#include "sampling/logits_processor.h"
#include "speculative/drafter.h"
#include "speculative/speculative_decoder.h"

namespace eagle2::test {

constexpr int kTokens = 3;  // generated tokens whose joint distribution is tested
inline const std::vector<int32_t> kPrompt = {1, 3};

// A 5-token vocabulary model: every joint distribution of kTokens tokens can be enumerated.
std::unique_ptr<LlamaModel> small_vocab_model();

// Exact P(t1..tk) by enumeration with plain forwards through the same logits processor.
std::map<std::vector<int32_t>, double> exact_distribution(LlamaModel& m, const SamplingParams& sp,
                                                          ThreadPool& pool);

// Pearson chi-square of observed counts against the exact distribution (cells with expected
// count < 5 merged into one), and its threshold at significance 1e-3 (Wilson-Hilferty).
struct ChiSquare {
  double stat = 0, threshold = 0;
  int df = 0;
};
ChiSquare chi_square(const std::map<std::vector<int32_t>, double>& exact,
                     const std::map<std::vector<int32_t>, int64_t>& observed, int64_t n);

struct Outcome {
  std::map<std::vector<int32_t>, int64_t> counts;
  int64_t all_rejected = 0;   // cycles whose root had children and none was accepted
  int64_t some_accepted = 0;  // cycles that accepted at least one drafted token
  int64_t first_child_accepted = 0;
  double first_child_expected = 0, first_child_variance = 0;
};

// n_samples generations of kTokens tokens after kPrompt, sample i with seed 1000003 i + 17 and a
// fresh make_drafter(i), verified by `verifier` (null: the loop's default).
Outcome run_speculative(LlamaModel& m, const SamplingParams& base, int64_t n_samples,
                        const std::function<std::unique_ptr<Drafter>(uint32_t)>& make_drafter,
                        const SamplingVerifier& verifier, ThreadPool& pool);

}  // namespace eagle2::test

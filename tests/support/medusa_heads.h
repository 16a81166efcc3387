// Medusa and Hydra heads for tests: random head folders in the format MedusaHeads loads, a scripted
// Medusa predictor that knows the true continuation (full, partial and zero acceptance on purpose,
// through the real MedusaDrafter), the equality-test cases of the Medusa drafter, and Medusa's
// typical acceptance as a verifier (lossy: the lossless tests must reject it).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/thread_pool.h"
#include "model/llama_model.h"
#include "speculative/hydra_drafter.h"
#include "speculative/medusa_drafter.h"
#include "speculative/speculative_decoder.h"
#include "support/equality_runs.h"

namespace eagle2::test {

struct RandomHeadsOptions {
  bool hydra = false;
  int heads = 3;
  int layers = 1;
  uint64_t seed = 5;
  float scale = 0.3f;         // weights ~ U(-scale, scale) / sqrt(input width) * 3
  bool own_lm_heads = false;  // Medusa-1's layout: every head's own [V, d] lm_head
  bool bare_names = false;    // Medusa-1's medusa_lm_head files: "{k}.{l}..." without the prefix
  DType dtype = DType::F32;   // F32 or BF16
};

// Writes config.json + model.safetensors for `target` to a temp folder named after `name`.
std::string write_random_heads(const std::string& name, const LlamaModel& target,
                               const RandomHeadsOptions& options);

// A predictor that knows `truth` (prompt + plain output): it finds the position t of the feature
// it is given among the target's features along truth (bit-exact: batch invariance) and puts the
// true token x_{t+1+k} first in head k's list (probability 1/2), second or third (1/8 each), or
// leaves it out (1/4, so total rejection happens too); other tokens fill the rest in random order.
// What an oracle saw: the position of every feature it was given (-1: not on the true path, a
// miss: the drafter read a wrong feature; its heads then answer at random).
struct OracleLog {
  std::vector<int64_t> positions;
  int64_t misses = 0;
};
class OracleMedusaPredictor : public MedusaPredictor {
 public:
  OracleMedusaPredictor(LlamaModel& target, const std::vector<int32_t>& truth, int heads,
                        uint32_t seed, ThreadPool& pool, std::shared_ptr<OracleLog> log);
  int num_heads() const override { return heads_; }
  int64_t hidden_size() const override { return d_; }
  int64_t vocab_size() const override { return vocab_; }
  void predict(const float* feature, float* out, ThreadPool& pool) override;
  // The position of a feature on the true path (-1, counted as a miss, when it is not).
  int64_t locate(const float* feature);
  // A row of log-probs: `right` (if >= 0) first with probability 1/2, second or third (1/8 each),
  // or left out; the other tokens after it in random order; steeply descending values.
  void ranked_row(int32_t right, float* row);
  std::shared_ptr<OracleLog> log() const { return log_; }

 private:
  std::vector<int32_t> truth_;
  std::map<std::string, int64_t> position_of_;  // feature bytes -> position
  int heads_;
  int64_t d_, vocab_;
  std::shared_ptr<OracleLog> log_;
  std::mt19937 rng_;
};

// The same oracle for Hydra heads, which see the path: head k's list holds the true token only for
// nodes whose path (root included) is the true continuation. Logs the position once per cycle
// (head 1's call).
class OracleHydraPredictor : public HydraPredictor {
 public:
  OracleHydraPredictor(LlamaModel& target, const std::vector<int32_t>& truth, int heads,
                       uint32_t seed, ThreadPool& pool, std::shared_ptr<OracleLog> log);
  int num_heads() const override { return heads_; }
  int64_t hidden_size() const override { return medusa_.hidden_size(); }
  int64_t vocab_size() const override { return medusa_.vocab_size(); }
  void predict(int head, const float* feature, std::span<const int32_t> tokens, int64_t n,
               float* out, ThreadPool& pool) override;

 private:
  OracleMedusaPredictor medusa_;  // finds positions and orders lists
  std::vector<int32_t> truth_;
  int heads_;
};

// The Hydra drafter on random Hydra heads (T = 8 and 3) and on its oracle ("hydra-oracle", T = 8).
std::vector<DrafterCase> hydra_cases(LlamaModel& target, const std::string& heads_dir,
                                     ThreadPool& pool, std::shared_ptr<OracleLog> log);

// The Medusa drafter on random heads (T = 8 and 3) and on the oracle (T = 8, named
// "medusa-oracle", logging into *log): what the greedy and sampled equality runs check. The target
// and pool must outlive the cases.
std::vector<DrafterCase> medusa_cases(LlamaModel& target, const std::string& heads_dir,
                                      ThreadPool& pool, std::shared_ptr<OracleLog> log);

// Medusa's typical acceptance (Cai et al. 2024, section 2.3.1): at each node accept the first child
// (rank order) whose token x has p(x) > min(epsilon, delta * exp(-H(p))), H the entropy of the
// node's processed distribution p; the bonus is sampled from p at the last accepted node (with the
// position's uniform). It favours drafted tokens, so the output distribution is not the target's.
SamplingVerifier typical_acceptance_verifier(double epsilon = 0.09, double delta = 0.3);

}  // namespace eagle2::test

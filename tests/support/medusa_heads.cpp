#include "support/medusa_heads.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <numeric>

#include "core/dtype.h"
#include "io/safetensors.h"
#include "sampling/logits_processor.h"
#include "sampling/position_random.h"
#include "speculative/verify.h"
#include "support/shared_data.h"
#include "train/head_data.h"

namespace eagle2::test {

std::string write_random_heads(const std::string& name, const LlamaModel& target,
                               const RandomHeadsOptions& o) {
  const std::string dir = temp_dir(std::string(o.hydra ? "hydra-" : "medusa-") + name);
  const int64_t d = target.config().hidden_size, V = target.config().vocab_size;
  const std::string kind = o.hydra ? "hydra" : "medusa";
  std::ofstream(dir + "/config.json")
      << "{\"" << kind << "_num_heads\": " << o.heads << ", \"" << kind
      << "_num_layers\": " << o.layers << ", \"hidden_size\": " << d << ", \"vocab_size\": " << V
      << "}\n";
  std::mt19937_64 rng(o.seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<std::vector<float>> data;
  std::vector<std::vector<uint16_t>> narrow;
  std::vector<TensorToWrite> tensors;
  const std::string prefix = o.bare_names ? "" : kind + "_head.";
  auto add = [&](const std::string& tname, std::vector<int64_t> shape, float bound) {
    std::vector<float> v(static_cast<size_t>(shape[0] * (shape.size() > 1 ? shape[1] : 1)));
    for (float& x : v) x = bound * u(rng);
    data.push_back(std::move(v));
    tensors.push_back({tname, o.dtype, shape, nullptr});
  };
  for (int k = 0; k < o.heads; ++k) {
    for (int l = 0; l < o.layers; ++l) {
      const int64_t in = l == 0 && o.hydra ? (k + 2) * d : d;
      const std::string p = prefix + std::to_string(k) + "." + std::to_string(l) + ".linear.";
      add(p + "weight", {d, in}, 3.0f * o.scale / std::sqrt(static_cast<float>(in)));
      add(p + "bias", {d}, o.scale);
    }
    if (o.own_lm_heads)
      add(prefix + std::to_string(k) + "." + std::to_string(o.layers) + ".weight", {V, d},
          3.0f / std::sqrt(static_cast<float>(d)));
  }
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (o.dtype == DType::BF16) {
      std::vector<uint16_t>& n = narrow.emplace_back(data[i].size());
      for (size_t j = 0; j < n.size(); ++j) n[j] = f32_to_bf16(data[i][j]);
      tensors[i].data = n.data();
    } else {
      tensors[i].data = data[i].data();
    }
  }
  write_safetensors(dir + "/model.safetensors", tensors);
  return dir;
}

OracleMedusaPredictor::OracleMedusaPredictor(LlamaModel& target, const std::vector<int32_t>& truth,
                                             int heads, uint32_t seed, ThreadPool& pool,
                                             std::shared_ptr<OracleLog> log)
    : truth_(truth),
      heads_(heads),
      d_(target.config().hidden_size),
      vocab_(target.config().vocab_size),
      log_(std::move(log)),
      rng_(seed) {
  const train::HeadSequence s = train::record_features(target, truth, pool);
  const auto bytes = static_cast<size_t>(d_) * sizeof(float);
  for (int64_t t = 0; t < s.length(); ++t)
    position_of_.emplace(
        std::string(reinterpret_cast<const char*>(&s.features[static_cast<size_t>(t * d_)]), bytes),
        t);
}

int64_t OracleMedusaPredictor::locate(const float* feature) {
  const auto it = position_of_.find(
      std::string(reinterpret_cast<const char*>(feature), static_cast<size_t>(d_) * sizeof(float)));
  if (it != position_of_.end()) return it->second;
  ++log_->misses;
  return -1;
}

void OracleMedusaPredictor::ranked_row(int32_t right, float* row) {
  std::vector<int32_t> order(static_cast<size_t>(vocab_));
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), rng_);
  const uint32_t roll = rng_() % 8;
  if (right >= 0 && roll < 6) {
    order.erase(std::find(order.begin(), order.end(), right));
    order.insert(order.begin() + (roll < 4 ? 0 : roll - 3), right);
  }
  // Steeply descending log-probs in that order (unnormalized: the drafter only ranks and sums
  // them): the best 7 nodes are then the first choices' chain with a few siblings, so a tree of
  // 8 tokens reaches every head's depth.
  for (size_t r = 0; r < order.size(); ++r) row[order[r]] = -0.5f - 2.0f * static_cast<float>(r);
}

void OracleMedusaPredictor::predict(const float* feature, float* out, ThreadPool&) {
  const int64_t t = locate(feature);
  log_->positions.push_back(t);
  for (int k = 0; k < heads_; ++k) {
    const int64_t at = t + 1 + (k + 1);  // head k (0-based) predicts x_{t+1+(k+1)}
    const bool known = t >= 0 && at < static_cast<int64_t>(truth_.size());
    ranked_row(known ? truth_[static_cast<size_t>(at)] : -1, out + k * vocab_);
  }
}

OracleHydraPredictor::OracleHydraPredictor(LlamaModel& target, const std::vector<int32_t>& truth,
                                           int heads, uint32_t seed, ThreadPool& pool,
                                           std::shared_ptr<OracleLog> log)
    : medusa_(target, truth, heads, seed, pool, std::move(log)), truth_(truth), heads_(heads) {}

void OracleHydraPredictor::predict(int head, const float* feature, std::span<const int32_t> tokens,
                                   int64_t n, float* out, ThreadPool&) {
  const int64_t t = medusa_.locate(feature);
  if (head == 0) medusa_.log()->positions.push_back(t);
  const auto len = static_cast<size_t>(head + 1);
  const int64_t V = medusa_.vocab_size();
  for (int64_t i = 0; i < n; ++i) {
    // The node's path (root first) must be the true continuation x_{t+1} .. x_{t+1+head}.
    const int64_t at = t + 2 + head;
    bool known = t >= 0 && at < static_cast<int64_t>(truth_.size());
    for (size_t j = 0; known && j < len; ++j)
      known = tokens[static_cast<size_t>(i) * len + j] == truth_[static_cast<size_t>(t + 1) + j];
    medusa_.ranked_row(known ? truth_[static_cast<size_t>(at)] : -1, out + i * V);
  }
}

std::vector<DrafterCase> hydra_cases(LlamaModel& target, const std::string& heads_dir,
                                     ThreadPool& pool, std::shared_ptr<OracleLog> log) {
  auto heads = std::shared_ptr<const MedusaHeads>(
      MedusaHeads::load(heads_dir, target, MedusaHeads::Kind::Hydra));
  std::vector<DrafterCase> cases;
  for (int T : {8, 3}) {
    cases.push_back({"hydra-" + std::to_string(T),
                     [heads, &pool, T](const std::vector<int32_t>&) -> std::unique_ptr<Drafter> {
                       return std::make_unique<HydraDrafter>(hydra_predictor(heads), pool, T);
                     },
                     std::min(T - 1, heads->num_heads())});
  }
  const int depth = heads->num_heads();
  cases.push_back(
      {"hydra-oracle",
       [&target, &pool, depth, log](const std::vector<int32_t>& truth) -> std::unique_ptr<Drafter> {
         return std::make_unique<HydraDrafter>(
             std::make_unique<OracleHydraPredictor>(target, truth, depth,
                                                    static_cast<uint32_t>(truth.size()), pool, log),
             pool, 8);
       },
       depth});
  return cases;
}

std::vector<DrafterCase> medusa_cases(LlamaModel& target, const std::string& heads_dir,
                                      ThreadPool& pool, std::shared_ptr<OracleLog> log) {
  auto heads = std::shared_ptr<const MedusaHeads>(
      MedusaHeads::load(heads_dir, target, MedusaHeads::Kind::Medusa));
  std::vector<DrafterCase> cases;
  for (int T : {8, 3}) {
    cases.push_back({"medusa-" + std::to_string(T),
                     [heads, &pool, T](const std::vector<int32_t>&) -> std::unique_ptr<Drafter> {
                       return std::make_unique<MedusaDrafter>(medusa_predictor(heads), pool, T);
                     },
                     std::min(T - 1, heads->num_heads())});
  }
  const int depth = heads->num_heads();
  cases.push_back(
      {"medusa-oracle",
       [&target, &pool, depth, log](const std::vector<int32_t>& truth) -> std::unique_ptr<Drafter> {
         return std::make_unique<MedusaDrafter>(
             std::make_unique<OracleMedusaPredictor>(
                 target, truth, depth, static_cast<uint32_t>(truth.size()), pool, log),
             pool, 8);
       },
       depth});
  return cases;
}

SamplingVerifier typical_acceptance_verifier(double epsilon, double delta) {
  return [epsilon, delta](const DraftTree& tree, const float* logits, int64_t V,
                          const SamplingParams& sp, uint64_t first_position) {
    validate_draft_tree(tree, V, "typical acceptance");
    const auto children = children_of(tree);
    Verdict v;
    v.path.push_back(0);
    int32_t node = 0;
    for (uint64_t position = first_position;; ++position) {
      const Distribution p = process_logits(logits + node * V, V, sp);
      double entropy = 0;
      for (double q : p.p)
        if (q > 0) entropy -= q * std::log(q);
      const double threshold = std::min(epsilon, delta * std::exp(-entropy));
      int32_t next = -1;
      for (int32_t c : children[static_cast<size_t>(node)])
        if (p.p[static_cast<size_t>(tree.tokens[static_cast<size_t>(c)])] > threshold) {
          next = c;
          break;
        }
      if (next < 0) {
        v.bonus = sample_with(p, counter_uniform(sp.seed, position));
        return v;
      }
      node = next;
      v.path.push_back(node);
    }
  };
}

}  // namespace eagle2::test

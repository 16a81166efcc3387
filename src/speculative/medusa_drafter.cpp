#include "speculative/medusa_drafter.h"

#include <algorithm>

#include "core/error.h"
#include "draft/eagle_head.h"
#include "draft/product_tree.h"
#include "speculative/eagle_drafter.h"
#include "speculative/hydra_drafter.h"

namespace eagle2 {

namespace {

class MedusaHeadsPredictor : public MedusaPredictor {
 public:
  explicit MedusaHeadsPredictor(std::shared_ptr<const MedusaHeads> heads)
      : heads_(std::move(heads)) {
    if (heads_->kind() != MedusaHeads::Kind::Medusa)
      fail("medusa drafter: given Hydra heads (internal error)");
    all_.resize(static_cast<size_t>(heads_->num_heads()));
    for (int k = 0; k < heads_->num_heads(); ++k) all_[static_cast<size_t>(k)] = k;
  }
  int num_heads() const override { return heads_->num_heads(); }
  int64_t hidden_size() const override { return heads_->hidden_size(); }
  int64_t vocab_size() const override { return heads_->vocab_size(); }
  void predict(const float* feature, float* out, ThreadPool& pool) override {
    const int64_t d = heads_->hidden_size();
    states_.resize(all_.size() * static_cast<size_t>(d));
    for (int k = 0; k < num_heads(); ++k)
      heads_->states(k, feature, 1, &states_[k * d], scratch_, pool);
    heads_->logprobs(all_, states_.data(), out, pool);
  }

 private:
  std::shared_ptr<const MedusaHeads> heads_;
  std::vector<int> all_;
  std::vector<float> states_;
  MedusaHeads::Scratch scratch_;
};

}  // namespace

std::unique_ptr<MedusaPredictor> medusa_predictor(std::shared_ptr<const MedusaHeads> heads) {
  return std::make_unique<MedusaHeadsPredictor>(std::move(heads));
}

MedusaDrafter::MedusaDrafter(std::unique_ptr<MedusaPredictor> predictor, ThreadPool& pool,
                             int total_tokens)
    : predictor_(std::move(predictor)),
      pool_(pool),
      total_tokens_(total_tokens),
      d_(predictor_->hidden_size()),
      vocab_(predictor_->vocab_size()) {
  if (total_tokens < 1) fail("medusa drafter: T must be >= 1 (got ", total_tokens, ")");
}

void MedusaDrafter::begin(std::span<const int32_t> context, const float* features, int32_t root) {
  if (context.empty()) fail("medusa drafter: empty context");
  if (!features) fail("medusa drafter: begin() without the target's features");
  // f_{n-1}: its lm_head gave the root, so head 1 predicts the root's child.
  const float* last = features + (static_cast<int64_t>(context.size()) - 1) * d_;
  feature_.assign(last, last + d_);
  root_ = root;
}

void MedusaDrafter::draft(int64_t max_tokens, DraftTree& tree) {
  const int64_t T = std::min<int64_t>(total_tokens_, max_tokens);
  if (T <= 1) {
    tree.reset(root_);
    return;
  }
  if (feature_.empty()) fail("medusa drafter: draft() before begin()");
  const int heads = predictor_->num_heads();
  // The best T - 1 nodes never need a rank past T - 2 at any depth.
  const int k = static_cast<int>(std::min<int64_t>(T - 1, vocab_));
  logp_.resize(static_cast<size_t>(heads * vocab_));
  predictor_->predict(feature_.data(), logp_.data(), pool_);
  top_tokens_.resize(static_cast<size_t>(heads * k));
  top_logp_.resize(static_cast<size_t>(heads * k));
  for (int h = 0; h < heads; ++h)
    top_k_of(&logp_[static_cast<size_t>(h * vocab_)], vocab_, k,
             &top_tokens_[static_cast<size_t>(h * k)], &top_logp_[static_cast<size_t>(h * k)]);
  build_product_tree(root_, ProductLevels{heads, k, top_tokens_, top_logp_}, T, tree);
}

void MedusaDrafter::accept(const DraftTree&, std::span<const int32_t> path, const float* features,
                           int32_t bonus) {
  // The last accepted node's feature: its lm_head gave the bonus, the next root.
  const float* last = features + (static_cast<int64_t>(path.size()) - 1) * d_;
  feature_.assign(last, last + d_);
  root_ = bonus;
}

std::unique_ptr<Drafter> make_heads_drafter(const std::string& kind, const std::string& folder,
                                            int total_tokens, const std::string& label,
                                            ThreadPool& pool, DraftPolicies& policies) {
  LlamaModel* target = policies.assets().target();
  if (!target) fail("drafter '", label, "' needs the target model");
  const MedusaHeads::Kind k =
      kind == "hydra" ? MedusaHeads::Kind::Hydra : MedusaHeads::Kind::Medusa;
  std::shared_ptr<MedusaHeads> heads = policies.assets().get<MedusaHeads>(kind, folder, [&] {
    std::unique_ptr<MedusaHeads> h = MedusaHeads::load(folder, *target, k);
    if (const auto type = EagleHead::weights_type_for(*target)) h->quantize_weights(*type);
    return h;
  });
  if (k == MedusaHeads::Kind::Hydra)
    return std::make_unique<HydraDrafter>(hydra_predictor(heads), pool, total_tokens);
  return std::make_unique<MedusaDrafter>(medusa_predictor(heads), pool, total_tokens);
}

}  // namespace eagle2

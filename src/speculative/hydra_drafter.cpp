#include "speculative/hydra_drafter.h"

#include <algorithm>
#include <cstring>

#include "core/error.h"
#include "speculative/eagle_drafter.h"

namespace eagle2 {

namespace {

class HydraHeadsPredictor : public HydraPredictor {
 public:
  explicit HydraHeadsPredictor(std::shared_ptr<const MedusaHeads> heads)
      : heads_(std::move(heads)) {
    if (heads_->kind() != MedusaHeads::Kind::Hydra)
      fail("hydra drafter: given Medusa heads (internal error)");
  }
  int num_heads() const override { return heads_->num_heads(); }
  int64_t hidden_size() const override { return heads_->hidden_size(); }
  int64_t vocab_size() const override { return heads_->vocab_size(); }
  void predict(int head, const float* feature, std::span<const int32_t> tokens, int64_t n,
               float* out, ThreadPool& pool) override {
    const int64_t d = heads_->hidden_size(), K = heads_->input_width(head);
    const auto per_row = static_cast<size_t>(head + 1);
    if (tokens.size() != static_cast<size_t>(n) * per_row)
      fail("hydra drafter: ", tokens.size(), " path tokens for ", n, " rows (internal error)");
    // Row i: [f, E(root), E(path...), E(node)], the layout the heads were trained on.
    input_.resize(static_cast<size_t>(n * K));
    for (int64_t i = 0; i < n; ++i) {
      float* row = &input_[static_cast<size_t>(i * K)];
      std::memcpy(row, feature, static_cast<size_t>(d) * sizeof(float));
      for (size_t j = 0; j < per_row; ++j)
        heads_->target().embed(tokens[static_cast<size_t>(i) * per_row + j],
                               row + static_cast<int64_t>(j + 1) * d);
    }
    states_.resize(static_cast<size_t>(n * d));
    heads_->states(head, input_.data(), n, states_.data(), scratch_, pool);
    which_.assign(static_cast<size_t>(n), head);
    heads_->logprobs(which_, states_.data(), out, pool);
  }

 private:
  std::shared_ptr<const MedusaHeads> heads_;
  std::vector<float> input_, states_;
  std::vector<int> which_;
  MedusaHeads::Scratch scratch_;
};

}  // namespace

std::unique_ptr<HydraPredictor> hydra_predictor(std::shared_ptr<const MedusaHeads> heads) {
  return std::make_unique<HydraHeadsPredictor>(std::move(heads));
}

HydraDrafter::HydraDrafter(std::unique_ptr<HydraPredictor> predictor, ThreadPool& pool,
                           int total_tokens, int top_k)
    : predictor_(std::move(predictor)),
      pool_(pool),
      d_(predictor_->hidden_size()),
      vocab_(predictor_->vocab_size()) {
  if (total_tokens < 1) fail("hydra drafter: T must be >= 1 (got ", total_tokens, ")");
  if (top_k < 1 || top_k > vocab_)
    fail("hydra drafter: top-k must be in [1, ", vocab_, "] (got ", top_k, ")");
  params_.top_k = top_k;
  params_.depth =
      predictor_->num_heads() - 1;  // level 1 is head 1's, each expansion the next head's
  params_.total_tokens = total_tokens;
}

void HydraDrafter::begin(std::span<const int32_t> context, const float* features, int32_t root) {
  if (context.empty()) fail("hydra drafter: empty context");
  if (!features) fail("hydra drafter: begin() without the target's features");
  // f_{n-1}: its lm_head gave the root.
  const float* last = features + (static_cast<int64_t>(context.size()) - 1) * d_;
  feature_.assign(last, last + d_);
  root_ = root;
}

void HydraDrafter::draft(int64_t max_tokens, DraftTree& tree) {
  builder_.start(root_, params_, max_tokens);
  if (builder_.next().kind != DraftStep::Kind::Done && feature_.empty())
    fail("hydra drafter: draft() before begin()");
  for (DraftStep step; (step = builder_.next()).kind != DraftStep::Kind::Done;) answer(step);
  builder_.finish(tree);
}

// Runs the head of the step's depth over the nodes whose children are wanted and hands their top-k
// to the builder.
void HydraDrafter::answer(const DraftStep& step) {
  const auto rows = static_cast<int64_t>(step.rows);
  int head = 0;  // RootChildren: head 1 (index 0) on the root alone
  paths_.clear();
  if (step.kind == DraftStep::Kind::RootChildren) {
    paths_.push_back(root_);
  } else {
    // An Expand step feeds one level: every node at the same depth, head `depth` answers.
    const std::vector<FedNode>& fed = builder_.fed();
    head = fed[step.first].depth;
    for (size_t i = step.first; i < fed.size(); ++i) {
      const size_t at = paths_.size();
      for (int32_t f = static_cast<int32_t>(i); f >= 0; f = fed[static_cast<size_t>(f)].parent_fed)
        paths_.push_back(fed[static_cast<size_t>(f)].token);
      paths_.push_back(root_);
      std::reverse(paths_.begin() + static_cast<std::ptrdiff_t>(at), paths_.end());
      if (paths_.size() - at != static_cast<size_t>(head + 1))
        fail("hydra drafter: a level of mixed depths (internal error)");
    }
  }
  logp_.resize(static_cast<size_t>(rows * vocab_));
  predictor_->predict(head, feature_.data(), paths_, rows, logp_.data(), pool_);
  const auto k = static_cast<size_t>(step.k);
  top_tokens_.resize(static_cast<size_t>(rows) * k);
  top_logp_.resize(static_cast<size_t>(rows) * k);
  for (int64_t r = 0; r < rows; ++r)
    top_k_of(&logp_[static_cast<size_t>(r * vocab_)], vocab_, step.k,
             &top_tokens_[static_cast<size_t>(r) * k], &top_logp_[static_cast<size_t>(r) * k]);
  builder_.supply(top_tokens_, top_logp_);
}

void HydraDrafter::accept(const DraftTree&, std::span<const int32_t> path, const float* features,
                          int32_t bonus) {
  // The last accepted node's feature: its lm_head gave the bonus, the next root.
  const float* last = features + (static_cast<int64_t>(path.size()) - 1) * d_;
  feature_.assign(last, last + d_);
  root_ = bonus;
}

}  // namespace eagle2

#include "speculative/eagle_drafter.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <type_traits>

#include "core/error.h"

namespace eagle2 {

void top_k_of(const float* logp, int64_t n, int k, int32_t* tokens, float* values) {
  // Callers read k entries, so k is never lowered silently: the constructor refuses a top-k wider
  // than the draft vocabulary, and this catches a vocabulary restricted after construction.
  if (k < 1 || k > n)
    fail("draft head: asked for the top ", k, " of ", n,
         " draft tokens (--draft-top-k and tree "
         "widths must be in [1, ",
         n, "], the draft vocabulary)");
  int count = 0;
  for (int64_t v = 0; v < n; ++v) {
    const float x = logp[v];
    // Only non-finite head outputs give a non-finite log_softmax; a NaN would also break the
    // orderings of tree building and the calibration's bins.
    if (!std::isfinite(x))
      fail("draft head: draft log-prob of draft token ", v, " is ", x,
           " (the head's output is not finite)");
    if (count == k && !(x > values[count - 1])) continue;
    // Insert after every kept value >= x, so equal values keep the lower id first.
    int pos = count < k ? count : k - 1;
    while (pos > 0 && values[pos - 1] < x) {
      if (pos < k) {
        values[pos] = values[pos - 1];
        tokens[pos] = tokens[pos - 1];
      }
      --pos;
    }
    values[pos] = x;
    tokens[pos] = static_cast<int32_t>(v);
    if (count < k) ++count;
  }
}

namespace {
int64_t fed_capacity(const EagleDrafterOptions& o) {
  switch (o.shape) {
    case EagleDrafterOptions::Shape::Dynamic:
      return static_cast<int64_t>(o.dynamic.depth) * o.dynamic.top_k;
    case EagleDrafterOptions::Shape::Static:
      return static_cast<int64_t>(o.choices.size());
    case EagleDrafterOptions::Shape::Chain:
      return o.chain_depth + 1;
    case EagleDrafterOptions::Shape::Sampled:
      // A tree never outgrows the context (draft() is given the room left), whatever T says.
      return std::min<int64_t>(o.dynamic.total_tokens, o.context);
  }
  return 0;
}
}  // namespace

EagleDrafter::EagleDrafter(EagleHead& head, ThreadPool& pool, EagleDrafterOptions options,
                           std::shared_ptr<DraftPolicy> policy)
    : head_(head),
      pool_(pool),
      opt_(std::move(options)),
      policy_(policy ? std::move(policy) : std::make_shared<DraftPolicy>()),
      kv_(head.make_cache(opt_.context + fed_capacity(opt_) + 1)),
      d_(head.config().hidden_size),
      feat_w_(head.feature_width()) {
  if (opt_.shape == EagleDrafterOptions::Shape::Static && opt_.choices.empty())
    opt_.choices = mc_sim_7b_63();
  const int64_t V = head.draft_vocab_size();
  if (opt_.dynamic.top_k < 1 || ((opt_.shape == EagleDrafterOptions::Shape::Dynamic ||
                                  opt_.shape == EagleDrafterOptions::Shape::Sampled) &&
                                 opt_.dynamic.top_k > V))
    fail("--draft-top-k must be in [1, ", V, "] (the draft vocabulary; got ", opt_.dynamic.top_k,
         ")");
  if (opt_.shape == EagleDrafterOptions::Shape::Static) {
    int widest = 0;  // a static tree asks for the top (largest sibling rank + 1)
    for (const auto& path : opt_.choices)
      for (int r : path) widest = std::max(widest, r + 1);
    if (widest > V)
      fail("static tree: sibling rank ", widest - 1, " needs ", widest,
           " draft candidates, the draft vocabulary has ", V);
  }
  if (opt_.dynamic.depth < 0) fail("--depth must be >= 0 (got ", opt_.dynamic.depth, ")");
  if (opt_.dynamic.total_tokens < 1)
    fail("--total-tokens must be >= 1 (got ", opt_.dynamic.total_tokens, ")");
  if (opt_.chain_depth < 0) fail("--depth must be >= 0 (got ", opt_.chain_depth, ")");
  if (opt_.shape == EagleDrafterOptions::Shape::Chain) chain_ = chain_choices(opt_.chain_depth);
  if (opt_.shape == EagleDrafterOptions::Shape::Sampled) {
    // Its shape is decided before any token is drawn (what keeps it exact), so calibrated values
    // of the drafted tokens do not apply; an auto budget does, chosen from the sibling counts
    // before the draws (sampled:auto).
    if (opt_.calibrate) fail("a sampled tree takes no calibration (:cal)");
    sibling_tried_.assign(static_cast<size_t>(opt_.dynamic.top_k), 0);
    sibling_accepted_.assign(static_cast<size_t>(opt_.dynamic.top_k), 0);
  }
  if (opt_.auto_budget) {
    cost_ = policy_->cost();
    if (!cost_)
      fail("an auto tree budget needs the verify cost curve (a policy with a cost model)");
  }
}

std::string EagleDrafter::name() const {
  const bool v3 = head_.kind() == EagleHead::Kind::Eagle3;
  switch (opt_.shape) {
    case EagleDrafterOptions::Shape::Dynamic:
      // The ablation's variants are told apart on the stats line.
      return std::string(v3 ? "eagle3-dynamic" : "eagle2-dynamic") +
             (opt_.dynamic.ranking == DynamicTreeParams::Ranking::OwnConfidence ? "-novalue" : "") +
             (opt_.dynamic.rerank ? "" : "-norerank");
    case EagleDrafterOptions::Shape::Static:
      return v3 ? "eagle3-static" : "eagle-static";
    case EagleDrafterOptions::Shape::Chain:
      return v3 ? "eagle3-chain" : "eagle-chain";
    case EagleDrafterOptions::Shape::Sampled:
      return v3 ? "eagle3-sampled" : "eagle2-sampled";
  }
  return "eagle";
}

void EagleDrafter::begin(std::span<const int32_t> context, const float* features, int32_t root) {
  if (context.empty()) fail("draft head: empty context");
  kv_.truncate(0);
  const size_t n = context.size();
  pending_features_.assign(features, features + n * static_cast<size_t>(feat_w_));
  pending_tokens_.assign(context.begin() + 1, context.end());
  pending_tokens_.push_back(root);
  root_ = root;
  prompt_catch_up_ = true;
  emitted_ = 1;  // the root is output position 0
}

void EagleDrafter::reset() {
  pacing_ = DraftPacing();
  // What a sampled tree learned of its siblings' acceptance is this sequence's too (begin() keeps
  // it from one prompt to the next, as the pacing).
  std::fill(sibling_tried_.begin(), sibling_tried_.end(), 0);
  std::fill(sibling_accepted_.begin(), sibling_accepted_.end(), 0);
}

double EagleDrafter::draft_seconds_estimate() const {
  return pacing_.draft_seconds(cost_);
}

void EagleDrafter::catch_up() {
  const auto n = static_cast<int64_t>(pending_tokens_.size());
  if (n == 0) return;
  constexpr int64_t kChunk = 64;
  scratch_out_.resize(static_cast<size_t>(std::min(n, kChunk) * d_));
  for (int64_t b = 0; b < n; b += kChunk) {
    const int64_t len = std::min(kChunk, n - b);
    head_.forward_causal(&pending_features_[b * feat_w_],
                         std::span(pending_tokens_).subspan(b, len), kv_, scratch_out_.data(),
                         pool_);
    if (b + len == n) last_out_.assign(&scratch_out_[(len - 1) * d_], &scratch_out_[len * d_]);
  }
  pending_features_.clear();
  pending_tokens_.clear();
}

void EagleDrafter::draft(int64_t max_tokens, DraftTree& tree) {
  const Proposal p = propose(max_tokens);
  complete(p.choosable ? pacing_.budget(p.values_desc, *cost_, p.max_tokens,
                                        snapshot_used_ ? &snapshot_ : nullptr)
                       : p.max_tokens,
           tree);
}

bool EagleDrafter::choosable() const {
  return opt_.shape == EagleDrafterOptions::Shape::Dynamic && opt_.auto_budget;
}

// The start of every cycle, alone or in lockstep: false when it verifies the root alone. Auto
// budget, paused: speculation has been slower than plain decoding, so the cycle is plain decoding
// through the loop. Likewise when there is room for the root alone (the end of the context, or a
// batch that pauses drafting). The head catches up on the skipped tokens at the next real draft.
bool EagleDrafter::start_cycle(int64_t max_tokens) {
  max_tokens_ = max_tokens;
  proposed_ = true;
  choosing_ = false;
  snapshot_used_ = false;
  lockstep_rows_ = 0;
  const bool paused = pacing_.skip_cycle(opt_.auto_budget);
  root_only_ = paused || max_tokens <= 1;
  if (root_only_) return false;
  kv_.drop_pending();  // the previous cycle's tree entries
  return true;
}

void EagleDrafter::start_dynamic_tree() {
  // One snapshot per tree: the whole tree is ranked by one state of the shared calibration.
  if (opt_.calibrate) {
    snapshot_ = policy_->calibration();
    snapshot_used_ = true;
  }
  dynamic_builder_.start(
      root_, opt_.dynamic, max_tokens_,
      opt_.auto_budget ? DynamicTreeBuilder::Budget::Chosen : DynamicTreeBuilder::Budget::Fixed);
}

// The proposal once the candidates are drafted: choosable when a dynamic tree waits for its
// budget, fixed otherwise (the root alone for a root-only cycle).
Drafter::Proposal EagleDrafter::drafted_proposal() {
  if (root_only_) return Proposal{false, {}, 1, 1, 0};
  if (opt_.shape == EagleDrafterOptions::Shape::Dynamic &&
      dynamic_builder_.next().kind == DraftStep::Kind::ChooseBudget) {
    choosing_ = true;
    const std::span<const float> values = dynamic_builder_.values_desc();
    return Proposal{
        true, values,
        DraftPacing::min_tokens(values.size(), max_tokens_, snapshot_used_ ? &snapshot_ : nullptr),
        max_tokens_, pacing_.draft_seconds(cost_)};
  }
  return Proposal{false, {}, 1, max_tokens_, pacing_.draft_seconds(cost_)};
}

Drafter::Proposal EagleDrafter::propose(int64_t max_tokens) {
  if (!start_cycle(max_tokens)) return drafted_proposal();
  draft_start_ = std::chrono::steady_clock::now();
  catch_up();
  if (last_out_.empty()) fail("draft head: draft() before begin()");
  switch (opt_.shape) {
    case EagleDrafterOptions::Shape::Dynamic: {
      start_dynamic_tree();
      const AcceptanceCalibration* calibration = snapshot_used_ ? &snapshot_ : nullptr;
      for (DraftStep step; (step = dynamic_builder_.next()).kind != DraftStep::Kind::Done &&
                           step.kind != DraftStep::Kind::ChooseBudget;) {
        if (step.kind == DraftStep::Kind::Expand && !level_pays()) {
          dynamic_builder_.stop_expanding();
          continue;
        }
        const auto level_start = std::chrono::steady_clock::now();
        answer(dynamic_builder_, step, calibration);
        if (step.kind == DraftStep::Kind::Expand) measured_level(level_start);
      }
      break;
    }
    case EagleDrafterOptions::Shape::Static:
    case EagleDrafterOptions::Shape::Chain:
      static_builder_.start(root_,
                            opt_.shape == EagleDrafterOptions::Shape::Chain ? chain_ : opt_.choices,
                            max_tokens);
      for (DraftStep step; (step = static_builder_.next()).kind != DraftStep::Kind::Done;)
        answer(static_builder_, step, nullptr);
      break;
    case EagleDrafterOptions::Shape::Sampled: {
      // An auto budget keeps the first T - 1 paths of the best-first shape, T chosen from their
      // keys (acceptance estimates) and the verify cost before any token is drawn.
      std::vector<float> keys;
      TreeChoices shape = sampled_shape(max_tokens, opt_.auto_budget ? &keys : nullptr);
      if (opt_.auto_budget) {
        // A root-only tree records nothing, so shared counts that say nothing pays (a burst of
        // hopeless requests at this temperature) would keep every later request of the bucket
        // at the root alone. Until this sequence has tried kExploreObservations first siblings
        // itself, such a cycle drafts kExploreTokens tokens instead. Decided from past counts
        // only, so the tree stays exact.
        int64_t t = pacing_.budget(keys, *cost_, max_tokens, nullptr);
        if (t <= 1 && sibling_tried_[0] < DraftPacing::kExploreObservations)
          t = std::min<int64_t>(DraftPacing::kExploreTokens, static_cast<int64_t>(keys.size()) + 1);
        shape.resize(static_cast<size_t>(t - 1));
      }
      static_builder_.start(root_, shape, max_tokens);
      sample_rng_ = Rng(sampled_draft_word(sampling_.seed, static_cast<uint64_t>(emitted_)));
      q_nodes_.clear();
      q_rows_.clear();
      for (DraftStep step; (step = static_builder_.next()).kind != DraftStep::Kind::Done;)
        answer_sampled(step);
      break;
    }
  }
  return drafted_proposal();
}

// Auto budget: whether the dynamic tree's next level is worth drafting (deeper_level_may_pay).
// A level costs about what the last ones did; until one was measured, and while the calibration
// explores (trees of at least DraftPacing::kExploreTokens), it is drafted. The chosen budget never
// verifies more than the pool, so a level that cannot pay is time wasted: on a quantized target,
// where verifying a few tokens costs several times one token, the budget keeps trees of a few
// tokens, and drafting all D levels for them cost as much as the verification saved.
bool EagleDrafter::level_pays() {
  if (!opt_.auto_budget || !opt_.adaptive_depth || cost_ == nullptr || level_seconds_ < 0)
    return true;
  const std::span<const float> pool = dynamic_builder_.pool_values();
  const AcceptanceCalibration* calibration = snapshot_used_ ? &snapshot_ : nullptr;
  const int64_t floor =
      DraftPacing::min_tokens(static_cast<size_t>(max_tokens_), max_tokens_, calibration);
  if (static_cast<int64_t>(pool.size()) + 1 < floor) return true;
  const std::span<const float> frontier = dynamic_builder_.frontier_values();
  const double drafted =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - draft_start_).count();
  return deeper_level_may_pay(pool, frontier, *cost_, drafted, level_seconds_, max_tokens_);
}

void EagleDrafter::measured_level(std::chrono::steady_clock::time_point start) {
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  level_seconds_ = level_seconds_ < 0 ? s : 0.8 * level_seconds_ + 0.2 * s;
}

void EagleDrafter::complete(int64_t total_tokens, DraftTree& tree) {
  if (!proposed_) fail("draft head: complete() without propose()");
  proposed_ = false;
  ++completed_cycles_;
  if (root_only_) {
    tree.reset(root_);
    return;
  }
  if (opt_.shape == EagleDrafterOptions::Shape::Dynamic) {
    if (choosing_) {
      const int64_t floor =
          DraftPacing::min_tokens(dynamic_builder_.values_desc().size(), max_tokens_,
                                  snapshot_used_ ? &snapshot_ : nullptr);
      dynamic_builder_.choose_budget(std::clamp<int64_t>(total_tokens, floor, max_tokens_));
    }
    dynamic_builder_.finish(tree);
  } else {
    static_builder_.finish(tree);
    if (opt_.shape == EagleDrafterOptions::Shape::Sampled) attach_draft_q(tree);
  }
  // The dynamic tree's drafting work does not depend on the budget (the pool is drafted before
  // the rerank; an auto budget's levels stop where they stop paying, which moves slowly), so one
  // per-cycle number is the right model. The first draft after begin() also fed the prompt and
  // would overstate it.
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - draft_start_).count();
  if (lockstep_seconds_ >= 0) s = lockstep_seconds_;  // drafted with others: its share
  lockstep_seconds_ = -1;
  if (!prompt_catch_up_) pacing_.measured_draft(s);
  prompt_catch_up_ = false;
}

// Runs the head for a RootChildren or Expand step and hands the top-k back, with calibrated
// confidences when a calibration is given (the dynamic tree's values then sum those).
template <class Builder>
void EagleDrafter::answer(Builder& builder, const DraftStep& step,
                          const AcceptanceCalibration* calibration) {
  const size_t n = step.rows * static_cast<size_t>(step.k);
  top_tokens_.resize(n);
  top_logp_.resize(n);
  if (step.kind == DraftStep::Kind::RootChildren)
    root_top_k(step.k, top_tokens_.data(), top_logp_.data());
  else
    expand_top_k(builder.fed(), step.first, step.k, top_tokens_.data(), top_logp_.data());
  supply_top_k(builder, step, calibration);
}

// Hands the step's top-k (top_tokens_, top_logp_) to the builder, with calibrated confidences
// when a calibration is given (the dynamic tree's values then sum those).
template <class Builder>
void EagleDrafter::supply_top_k(Builder& builder, const DraftStep& step,
                                const AcceptanceCalibration* calibration) {
  const size_t n = step.rows * static_cast<size_t>(step.k);
  if constexpr (std::is_same_v<Builder, DynamicTreeBuilder>) {
    top_confidence_.clear();
    if (calibration) {
      top_confidence_.resize(n);
      for (size_t i = 0; i < n; ++i)
        top_confidence_[i] =
            calibration->log_confidence(top_logp_[i], static_cast<int>(i % step.k));
    }
    builder.supply(top_tokens_, top_logp_, top_confidence_);
  } else {
    builder.supply(top_tokens_, top_logp_);
  }
}

void EagleDrafter::root_top_k(int k, int32_t* tokens, float* logp) {
  const int64_t V = head_.draft_vocab_size();
  logp_.resize(static_cast<size_t>(V));
  head_.draft_logprobs(last_out_.data(), 1, logp_.data(), pool_);
  top_k_of(logp_.data(), V, k, tokens, logp);
  for (int j = 0; j < k; ++j) tokens[j] = head_.draft_token(tokens[j]);
}

void EagleDrafter::expand_top_k(const std::vector<FedNode>& nodes, size_t first, int k,
                                int32_t* tokens, float* logp) {
  expand_logprobs(nodes, first);
  const int64_t V = head_.draft_vocab_size();
  const auto n_new = static_cast<int64_t>(nodes.size() - first);
  for (int64_t i = 0; i < n_new; ++i) {
    top_k_of(&logp_[i * V], V, k, tokens + i * k, logp + i * k);
    for (int j = 0; j < k; ++j) tokens[i * k + j] = head_.draft_token(tokens[i * k + j]);
  }
}

// Runs the fed nodes nodes[first..] through the head (their outputs into fed_out_) and leaves
// their draft log-probs in logp_ ([nodes - first, draft vocabulary]).
void EagleDrafter::expand_logprobs(const std::vector<FedNode>& nodes, size_t first) {
  injected_expansion_fault();
  const int64_t V = head_.draft_vocab_size();
  const int64_t stable = kv_.size();
  const auto n_new = static_cast<int64_t>(nodes.size() - first);
  kv_.begin_batch(static_cast<int64_t>(nodes.size()));  // all of this cycle's fed nodes
  std::vector<float> hidden(static_cast<size_t>(n_new * d_));
  std::vector<int32_t> toks(n_new), positions(n_new), slots(n_new), visible;
  std::vector<int64_t> begin(n_new + 1, 0);
  for (int64_t i = 0; i < n_new; ++i) {
    const FedNode& node = nodes[first + i];
    const float* h = node.parent_fed < 0 ? last_out_.data() : &fed_out_[node.parent_fed * d_];
    std::memcpy(&hidden[i * d_], h, d_ * sizeof(float));
    toks[i] = node.token;
    positions[i] = static_cast<int32_t>(stable + node.depth - 1);
    slots[i] = static_cast<int32_t>(stable + static_cast<int64_t>(first) + i);
    const size_t at = visible.size();
    for (int32_t f = static_cast<int32_t>(first + i); f >= 0; f = nodes[f].parent_fed)
      visible.push_back(static_cast<int32_t>(stable + f));
    std::reverse(visible.begin() + static_cast<std::ptrdiff_t>(at), visible.end());
    begin[i + 1] = static_cast<int64_t>(visible.size());
  }
  fed_out_.resize(nodes.size() * static_cast<size_t>(d_));
  EagleHead::Rows rows{hidden.data(), toks, positions, slots, visible, begin};
  head_.forward(rows, kv_, &fed_out_[first * d_], pool_);
  logp_.resize(static_cast<size_t>(n_new * V));
  head_.draft_logprobs(&fed_out_[first * d_], n_new, logp_.data(), pool_);
}

void EagleDrafter::accept(const DraftTree& tree, std::span<const int32_t> path,
                          const float* features, int32_t bonus) {
  if (opt_.shape == EagleDrafterOptions::Shape::Dynamic && opt_.calibrate && opt_.record_outcomes) {
    // Every node whose parent was accepted was put to the test: it was accepted or not.
    std::vector<char> on_path(static_cast<size_t>(tree.size()), 0);
    for (int32_t i : path) on_path[static_cast<size_t>(i)] = 1;
    outcomes_.clear();
    for (size_t i = 1; i < on_path.size(); ++i)
      if (on_path[static_cast<size_t>(tree.parents[i])])
        outcomes_.push_back({tree.logps[i], tree.ranks[i], on_path[i] != 0});
    if (!outcomes_.empty()) policy_->record(outcomes_);  // one lock per cycle
  }
  if (opt_.shape == EagleDrafterOptions::Shape::Sampled && !root_only_) learn_siblings(tree, path);
  emitted_ += static_cast<int64_t>(path.size());
  if (cost_ && !root_only_) pacing_.judge(static_cast<int64_t>(path.size()), tree.size(), *cost_);
  for (size_t j = 0; j < path.size(); ++j) {
    pending_features_.insert(pending_features_.end(), features + j * feat_w_,
                             features + (j + 1) * feat_w_);
    pending_tokens_.push_back(j + 1 < path.size() ? tree.tokens[path[j + 1]] : bonus);
  }
  root_ = bonus;
}

// supply_logprobs (eagle_drafter_lockstep.cpp) hands the dynamic builder its answers here.
template void EagleDrafter::supply_top_k<DynamicTreeBuilder>(DynamicTreeBuilder&, const DraftStep&,
                                                             const AcceptanceCalibration*);

}  // namespace eagle2

// EagleDrafter's sampled tree (EagleDrafterOptions::Shape::Sampled): at temperature > 0 each
// node's children are drawn from the head's processed distribution q without replacement and the
// tree carries q (DraftTree::draft_q) for the multi-candidate rule (verify_sampling_from_draft).
//
// Why the shape is fixed before any token is drawn: the rule is exact when, at every node, the
// children it tries are the first m draws of q without replacement, m not depending on those
// draws. EAGLE-2's dynamic tree keeps the nodes of the highest value, and a sampled node's value
// is its own draft log-prob: keeping the two likelier of four sampled siblings keeps draws that
// are not distributed as q, and the output would no longer be the target's. Here the shape comes
// from what was learned in earlier cycles (each sibling index's acceptance), so it depends on the
// past only and every node's children are a prefix of its draws.
#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "draft/sampled_shape.h"
#include "sampling/position_random.h"
#include "speculative/eagle_drafter.h"
#include "speculative/verify.h"

namespace eagle2 {

namespace {

// "EAGLSAMP": the key of the sampled tree's own draft stream.
constexpr uint64_t kSampledDraftKey = 0x4541474c53414d50ull;

}  // namespace

uint64_t EagleDrafter::sampled_draft_word(uint64_t seed, uint64_t n) {
  return position_word(seed ^ kSampledDraftKey, n);
}

double EagleDrafter::sibling_acceptance(int index) const {
  const auto i = static_cast<size_t>(index);
  return (static_cast<double>(sibling_accepted_[i]) + 1) /
         (static_cast<double>(sibling_tried_[i]) + 2);
}

TreeChoices EagleDrafter::sampled_shape(int64_t max_tokens, std::vector<float>* keys) const {
  const int K = opt_.dynamic.top_k;
  DraftPolicy::SiblingCounts shared;
  if (opt_.auto_budget) shared = policy_->sibling_counts();
  const auto acceptance = [&](int index) {
    if (!opt_.auto_budget) return sibling_acceptance(index);
    const auto i = static_cast<size_t>(index);
    const int64_t tried = i < shared.tried.size() ? shared.tried[i] : 0;
    const int64_t accepted = i < shared.accepted.size() ? shared.accepted[i] : 0;
    return (static_cast<double>(accepted) + 1) / (static_cast<double>(tried) + 2);
  };
  // log of the probability that a reached node's child at sibling index i is the accepted one:
  // the earlier siblings rejected, this one accepted.
  std::vector<double> log_share(static_cast<size_t>(K));
  double rejected_before = 0;
  for (int i = 0; i < K; ++i) {
    const double c = acceptance(i);
    log_share[static_cast<size_t>(i)] = rejected_before + std::log(c);
    rejected_before += std::log1p(-c);
  }
  const int64_t nodes = std::min<int64_t>(opt_.dynamic.total_tokens, max_tokens) - 1;
  return sampled_tree_shape(log_share, nodes, static_cast<size_t>(opt_.dynamic.depth) + 1, keys);
}

// The children of every row the step asks for: at temperature 0 the head's top-k (the same shape
// holding deterministic drafts), else k draws from q without replacement, q recorded for the
// node. A q with fewer than k tokens of mass (top-k, top-p) has no more children once it is
// exhausted: the sibling slots left are left out of the tree with everything under them. (They
// used to repeat the last draw, which the rule can never accept: head rows and verified tokens
// for nothing. Leaving them out changes no acceptance test: the rule skipped such a repeat
// without a uniform. It changes which draws later nodes of the tree get from the draft's stream,
// so the text for a seed, not its distribution.)
void EagleDrafter::answer_sampled(const DraftStep& step) {
  const int64_t V = head_.draft_vocab_size();
  if (step.kind == DraftStep::Kind::RootChildren) {
    logp_.resize(static_cast<size_t>(V));
    head_.draft_logprobs(last_out_.data(), 1, logp_.data(), pool_);
  } else {
    expand_logprobs(static_builder_.fed(), step.first);
  }
  const auto k = static_cast<size_t>(step.k);
  top_tokens_.resize(step.rows * k);
  top_logp_.resize(step.rows * k);
  const std::span<const int32_t> parents = static_builder_.step_parents();
  for (size_t r = 0; r < step.rows; ++r) {
    const float* row = &logp_[r * static_cast<size_t>(V)];
    int32_t* tokens = &top_tokens_[r * k];
    float* logp = &top_logp_[r * k];
    if (sampling_.greedy()) {
      top_k_of(row, V, step.k, tokens, logp);
      for (size_t j = 0; j < k; ++j) tokens[j] = head_.draft_token(tokens[j]);
      continue;
    }
    check_logits(row, V);
    Distribution q = process_logits(row, V, sampling_);
    q_nodes_.push_back(parents[r]);
    q_rows_.insert(q_rows_.end(), q.p.begin(), q.p.end());
    bool exhausted = false;
    for (size_t j = 0; j < k; ++j) {
      if (exhausted) {  // no child here (StaticTreeBuilder::supply leaves it out)
        tokens[j] = -1;
        logp[j] = 0.0f;
        continue;
      }
      const int32_t x = sample(q, sample_rng_);
      exhausted = !q.remove_and_renormalize(x);
      tokens[j] = head_.draft_token(x);
      logp[j] = row[x];
    }
  }
  static_builder_.supply(top_tokens_, top_logp_);
}

// q of every node whose children were drawn, over the target's vocabulary (zero outside the draft
// vocabulary), one row per such node (DraftTree::draft_q_rows): leaves, most of a tree, get none.
void EagleDrafter::attach_draft_q(DraftTree& tree) {
  if (q_nodes_.empty()) return;  // temperature 0, or the root alone: a deterministic tree
  const int64_t Vt = head_.config().vocab_size;
  const int64_t Vd = head_.draft_vocab_size();
  tree.draft_q_vocab = Vt;
  tree.draft_q.assign(q_nodes_.size() * static_cast<size_t>(Vt), 0.0);
  tree.draft_q_rows.assign(static_cast<size_t>(tree.size()), -1);
  for (size_t i = 0; i < q_nodes_.size(); ++i) {
    if (q_nodes_[i] < 0 || q_nodes_[i] >= tree.size())
      fail("sampled draft: q recorded for node ", q_nodes_[i], " of a ", tree.size(), "-node tree");
    tree.draft_q_rows[static_cast<size_t>(q_nodes_[i])] = static_cast<int32_t>(i);
    double* out = &tree.draft_q[i * static_cast<size_t>(Vt)];
    const double* q = &q_rows_[i * static_cast<size_t>(Vd)];
    for (int64_t j = 0; j < Vd; ++j) out[head_.draft_token(j)] = q[j];
  }
}

// At every accepted node with children (the root included), the siblings tried in order: those
// before the accepted one rejected, it accepted; at the last node all of them rejected.
void EagleDrafter::learn_siblings(const DraftTree& tree, std::span<const int32_t> path) {
  if (tree.size() <= 1) return;
  const auto children = children_of(tree);
  std::vector<int64_t> tried(sibling_tried_.size(), 0), accepted(sibling_tried_.size(), 0);
  for (size_t j = 0; j < path.size(); ++j) {
    const int32_t next = j + 1 < path.size() ? path[j + 1] : -1;
    for (int32_t c : children[static_cast<size_t>(path[j])]) {
      const auto index = static_cast<size_t>(tree.ranks[static_cast<size_t>(c)]);
      if (index >= tried.size()) continue;
      ++tried[index];
      if (c == next) {
        ++accepted[index];
        break;
      }
    }
  }
  for (size_t i = 0; i < tried.size(); ++i) {
    sibling_tried_[i] += tried[i];
    sibling_accepted_[i] += accepted[i];
  }
  if (opt_.auto_budget) policy_->record_siblings(tried, accepted);
}

}  // namespace eagle2

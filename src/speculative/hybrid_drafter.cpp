#include "speculative/hybrid_drafter.h"

#include <algorithm>
#include <queue>

#include "core/error.h"
#include "speculative/eagle_drafter.h"
#include "speculative/suffix_drafter.h"

namespace eagle2 {

namespace {

uint64_t edge_key(int32_t parent, int32_t token) {
  return (uint64_t{static_cast<uint32_t>(parent)} << 32) | static_cast<uint32_t>(token);
}

}  // namespace

void HybridCandidates::add_tree(const DraftTree& t, Source s) {
  std::vector<int32_t> merged(static_cast<size_t>(t.size()), 0);
  for (size_t i = 1; i < merged.size(); ++i) {
    const int32_t parent = merged[static_cast<size_t>(t.parents[i])];
    const auto [it, fresh] =
        edges_.try_emplace(edge_key(parent, t.tokens[i]), static_cast<int32_t>(nodes_.size()));
    if (fresh) {
      nodes_.push_back(Node{t.tokens[i], parent, t.values[i], {-1, -1}, {}});
      nodes_[static_cast<size_t>(parent)].children.push_back(it->second);
    }
    Node& node = nodes_[static_cast<size_t>(it->second)];
    node.value = std::max(node.value, t.values[i]);
    if (node.from[s] < 0) node.from[s] = static_cast<int32_t>(i);
    merged[i] = it->second;
  }
}

void HybridCandidates::build(const DraftTree& head, const DraftTree& suffix) {
  if (head.tokens.empty() || suffix.tokens.empty() || head.tokens[0] != suffix.tokens[0])
    fail("hybrid drafter: the head's and the suffix's trees have different roots");
  sources_[kHead] = &head;
  sources_[kSuffix] = &suffix;
  nodes_.assign(1, Node{head.tokens[0], -1, 0.0f, {0, 0}, {}});
  edges_.clear();
  add_tree(head, kHead);
  add_tree(suffix, kSuffix);
  // Best first from the root: a node becomes a candidate once its parent is taken, so every
  // prefix of the order is a tree whatever the values are.
  struct Entry {
    float value;
    int32_t node;
  };
  auto worse = [](const Entry& a, const Entry& b) {
    return a.value != b.value ? a.value < b.value : a.node > b.node;
  };
  std::priority_queue<Entry, std::vector<Entry>, decltype(worse)> frontier(worse);
  for (const int32_t c : nodes_[0].children)
    frontier.push({nodes_[static_cast<size_t>(c)].value, c});
  order_.clear();
  values_desc_.clear();
  while (!frontier.empty()) {
    const Entry e = frontier.top();
    frontier.pop();
    order_.push_back(e.node);
    values_desc_.push_back(e.value);
    for (const int32_t c : nodes_[static_cast<size_t>(e.node)].children)
      frontier.push({nodes_[static_cast<size_t>(c)].value, c});
  }
}

void HybridCandidates::finish(int64_t total_tokens, DraftTree& tree) {
  const auto keep = static_cast<size_t>(
      std::clamp<int64_t>(total_tokens - 1, 0, static_cast<int64_t>(order_.size())));
  tree.reset(nodes_[0].token);
  tree_of_.assign(nodes_.size(), -1);
  tree_of_[0] = 0;
  for (auto& k : kept_) k.assign(1, 0);
  tree.sources.assign(1, DraftTree::kFromHead | DraftTree::kFromSuffix);
  for (size_t k = 0; k < keep; ++k) {
    const Node& node = nodes_[static_cast<size_t>(order_[k])];
    const Source s = node.from[kHead] >= 0 ? kHead : kSuffix;
    const auto at = static_cast<size_t>(node.from[s]);
    tree.add(node.token, tree_of_[static_cast<size_t>(node.parent)], node.value,
             sources_[s]->logps[at], sources_[s]->ranks[at]);
    tree_of_[static_cast<size_t>(order_[k])] = static_cast<int32_t>(tree.size() - 1);
    kept_[kHead].push_back(node.from[kHead]);
    kept_[kSuffix].push_back(node.from[kSuffix]);
    tree.sources.push_back(
        static_cast<uint8_t>((node.from[kHead] >= 0 ? DraftTree::kFromHead : 0) |
                             (node.from[kSuffix] >= 0 ? DraftTree::kFromSuffix : 0)));
  }
}

HybridDrafter::HybridDrafter(std::unique_ptr<EagleDrafter> head,
                             std::unique_ptr<SuffixDrafter> suffix,
                             std::shared_ptr<DraftPolicy> policy, int64_t tree_tokens)
    : head_(std::move(head)),
      suffix_(std::move(suffix)),
      policy_(std::move(policy)),
      tree_tokens_(tree_tokens) {
  if (!head_ || !suffix_ || !policy_ || tree_tokens_ < 1)
    fail("hybrid drafter: needs a head drafter, a suffix drafter, a policy and >= 1 tree token");
}

HybridDrafter::~HybridDrafter() = default;

std::string HybridDrafter::name() const {
  return head_->name() + "+suffix";
}

std::span<const int32_t> HybridDrafter::feature_layers() const {
  return head_->feature_layers();
}

void HybridDrafter::begin(std::span<const int32_t> context, const float* features, int32_t root) {
  head_->begin(context, features, root);
  suffix_->begin(context, features, root);
}

bool HybridDrafter::choosable() const {
  return head_->choosable();
}

Drafter::Proposal HybridDrafter::propose(int64_t room) {
  // Never more than the dynamic part's size (an auto budget's kAutoMaxTokens), whatever the room:
  // the server reserves KV for that size, and the merged candidates can outnumber it.
  const int64_t max_tokens = std::min(room, tree_tokens_);
  max_tokens_ = max_tokens;
  proposed_ = false;
  head_proposal_ = head_->propose(max_tokens);
  // The head's tree at its largest: a fixed budget's T (complete() ignores the size), or an auto
  // budget's whole ranked pool up to max_tokens, of which the merged ranking keeps what it keeps.
  head_->complete(max_tokens, head_tree_);
  suffix_->draft(max_tokens, suffix_tree_);
  // The suffix tree's values were log path frequencies: now sums of calibrated log-estimates,
  // comparable with the head's (one snapshot per tree, as the head takes one).
  const AcceptanceCalibration calibration = policy_->suffix_calibration();
  for (size_t i = 1; i < suffix_tree_.tokens.size(); ++i)
    suffix_tree_.values[i] =
        suffix_tree_.values[static_cast<size_t>(suffix_tree_.parents[i])] +
        calibration.log_confidence(suffix_tree_.logps[i], suffix_tree_.ranks[i]);
  candidates_.build(head_tree_, suffix_tree_);
  proposed_ = true;
  if (head_proposal_.choosable)
    return Proposal{true, candidates_.values_desc(), head_proposal_.min_tokens, max_tokens,
                    head_proposal_.draft_seconds};
  return Proposal{false, {}, 1, max_tokens, head_proposal_.draft_seconds};
}

void HybridDrafter::complete(int64_t total_tokens, DraftTree& tree) {
  if (!proposed_) fail("hybrid drafter: complete() without propose()");
  proposed_ = false;
  // An auto budget's size is the caller's choice over the merged values; a fixed one is the
  // dynamic spec's T (also while the head pauses: the suffix tree alone, capped by its own T).
  const int64_t m = head_proposal_.choosable
                        ? std::clamp<int64_t>(total_tokens, head_proposal_.min_tokens, max_tokens_)
                        : std::min(tree_tokens_, max_tokens_);
  candidates_.finish(m, tree);
}

void HybridDrafter::draft(int64_t max_tokens, DraftTree& tree) {
  const Proposal p = propose(max_tokens);
  int64_t total = p.max_tokens;
  if (p.choosable) {
    const AcceptanceCalibration calibration = policy_->calibration();
    total = head_->pacing().budget(p.values_desc, *policy_->cost(), p.max_tokens, &calibration);
  }
  complete(total, tree);
}

void HybridDrafter::accept(const DraftTree& tree, std::span<const int32_t> path,
                           const float* features, int32_t bonus) {
  if (tree.size() != candidates_.finished_size())
    fail("hybrid drafter: accept() of a tree it did not draft (", tree.size(), " nodes, drafted ",
         candidates_.finished_size(), ")");
  // Every node whose parent was accepted was put to the test; its outcome teaches the
  // calibration of each source that drafted it (a node both drafted teaches both).
  std::vector<char> on_path(static_cast<size_t>(tree.size()), 0);
  for (const int32_t i : path) on_path[static_cast<size_t>(i)] = 1;
  for (auto& o : outcomes_) o.clear();
  const DraftTree* sources[2] = {&head_tree_, &suffix_tree_};
  for (size_t i = 1; i < on_path.size(); ++i) {
    for (const auto s : {HybridCandidates::kHead, HybridCandidates::kSuffix}) {
      const int32_t n = candidates_.source_node(i, s);
      if (n >= 0 && on_path[static_cast<size_t>(tree.parents[i])])
        outcomes_[s].push_back({sources[s]->logps[static_cast<size_t>(n)],
                                sources[s]->ranks[static_cast<size_t>(n)], on_path[i] != 0});
    }
  }
  if (!outcomes_[0].empty()) policy_->record(outcomes_[0]);
  if (!outcomes_[1].empty()) policy_->record_suffix(outcomes_[1]);
  head_->accept(tree, path, features, bonus);
  suffix_->accept(tree, path, features, bonus);
}

void HybridDrafter::reset() {
  head_->reset();
  suffix_->reset();
}

}  // namespace eagle2

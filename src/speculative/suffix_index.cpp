#include "speculative/suffix_index.h"

#include <algorithm>

#include "core/error.h"

namespace eagle2 {

SuffixIndex::SuffixIndex(int depth, int64_t max_nodes) : depth_(depth), max_nodes_(max_nodes) {
  if (depth < 1 || depth > 256) fail("suffix index: depth must be in [1, 256] (got ", depth, ")");
  if (max_nodes < 2 * int64_t{depth} + 2 || max_nodes > (int64_t{1} << 30))
    fail("suffix index: max_nodes must be in [2 * depth + 2, 2^30] (got ", max_nodes, ")");
  clear();
}

void SuffixIndex::clear() {
  nodes_.assign(1, Node{});
  free_.clear();
  edges_.clear();
  text_.clear();
  active_.clear();
}

int32_t SuffixIndex::child(int32_t node, int32_t token) const {
  const auto it = edges_.find(key(node, token));
  return it == edges_.end() ? -1 : it->second;
}

int32_t SuffixIndex::child_or_new(int32_t parent, int32_t token) {
  const auto [it, inserted] = edges_.try_emplace(key(parent, token), -1);
  if (!inserted) return it->second;
  int32_t id;
  if (!free_.empty()) {
    id = free_.back();
    free_.pop_back();
  } else {
    id = static_cast<int32_t>(nodes_.size());
    nodes_.emplace_back();
  }
  Node& n = nodes_[static_cast<size_t>(id)];
  Node& p = nodes_[static_cast<size_t>(parent)];
  n = Node{token, parent, -1, p.first_child, -1, 0, p.depth + 1};
  if (p.first_child >= 0) nodes_[static_cast<size_t>(p.first_child)].prev_sibling = id;
  p.first_child = id;
  it->second = id;
  return id;
}

void SuffixIndex::unlink(int32_t node) {
  const Node n = nodes_[static_cast<size_t>(node)];
  Node& p = nodes_[static_cast<size_t>(n.parent)];
  if (n.prev_sibling >= 0)
    nodes_[static_cast<size_t>(n.prev_sibling)].next_sibling = n.next_sibling;
  else
    p.first_child = n.next_sibling;
  if (n.next_sibling >= 0)
    nodes_[static_cast<size_t>(n.next_sibling)].prev_sibling = n.prev_sibling;
  edges_.erase(key(n.parent, n.token));
  nodes_[static_cast<size_t>(node)] = Node{};
  free_.push_back(node);
}

void SuffixIndex::append(int32_t token) {
  // Each appended token adds at most `depth` nodes (one per suffix it ends).
  if (nodes() + depth_ > max_nodes_) reindex_recent();
  next_active_.clear();
  auto extend = [&](int32_t from) {
    const int32_t c = child_or_new(from, token);
    ++nodes_[static_cast<size_t>(c)].count;
    next_active_.push_back(c);
  };
  extend(kRoot);
  for (const int32_t a : active_)
    if (nodes_[static_cast<size_t>(a)].depth < depth_) extend(a);
  active_.swap(next_active_);
  text_.push_back(token);
}

void SuffixIndex::append(std::span<const int32_t> tokens) {
  for (const int32_t t : tokens) append(t);
}

void SuffixIndex::reindex_recent() {
  // keep * depth nodes at most: half of max_nodes, so the next reindex is max_nodes / 2 appends
  // away (amortized O(depth) per token).
  const auto keep = static_cast<size_t>(std::max<int64_t>(1, max_nodes_ / (2 * int64_t{depth_})));
  std::vector<int32_t> recent(
      text_.end() - static_cast<std::ptrdiff_t>(std::min(keep, text_.size())), text_.end());
  clear();
  ++reindexes_;
  for (const int32_t t : recent) append(t);
}

int32_t SuffixIndex::suffix_node(int length) const {
  if (length < 1 || length > static_cast<int>(active_.size()))
    fail("suffix index: no suffix of length ", length, " (", active_.size(), " indexed)");
  return active_[static_cast<size_t>(length - 1)];
}

bool SuffixIndex::add(std::span<const int32_t> tokens) {
  const auto n = static_cast<int64_t>(tokens.size());
  if (nodes() + n * std::min<int64_t>(depth_, n) > max_nodes_) return false;
  for (int64_t s = 0; s < n; ++s) {
    int32_t at = kRoot;
    for (int64_t i = s; i < std::min(n, s + depth_); ++i) {
      at = child_or_new(at, tokens[static_cast<size_t>(i)]);
      ++nodes_[static_cast<size_t>(at)].count;
    }
  }
  return true;
}

void SuffixIndex::remove(std::span<const int32_t> tokens) {
  const auto n = static_cast<int64_t>(tokens.size());
  std::vector<int32_t> emptied;
  for (int64_t s = 0; s < n; ++s) {
    int32_t at = kRoot;
    emptied.clear();
    for (int64_t i = s; i < std::min(n, s + depth_); ++i) {
      at = child(at, tokens[static_cast<size_t>(i)]);
      if (at < 0) fail("suffix index: removing a document that was not added");
      Node& node = nodes_[static_cast<size_t>(at)];
      if (--node.count == 0) emptied.push_back(at);
    }
    // Deepest first: a node's count is at least its children's, so an emptied node's children on
    // this path were emptied too, and only leaves are unlinked.
    for (auto it = emptied.rbegin(); it != emptied.rend(); ++it) unlink(*it);
  }
}

int32_t SuffixIndex::find(std::span<const int32_t> context) const {
  if (static_cast<int64_t>(context.size()) > depth_) return -1;
  int32_t at = kRoot;
  for (const int32_t t : context)
    if ((at = child(at, t)) < 0) return -1;
  return at;
}

void SuffixIndex::children(int32_t node, std::vector<int32_t>& out) const {
  out.clear();
  for (int32_t c = nodes_[static_cast<size_t>(node)].first_child; c >= 0;
       c = nodes_[static_cast<size_t>(c)].next_sibling)
    out.push_back(c);
  std::sort(out.begin(), out.end(), [&](int32_t a, int32_t b) {
    const Node &x = nodes_[static_cast<size_t>(a)], &y = nodes_[static_cast<size_t>(b)];
    return x.count != y.count ? x.count > y.count : x.token < y.token;
  });
}

}  // namespace eagle2

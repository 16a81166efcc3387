// The index behind suffix decoding (docs/SPECULATIVE.md "Suffix decoding"): a depth-bounded suffix
// trie with occurrence counts. Every substring of the indexed text of length <= depth is a path
// from the root, and each node counts how often its substring occurs, so the continuations of a
// context and their empirical frequencies are the children of the context's node and their
// counts: count(child) / sum of the children's counts, at every depth below it.
//
// Why a depth-bounded trie and not a suffix automaton (O(n) states, O(1) amortized appends): a
// drafter needs, for the current context, the frequency of every continuation several tokens deep.
// In the trie that is the subtree under one node, and appending a token updates the counts of the
// at most `depth` nodes of the suffixes it ends, in O(depth). A suffix automaton merges contexts
// by their end positions; their occurrence counts are the sizes of those sets, which are summed
// over the suffix-link tree after construction and cannot be kept exact online, and a
// continuation several tokens deep is not a path of its transitions with counts on them. The
// trie costs O(n * depth) nodes; `max_nodes` bounds it (see each mode).
//
// Two ways to fill it: a stream (append(): one text, extended token by token, e.g. a request's
// prompt and output) or documents (add()/remove(): whole texts counted in and out again, e.g. the
// recent outputs of many requests, evicted oldest first). One index uses one way.
#pragma once

#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

namespace eagle2 {

class SuffixIndex {
 public:
  static constexpr int32_t kRoot = 0;
  // Bytes one node costs, about: its record, its hash-map entry and bucket (libstdc++).
  static constexpr int64_t kApproxNodeBytes = 80;

  // depth in [1, 256]; max_nodes >= 1 + 2 * depth (room for a re-indexed window of a few tokens).
  // Error otherwise.
  SuffixIndex(int depth, int64_t max_nodes);

  int depth() const { return depth_; }
  int64_t max_nodes() const { return max_nodes_; }
  int64_t nodes() const { return static_cast<int64_t>(nodes_.size() - free_.size()); }
  // Node storage allocated, live or free (evicted nodes' slots are reused before it grows).
  int64_t slots() const { return static_cast<int64_t>(nodes_.size()); }
  int64_t approx_bytes() const { return nodes() * kApproxNodeBytes; }

  // Stream mode. The text appended so far (after a re-index: its most recent window).
  void append(int32_t token);
  void append(std::span<const int32_t> tokens);
  std::span<const int32_t> text() const { return text_; }
  // The node of the stream's last `length` tokens (length in [1, min(depth, text size)]), which
  // the stream's own occurrence makes exist; its children come from earlier occurrences only.
  int32_t suffix_node(int length) const;
  // Times the stream was re-indexed over its recent window because the next token would have
  // grown the trie past max_nodes. A re-index keeps the last max_nodes / (2 * depth) tokens (at
  // least depth of them, fewer when the text is shorter): then at most half of max_nodes.
  int64_t reindexes() const { return reindexes_; }

  // Document mode: counts every substring of length <= depth of `tokens` in (add) or out (remove;
  // the caller removes only what it added, nodes counted down to 0 are freed). add() refuses
  // (returns false, changing nothing) a document that could grow the trie past max_nodes: the
  // caller evicts older documents and tries again.
  bool add(std::span<const int32_t> tokens);
  void remove(std::span<const int32_t> tokens);
  // The node of `context` read from the root, or -1 (context longer than depth, or unseen).
  int32_t find(std::span<const int32_t> context) const;

  // Empties the index (both modes).
  void clear();

  // A node's token, occurrence count, depth, and children: most frequent first, ties by token.
  int32_t token(int32_t node) const { return nodes_[static_cast<size_t>(node)].token; }
  int64_t count(int32_t node) const { return nodes_[static_cast<size_t>(node)].count; }
  int node_depth(int32_t node) const { return nodes_[static_cast<size_t>(node)].depth; }
  void children(int32_t node, std::vector<int32_t>& out) const;
  bool has_children(int32_t node) const {
    return nodes_[static_cast<size_t>(node)].first_child >= 0;
  }
  int32_t child(int32_t node, int32_t token) const;

 private:
  struct Node {
    int32_t token = -1;
    int32_t parent = -1;
    int32_t first_child = -1;
    int32_t next_sibling = -1;
    // Doubly linked siblings: unlink() is O(1), where a root with a vocabulary of children would
    // make evicting the oldest (last-linked) nodes walk them all under the shared index's lock.
    int32_t prev_sibling = -1;
    int64_t count = 0;
    int32_t depth = 0;
  };
  static uint64_t key(int32_t parent, int32_t token) {
    return (uint64_t{static_cast<uint32_t>(parent)} << 32) | static_cast<uint32_t>(token);
  }
  int32_t child_or_new(int32_t parent, int32_t token);
  void unlink(int32_t node);
  void reindex_recent();

  int depth_;
  int64_t max_nodes_;
  std::vector<Node> nodes_;  // nodes_[0] is the root
  std::vector<int32_t> free_;
  std::unordered_map<uint64_t, int32_t> edges_;  // (parent, token) -> child
  // Stream mode: the text and the nodes of its suffixes of length 1..depth, shortest first.
  std::vector<int32_t> text_;
  std::vector<int32_t> active_;
  std::vector<int32_t> next_active_;  // append()'s buffer, reused
  int64_t reindexes_ = 0;
};

}  // namespace eagle2

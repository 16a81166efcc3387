// The server-wide suffix index (`eagle2 serve --suffix-scope server`, docs/SPECULATIVE.md "Suffix
// decoding"): the outputs of recent requests, each a document of a SuffixIndex, so that a suffix
// drafter also drafts what other requests wrote (agents repeat earlier answers and tool calls).
// Bounded: at most max_bytes in all, counting the trie (SuffixIndex::kApproxNodeBytes a node) and
// the kept copies of the documents (4 bytes a token, kDocumentBytes each), so that the same output
// published again and again (no new nodes) still evicts; a new document evicts the oldest ones,
// exactly (their counts go out again), until it fits; a document longer than half the cap keeps
// its last tokens. Thread-safe (one mutex): the scheduler thread drafts
// and publishes, and nothing else needs to wait on it.
//
// What it exposes: a response's tokens are the ones plain decoding gives (every drafted token is
// verified), but how many of them were drafted says whether text like it was generated recently
// for someone. The server reports a suffix request's own acceptance under the server scope as
// plain decoding's (no drafted flags, one target forward per token: server/scheduler.cpp), so
// what remains is timing and /metrics' aggregate over all requests. Use the request scope (the
// default) wherever requests come from users who must not learn about each other.
#pragma once

#include <cstdint>
#include <deque>
#include <mutex>
#include <span>
#include <vector>

#include "draft/draft_tree.h"
#include "speculative/suffix_index.h"

namespace eagle2 {

class SharedSuffixIndex {
 public:
  // Substrings of up to kDepth tokens: a context of SuffixParams::kMaxMatch (8) tokens and 16
  // levels under it.
  static constexpr int kDepth = 25;
  static constexpr int64_t kMinBytes = int64_t{1} << 20;
  static constexpr int64_t kDocumentBytes = 64;  // a kept document's own overhead, about
  // Error unless max_bytes is in [1 MiB, 64 GiB].
  explicit SharedSuffixIndex(int64_t max_bytes);

  // Adds one request's output, evicting the oldest documents until it fits. Empty: nothing.
  void publish(std::span<const int32_t> tokens);

  // The longest suffix of `text` (at most max_match tokens) that an indexed document continues,
  // and the best-first tree under it appended to `tree` (grow_suffix_tree: budget nodes, levels
  // capped to what the index holds under the match). Returns the match length, 0 for none (the
  // tree unchanged).
  int draft(std::span<const int32_t> text, int max_match, int64_t budget, int levels,
            double min_frequency, DraftTree& tree) const;

  int64_t documents() const;
  int64_t nodes() const;
  int64_t evictions() const;
  int64_t bytes() const;       // what the budget counts now
  int64_t node_slots() const;  // the trie's node storage, live or free (SuffixIndex::slots)
  int64_t max_bytes() const { return max_bytes_; }
  int64_t max_nodes() const { return max_nodes_; }

 private:
  int64_t bytes_locked() const;

  int64_t max_bytes_;
  int64_t max_nodes_;
  int64_t document_tokens_ = 0;
  mutable std::mutex mutex_;
  SuffixIndex index_;
  std::deque<std::vector<int32_t>> documents_;  // oldest first
  int64_t evictions_ = 0;
};

}  // namespace eagle2

// Suffix decoding (after Oliaro et al., "SuffixDecoding", NeurIPS 2025), weight-free: the
// request's prompt and its own output so far are indexed in a suffix trie with occurrence counts
// (suffix_index.h), updated as tokens are accepted. Each cycle the longest recent context (at most
// kMaxMatch tokens, the root last) that occurred before with a continuation is matched, and the
// draft tree grows best first from its continuations, each node scored by the empirical
// probability of its path: the product of count(child) / sum of its siblings' counts along it.
// The tree adapts to how confident the match is: nodes below P % are not drafted, and a match of
// p tokens drafts at most kTokensPerMatchedToken * p nodes (one earlier occurrence of a short
// context says little; a long one says much). Verification stays exact at every temperature
// because position-keyed sampling (verify.h) emits plain sampling's token at each position
// whatever the tree holds; under the server scope a tree also depends on other requests'
// outputs, which changes what is accepted, never what is emitted. Siblings appear most frequent
// first, the order in which sampling verification tries them.
// docs/SPECULATIVE.md "Suffix decoding" has the parameters, the memory bound and the results.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "speculative/drafter.h"
#include "speculative/suffix_index.h"

namespace eagle2 {

// The spec's suffix[:T[:D[:P]]].
struct SuffixParams {
  // T = 8 and D = 7 by default: on the 2-core CPU a forward of 16 rows costs about twice one of 8,
  // and suffix:8:7:10 beat suffix:16:15:10 on HumanEval and matched it on code edits
  // (docs/SPECULATIVE.md "Suffix decoding").
  int tokens = 8;        // T: tree tokens, root included, in [1, kMaxTreeTokens]
  int depth = 7;         // D: draft levels after the first (D + 1 levels), in [0, kMaxDepth]
  int min_percent = 10;  // P: a node is drafted when its path's frequency is >= P %, in [0, 100]
  static constexpr int kMaxTreeTokens = 1024;
  static constexpr int kMaxDepth = 63;
  // The longest context matched; the trie indexes substrings of kMaxMatch + D + 1 tokens.
  static constexpr int kMaxMatch = 8;
  static constexpr int kTokensPerMatchedToken = 2;
  // The per-request trie's node cap (about 80 bytes a node: 20 MiB); past it the request's
  // index is rebuilt over its most recent tokens (SuffixIndex::reindexes).
  static constexpr int64_t kMaxNodes = int64_t{1} << 18;
  int index_depth() const { return kMaxMatch + depth + 1; }
  // Error "<where>: ..." naming the rule unless every parameter is in its range.
  void validate(const std::string& where) const;
  bool operator==(const SuffixParams&) const = default;
};

// The best-first candidate tree under `matched` (a node of `index` whose children continue the
// context), appended to `tree` under its root: at most `budget` nodes, at most `levels` levels,
// none whose path frequency is below min_frequency. Node values are the natural log of that
// frequency, logps the log of the node's own frequency among its siblings, ranks its order among
// them. Returns the nodes added.
int64_t grow_suffix_tree(const SuffixIndex& index, int32_t matched, int64_t budget, int levels,
                         double min_frequency, DraftTree& tree);

class SharedSuffixIndex;

// With a server-wide index (`shared`, --suffix-scope server), each cycle drafts from whichever
// index matches the longer context (the request's own on a tie), and each generation's output is
// published to the shared index when the next generation begins or the drafter goes.
class SuffixDrafter : public Drafter {
 public:
  explicit SuffixDrafter(const SuffixParams& params = {},
                         int64_t max_nodes = SuffixParams::kMaxNodes,
                         std::shared_ptr<SharedSuffixIndex> shared = nullptr);
  ~SuffixDrafter() override;
  SuffixDrafter(const SuffixDrafter&) = delete;
  SuffixDrafter& operator=(const SuffixDrafter&) = delete;
  std::string name() const override { return "suffix"; }
  void begin(std::span<const int32_t> context, const float* features, int32_t root) override;
  void draft(int64_t max_tokens, DraftTree& tree) override;
  void accept(const DraftTree& tree, std::span<const int32_t> path, const float* features,
              int32_t bonus) override;

  const SuffixIndex& index() const { return index_; }
  // The last draft's match length (0: no context with a continuation, the root alone), and
  // whether it came from the server-wide index.
  int last_match() const { return last_match_; }
  bool last_from_shared() const { return last_from_shared_; }

 private:
  void publish() noexcept;

  SuffixParams p_;
  SuffixIndex index_;  // the prompt and the output so far, the root last
  std::shared_ptr<SharedSuffixIndex> shared_;
  std::vector<int32_t> output_;  // this generation's tokens, the root first (with shared_ only)
  DraftTree shared_tree_;
  int last_match_ = 0;
  bool last_from_shared_ = false;
};

}  // namespace eagle2

// Lookahead decoding (Fu, Bailis, Stoica and Zhang, 2024): no draft model, no data store. Each
// cycle's ONE target forward carries two branches under the root:
//  - the lookahead branch: a window of W columns by N - 1 levels of guessed tokens; the target's
//    outputs at its last level are one Jacobi iteration, and each column read top to bottom plus
//    that output is an n-gram of the iteration trajectory, collected into a pool;
//  - the verification branch: up to G pooled n-grams that start with the root, verified as any
//    draft is (so the method stays lossless).
// The paper's 2-D attention mask is a tree mask: the window's level 0 is a chain from the root
// (column i at depth i), and the token of level j, column i hangs under level j - 1 of the same
// column (the root being level 0 of column 0), at depth i + j; each n-gram is a chain under the
// root. So the engine's tree batch (each row sees the context, its ancestors and itself) is
// exactly that mask, and both branches are one DraftTree whose nodes past `verifiable` (the
// window) are never accepted. The pool grows only from the Jacobi trajectories, never from the
// prompt (that would be prompt lookup under another name); the prompt only seeds the window's
// first guesses. docs/SPECULATIVE.md "Lookahead decoding" has the details and what differs from
// the reference implementations.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "speculative/drafter.h"

namespace eagle2 {

// The spec's lookahead:W:N:G. The defaults (bare "lookahead") are sized for a CPU, where a forward
// of k rows costs nearly k rows of compute past a few rows (8 rows about 2x one on the bundled
// bf16 model): at most (2 + 2) * 2 = 8 rows, the tree size at which EAGLE's chains pay best here,
// with a real window (W >= 2) and real n-grams (N >= 3; N = 2 is plain Jacobi decoding). The
// reference's W = 15, N = 5, G = 15 (120 rows) is written out: lookahead:15:5:15.
struct LookaheadParams {
  int window = 2;         // W: columns of the window, the positions guessed ahead of the root
  int ngram_size = 3;     // N: n-gram length, root included (N - 1 levels, N - 1 tokens verified)
  int verify_ngrams = 2;  // G: at most this many pooled n-grams verified per cycle
  // The largest tree a spec may ask for: (W + G) * (N - 1) tokens, root included.
  static constexpr int64_t kMaxTreeTokens = 512;
  int64_t tree_tokens() const {
    return (int64_t{window} + verify_ngrams) * (int64_t{ngram_size} - 1);
  }
  // Error "<where>: ..." naming the rule unless W >= 1, N >= 2, G >= 0 and the tree fits.
  void validate(const std::string& where) const;
  bool operator==(const LookaheadParams&) const = default;
};

// The n-gram pool: per first token, at most `capacity` distinct n-grams of `length` continuation
// tokens, oldest first; a new one replaces the oldest when full (the freshest trajectories are
// the likeliest to match what comes next), and one already held is not added twice.
class NgramPool {
 public:
  NgramPool(int length, int capacity) : length_(length), capacity_(capacity) {}
  void clear() { by_first_.clear(); }
  // Adds first + continuation (continuation.size() == length); false when it was already held.
  bool add(int32_t first, std::span<const int32_t> continuation);
  int count(int32_t first) const;
  // The k-th n-gram starting with `first` (k < count(first), oldest first): its continuation.
  std::span<const int32_t> get(int32_t first, int k) const;
  int length() const { return length_; }

 private:
  int length_, capacity_;
  std::unordered_map<int32_t, std::vector<int32_t>> by_first_;  // count * length tokens each
};

class LookaheadDrafter : public Drafter {
 public:
  explicit LookaheadDrafter(const LookaheadParams& params);
  std::string name() const override { return "lookahead"; }
  // Clears the pool and seeds the window from the context (deterministically): each generation
  // starts from its own prompt, whatever this drafter decoded before.
  void begin(std::span<const int32_t> context, const float* features, int32_t root) override;
  // Root, the verification trie of the root's pooled n-grams, then the window (`verifiable` marks
  // where it starts). Near the end of the context (max_tokens below the full size) the n-grams
  // come first and the window keeps the columns that still fit, fewer of them each time.
  void draft(int64_t max_tokens, DraftTree& tree) override;
  bool wants_target_tokens() const override { return true; }
  void target_tokens(std::span<const int32_t> argmax_per_node) override;
  // The Jacobi step: pools the window's n-grams and shifts the window one level per committed
  // token (see the .cpp).
  void accept(const DraftTree& tree, std::span<const int32_t> path, const float* features,
              int32_t bonus) override;

  // Inspection and set-up for tests: the window's token at (level, column), the pool.
  int32_t window_token(int level, int column) const;
  void set_window_token(int level, int column, int32_t token);
  NgramPool& pool() { return pool_; }
  const NgramPool& pool() const { return pool_; }
  // Columns of the window in the last tree (W, fewer near the end of the context).
  int columns() const { return columns_; }

 private:
  int levels() const { return p_.ngram_size - 1; }
  int32_t& at(int level, int column) {
    return window_[static_cast<size_t>(level) * static_cast<size_t>(p_.window) +
                   static_cast<size_t>(column)];
  }
  void shift_levels(bool with_outputs);

  LookaheadParams p_;
  NgramPool pool_;
  // [N - 1 levels][W columns]: level j, column i guesses the token at depth i + j (the root is
  // at depth 0; window level 0, column 0 always holds the root itself).
  std::vector<int32_t> window_;
  int32_t root_ = 0;
  int columns_ = 0;
  std::vector<int32_t> last_level_node_;  // per column in the last tree: its last level's node
  std::vector<int32_t> outputs_;          // per column: the target's argmax at that node
  bool have_outputs_ = false;             // target_tokens() came for the last tree
  std::vector<int32_t> scratch_;
};

}  // namespace eagle2

#include "speculative/lookahead_drafter.h"

#include <algorithm>

#include "core/error.h"
#include "core/splitmix64.h"

namespace eagle2 {

void LookaheadParams::validate(const std::string& where) const {
  if (window < 1 || ngram_size < 2 || verify_ngrams < 0 || tree_tokens() > kMaxTreeTokens)
    fail(where, ": lookahead needs W >= 1, N >= 2, G >= 0 and a tree of (W + G) * (N - 1) <= ",
         kMaxTreeTokens, " tokens (got W = ", window, ", N = ", ngram_size, ", G = ", verify_ngrams,
         ")");
}

bool NgramPool::add(int32_t first, std::span<const int32_t> continuation) {
  if (capacity_ <= 0 || static_cast<int>(continuation.size()) != length_) return false;
  std::vector<int32_t>& held = by_first_[first];
  const auto len = static_cast<size_t>(length_);
  for (size_t at = 0; at < held.size(); at += len)
    if (std::equal(continuation.begin(), continuation.end(), held.begin() + at)) return false;
  // Full: the oldest (front) goes. G * (N - 1) tokens at most, so the move is cheap.
  if (held.size() / len >= static_cast<size_t>(capacity_))
    held.erase(held.begin(), held.begin() + len);
  held.insert(held.end(), continuation.begin(), continuation.end());
  return true;
}

int NgramPool::count(int32_t first) const {
  const auto it = by_first_.find(first);
  return it == by_first_.end() ? 0 : static_cast<int>(it->second.size()) / length_;
}

std::span<const int32_t> NgramPool::get(int32_t first, int k) const {
  const std::vector<int32_t>& held = by_first_.at(first);
  return std::span(held).subspan(static_cast<size_t>(k) * static_cast<size_t>(length_),
                                 static_cast<size_t>(length_));
}

LookaheadDrafter::LookaheadDrafter(const LookaheadParams& params)
    : p_(params), pool_(params.ngram_size - 1, params.verify_ngrams) {
  p_.validate("lookahead drafter");
  window_.assign(static_cast<size_t>(levels()) * static_cast<size_t>(p_.window), 0);
}

int32_t LookaheadDrafter::window_token(int level, int column) const {
  if (level < 0 || level >= levels() || column < 0 || column >= p_.window)
    fail("lookahead window: no level ", level, ", column ", column);
  return window_[static_cast<size_t>(level) * static_cast<size_t>(p_.window) +
                 static_cast<size_t>(column)];
}

void LookaheadDrafter::set_window_token(int level, int column, int32_t token) {
  window_token(level, column);  // the range check
  at(level, column) = token;
}

void LookaheadDrafter::begin(std::span<const int32_t> context, const float*, int32_t root) {
  root_ = root;
  pool_.clear();
  have_outputs_ = false;
  columns_ = 0;
  // First guesses: context tokens picked by a fixed hash of (level, column), as the reference's
  // "random tokens of the prompt" option but the same on every run. Any guess is lossless; the
  // prompt's tokens are likelier than arbitrary ids to occur in its continuation, so the first
  // Jacobi iterations have something plausible to refine. They only seed the window: the pool
  // starts empty and receives nothing but trajectories.
  for (size_t k = 0; k < window_.size(); ++k)
    window_[k] = context.empty() ? root : context[splitmix64_mix(k + 1) % context.size()];
}

void LookaheadDrafter::draft(int64_t max_tokens, DraftTree& tree) {
  tree.reset(root_);
  at(0, 0) = root_;  // the root is column 0's level 0: its n-gram starts with it
  const int L = levels();
  // The verification branch: the root's n-grams as a trie (shared prefixes once: verification
  // moves to the first child holding the target's token, so two chains starting with the same
  // token would leave the second unverifiable, and the trie costs fewer rows).
  const int g = pool_.count(root_);
  for (int k = 0; k < g && tree.size() < max_tokens; ++k) {
    int32_t node = 0;
    for (const int32_t token : pool_.get(root_, k)) {
      int32_t child = -1;
      for (int64_t c = node + 1; c < tree.size(); ++c)
        if (tree.parents[static_cast<size_t>(c)] == node &&
            tree.tokens[static_cast<size_t>(c)] == token) {
          child = static_cast<int32_t>(c);
          break;
        }
      if (child < 0) {
        if (tree.size() >= max_tokens) break;  // near the end of the context: a prefix of it
        tree.add(token, node, 0.0f);
        child = static_cast<int32_t>(tree.size() - 1);
      }
      node = child;
    }
  }
  tree.verifiable = tree.size();

  // The lookahead branch, in the columns that fit: c columns take c * L - 1 rows (column 0's
  // level 0 is the root).
  const int64_t room = max_tokens - tree.size();
  columns_ = static_cast<int>(std::min<int64_t>(p_.window, (room + 1) / L));
  // node of (level j, column i), row-major like the window; (0, 0) is the root.
  scratch_.assign(static_cast<size_t>(L) * static_cast<size_t>(std::max(columns_, 1)), 0);
  auto node_of = [&](int j, int i) -> int32_t& {
    return scratch_[static_cast<size_t>(j) * static_cast<size_t>(columns_) +
                    static_cast<size_t>(i)];
  };
  for (int i = 1; i < columns_; ++i) {
    tree.add(at(0, i), node_of(0, i - 1), 0.0f);
    node_of(0, i) = static_cast<int32_t>(tree.size() - 1);
  }
  for (int j = 1; j < L; ++j)
    for (int i = 0; i < columns_; ++i) {
      tree.add(at(j, i), node_of(j - 1, i), 0.0f);
      node_of(j, i) = static_cast<int32_t>(tree.size() - 1);
    }
  last_level_node_.resize(static_cast<size_t>(columns_));
  for (int i = 0; i < columns_; ++i) last_level_node_[static_cast<size_t>(i)] = node_of(L - 1, i);
  have_outputs_ = false;
}

void LookaheadDrafter::target_tokens(std::span<const int32_t> argmax_per_node) {
  outputs_.resize(static_cast<size_t>(columns_));
  for (int i = 0; i < columns_; ++i) {
    const auto node = static_cast<size_t>(last_level_node_[static_cast<size_t>(i)]);
    if (node >= argmax_per_node.size()) return;  // not this drafter's last tree: no update
    outputs_[static_cast<size_t>(i)] = argmax_per_node[node];
  }
  have_outputs_ = true;
}

// One level up for every column: level j takes level j + 1's tokens (each guess keeps its
// position in the text while the root moves one token on, so it sits one depth closer to the
// root). The new last level is the target's output where there is one (the Jacobi update); the
// columns without one (not in the tree, or a committed token past the first) take a copy of their
// new level 0, as the reference does: a guess at another position, refined by the next iterations.
void LookaheadDrafter::shift_levels(bool with_outputs) {
  const int L = levels();
  const auto W = static_cast<size_t>(p_.window);
  std::copy(window_.begin() + static_cast<std::ptrdiff_t>(W), window_.end(), window_.begin());
  for (int i = 0; i < p_.window; ++i)
    at(L - 1, i) = with_outputs && i < columns_ ? outputs_[static_cast<size_t>(i)] : at(0, i);
}

// The target's outputs at the last level complete one Jacobi iteration. Column i, read from level
// 0 down, with its output appended, is an n-gram of the trajectory at depths i .. i + N - 1 (each
// token was produced, or guessed, for its position; the last by the target from all the ones
// before it): pooled under its first token, W of them per cycle. Then the window moves with the
// text: one shift per committed token (the accepted ones and the bonus), the first with the
// outputs, the rest with copies (the reference's rule; it keeps each guess at its position).
void LookaheadDrafter::accept(const DraftTree&, std::span<const int32_t> path, const float*,
                              int32_t bonus) {
  const int L = levels();
  if (have_outputs_) {
    scratch_.resize(static_cast<size_t>(L));
    for (int i = 0; i < columns_; ++i) {
      for (int j = 1; j < L; ++j) scratch_[static_cast<size_t>(j - 1)] = at(j, i);
      scratch_[static_cast<size_t>(L - 1)] = outputs_[static_cast<size_t>(i)];
      pool_.add(at(0, i), scratch_);
    }
  }
  shift_levels(have_outputs_);
  for (size_t k = 1; k < path.size(); ++k) shift_levels(false);
  have_outputs_ = false;
  root_ = bonus;
}

}  // namespace eagle2

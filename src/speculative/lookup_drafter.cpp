#include "speculative/lookup_drafter.h"

#include <algorithm>

#include "core/error.h"

namespace eagle2 {

LookupDrafter::LookupDrafter(int max_ngram, int min_ngram, int max_draft)
    : max_ngram_(max_ngram), min_ngram_(min_ngram), max_draft_(max_draft) {
  if (min_ngram < 1 || max_ngram < min_ngram)
    fail("prompt lookup: n-gram sizes must satisfy 1 <= min <= max (got ", min_ngram, ", ",
         max_ngram, ")");
  if (max_draft < 0) fail("prompt lookup: draft length must be >= 0");
}

void LookupDrafter::begin(std::span<const int32_t> context, const float*, int32_t root) {
  history_.assign(context.begin(), context.end());
  history_.push_back(root);
}

void LookupDrafter::draft(int64_t max_tokens, DraftTree& tree) {
  tree.reset(history_.back());
  const int64_t room = std::min<int64_t>(max_draft_, max_tokens - 1);
  if (room <= 0) return;
  const auto n = static_cast<int64_t>(history_.size());
  for (int g = max_ngram_; g >= min_ngram_; --g) {
    if (g >= n) continue;
    const int32_t* suffix = &history_[n - g];
    // Latest earlier match: scan backwards from the occurrence just before the suffix itself.
    for (int64_t start = n - g - 1; start >= 0; --start) {
      if (!std::equal(suffix, suffix + g, &history_[start])) continue;
      const int64_t from = start + g;
      const int64_t len = std::min(room, n - from);
      for (int64_t i = 0; i < len; ++i)
        tree.add(history_[from + i], static_cast<int32_t>(tree.size() - 1), 0.0f);
      return;
    }
  }
}

void LookupDrafter::accept(const DraftTree& tree, std::span<const int32_t> path, const float*,
                           int32_t bonus) {
  for (size_t j = 1; j < path.size(); ++j) history_.push_back(tree.tokens[path[j]]);
  history_.push_back(bonus);
}

}  // namespace eagle2

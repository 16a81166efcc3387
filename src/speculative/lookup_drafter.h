// Prompt lookup decoding (the draft-free baseline): find the latest earlier occurrence of the
// last n tokens (n = max_ngram down to min_ngram) in the prompt and output so far, and propose the
// tokens that followed it as a chain.
#pragma once

#include "speculative/drafter.h"

namespace eagle2 {

class LookupDrafter : public Drafter {
 public:
  LookupDrafter(int max_ngram = 3, int min_ngram = 1, int max_draft = 7);
  std::string name() const override { return "lookup"; }
  void begin(std::span<const int32_t> context, const float* features, int32_t root) override;
  void draft(int64_t max_tokens, DraftTree& tree) override;
  void accept(const DraftTree& tree, std::span<const int32_t> path, const float* features,
              int32_t bonus) override;

 private:
  int max_ngram_, min_ngram_, max_draft_;
  std::vector<int32_t> history_;  // every token so far, the root last
};

}  // namespace eagle2

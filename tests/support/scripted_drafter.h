// A drafter for tests: proposes whatever tree a script builds from the token history, so that
// full acceptance, partial acceptance and total rejection can be exercised on purpose.
#pragma once

#include <functional>
#include <random>

#include "speculative/drafter.h"

namespace eagle2::test {

class ScriptedDrafter : public Drafter {
 public:
  // script(history (root last), max_tokens, tree): tree arrives reset to the root.
  using Script = std::function<void(const std::vector<int32_t>&, int64_t, DraftTree&)>;
  explicit ScriptedDrafter(Script script) : script_(std::move(script)) {}
  std::string name() const override { return "scripted"; }
  void begin(std::span<const int32_t> context, const float*, int32_t root) override {
    history_.assign(context.begin(), context.end());
    history_.push_back(root);
  }
  void draft(int64_t max_tokens, DraftTree& tree) override {
    tree.reset(history_.back());
    script_(history_, max_tokens, tree);
  }
  void accept(const DraftTree& tree, std::span<const int32_t> path, const float*,
              int32_t bonus) override {
    for (size_t j = 1; j < path.size(); ++j) history_.push_back(tree.tokens[path[j]]);
    history_.push_back(bonus);
  }

 private:
  Script script_;
  std::vector<int32_t> history_;
};

// A script that knows the true continuation (`truth`: prompt + plain greedy output) and proposes
// its next L tokens (L random in [0, depth]) as a chain, with wrong siblings before and after the
// right token at random levels, and a wrong branch hanging off the root sometimes.
ScriptedDrafter::Script oracle_script(std::vector<int32_t> truth, int depth, int64_t vocab,
                                      uint32_t seed);

// Random trees, 3 levels: 2-4 children per node with random tokens, duplicate siblings sometimes,
// values from a draft probability of 0.3 per level (so rules that read a q from the values differ
// from q = 1). Most of their nodes are wrong, so the bonus is drawn often.
ScriptedDrafter::Script random_tree_script(int64_t vocab, uint32_t seed);

}  // namespace eagle2::test

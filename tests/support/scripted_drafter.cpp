#include "support/scripted_drafter.h"

#include <cmath>
#include <memory>

namespace eagle2::test {

ScriptedDrafter::Script oracle_script(std::vector<int32_t> truth, int depth, int64_t vocab,
                                      uint32_t seed) {
  auto rng = std::make_shared<std::mt19937>(seed);
  return [truth = std::move(truth), depth, vocab, rng](const std::vector<int32_t>& history,
                                                       int64_t max_tokens, DraftTree& tree) {
    std::mt19937& r = *rng;
    const size_t at = history.size();  // truth[at] is the token after the root
    auto wrong = [&](int32_t right) {
      int32_t w = static_cast<int32_t>(r() % vocab);
      return w == right ? static_cast<int32_t>((w + 1) % vocab) : w;
    };
    const int len = static_cast<int>(r() % (depth + 1));
    int32_t parent = 0;
    for (int l = 0; l < len && at + l < truth.size(); ++l) {
      if (tree.size() + 3 > max_tokens) break;
      const int32_t right = truth[at + l];
      if (r() % 3 == 0) tree.add(wrong(right), parent, -1.0f);  // a wrong sibling first
      tree.add(right, parent, -0.5f);
      const int32_t right_node = static_cast<int32_t>(tree.size() - 1);
      if (r() % 3 == 0) tree.add(wrong(right), parent, -2.0f);  // and one after
      parent = right_node;
    }
    if (tree.size() < max_tokens && r() % 2 == 0)
      tree.add(wrong(at < truth.size() ? truth[at] : 0), 0, -3.0f);
  };
}

ScriptedDrafter::Script random_tree_script(int64_t vocab, uint32_t seed) {
  auto rng = std::make_shared<std::mt19937>(seed);
  return [vocab, rng](const std::vector<int32_t>&, int64_t max_tokens, DraftTree& tree) {
    std::mt19937& r = *rng;
    std::vector<int32_t> frontier = {0};
    for (int depth = 0; depth < 3 && tree.size() < max_tokens; ++depth) {
      std::vector<int32_t> next;
      for (int32_t parent : frontier) {
        const int n_children = 2 + static_cast<int>(r() % 3);
        int32_t prev = -1;
        for (int c = 0; c < n_children && tree.size() < max_tokens; ++c) {
          int32_t t = static_cast<int32_t>(r() % vocab);
          if (prev >= 0 && r() % 4 == 0) t = prev;  // a duplicate sibling
          prev = t;
          tree.add(t, parent, tree.values[parent] + std::log(0.3f));
          next.push_back(static_cast<int32_t>(tree.size() - 1));
        }
      }
      frontier = next;
    }
  };
}

}  // namespace eagle2::test

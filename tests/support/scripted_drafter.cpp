#include "support/scripted_drafter.h"

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

}  // namespace eagle2::test

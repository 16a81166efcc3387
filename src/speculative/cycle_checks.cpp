#include "speculative/cycle_checks.h"

#include "core/error.h"

namespace eagle2 {

void check_drafted_tree(const DraftTree& tree, int64_t vocab, int32_t root, int64_t room,
                        const std::string& drafter) {
  const std::string source = "drafter '" + drafter + "' returned an invalid tree";
  validate_draft_tree(tree, vocab, source);
  if (tree.tokens[0] != root)
    fail(source, ": its root is token ", tree.tokens[0], ", expected the current root ", root);
  if (tree.size() > room)
    fail(source, ": it has ", tree.size(), " nodes, the context has room for ", room);
}

void check_verdict(const Verdict& v, const DraftTree& tree, int64_t vocab) {
  if (v.path.empty() || v.path[0] != 0)
    fail("verification returned a path that does not start at the root");
  for (size_t j = 1; j < v.path.size(); ++j) {
    const int32_t node = v.path[j];
    if (node <= 0 || node >= tree.size() ||
        tree.parents[static_cast<size_t>(node)] != v.path[j - 1])
      fail("verification returned an invalid path: node ", node, " at step ", j,
           " is not a child of node ", v.path[j - 1]);
    if (node >= tree.verifiable_size())
      fail("verification returned an invalid path: node ", node, " at step ", j,
           " is past the tree's ", tree.verifiable_size(), " verifiable nodes");
  }
  if (v.bonus < 0 || v.bonus >= vocab)
    fail("verification returned bonus token ", v.bonus, " outside the vocabulary [0, ", vocab, ")");
}

}  // namespace eagle2

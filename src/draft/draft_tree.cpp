#include "draft/draft_tree.h"

#include "core/error.h"

namespace eagle2 {

std::vector<int32_t> DraftTree::depths() const {
  std::vector<int32_t> d(parents.size(), 0);
  for (size_t i = 1; i < parents.size(); ++i) d[i] = d[parents[i]] + 1;
  return d;
}

void validate_draft_tree(const DraftTree& tree, int64_t vocab, std::string_view source) {
  if (tree.tokens.empty()) fail(source, ": the tree is empty (it needs at least the root)");
  if (tree.parents.size() != tree.tokens.size())
    fail(source, ": ", tree.tokens.size(), " tokens but ", tree.parents.size(), " parents");
  if (tree.parents[0] != -1)
    fail(source, ": the root (node 0) has parent ", tree.parents[0], ", expected -1");
  for (size_t i = 1; i < tree.parents.size(); ++i) {
    const int32_t p = tree.parents[i];
    if (p < 0 || static_cast<size_t>(p) >= i)
      fail(source, ": node ", i, " has parent ", p,
           " (every node after the root needs a parent in [0, ", i, "))");
  }
  for (size_t i = 0; i < tree.tokens.size(); ++i)
    if (tree.tokens[i] < 0 || tree.tokens[i] >= vocab)
      fail(source, ": node ", i, " has token id ", tree.tokens[i], " outside the vocabulary [0, ",
           vocab, ")");
  if (tree.verifiable != -1 && (tree.verifiable < 1 || tree.verifiable > tree.size()))
    fail(source, ": ", tree.verifiable, " verifiable nodes of ", tree.size(),
         " (expected -1 for all, or 1 to the tree's size: the root is always verifiable)");
  if (!tree.sources.empty() && tree.sources.size() != tree.tokens.size())
    fail(source, ": ", tree.sources.size(), " node sources for ", tree.size(), " nodes");
}

}  // namespace eagle2

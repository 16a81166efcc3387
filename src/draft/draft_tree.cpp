#include "draft/draft_tree.h"

namespace eagle2 {

std::vector<int32_t> DraftTree::depths() const {
  std::vector<int32_t> d(parents.size(), 0);
  for (size_t i = 1; i < parents.size(); ++i) d[i] = d[parents[i]] + 1;
  return d;
}

}  // namespace eagle2

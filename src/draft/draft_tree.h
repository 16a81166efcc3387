// A draft tree as the verifier sees it: node 0 is the root (the token the target produced last,
// already emitted, not yet cached); parents[i] < i; node i sits at target position n + depth(i).
// Children of a node appear in draft-rank order (most likely first), which is the order in which
// sampling verification tries them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace eagle2 {

struct DraftTree {
  std::vector<int32_t> tokens;
  std::vector<int32_t> parents;  // -1 for the root
  std::vector<float> values;     // sum of draft log-probs along the root-to-node path (root 0)

  int64_t size() const { return static_cast<int64_t>(tokens.size()); }
  void reset(int32_t root) {
    tokens.assign(1, root);
    parents.assign(1, -1);
    values.assign(1, 0.0f);
  }
  void add(int32_t token, int32_t parent, float value) {
    tokens.push_back(token);
    parents.push_back(parent);
    values.push_back(value);
  }
  std::vector<int32_t> depths() const;
};

}  // namespace eagle2

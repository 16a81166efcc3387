#include "model/batch.h"

#include <algorithm>

#include "core/error.h"

namespace eagle2 {

Batch Batch::causal(std::span<const int32_t> tokens, int32_t start_position) {
  Batch b;
  b.tokens.assign(tokens.begin(), tokens.end());
  const auto n = static_cast<int32_t>(tokens.size());
  b.positions.resize(n);
  b.parents.resize(n);
  for (int32_t i = 0; i < n; ++i) {
    b.positions[i] = start_position + i;
    b.parents[i] = i - 1;
  }
  return b;
}

Batch Batch::tree(std::span<const int32_t> tokens, std::span<const int32_t> parents,
                  int32_t root_position) {
  if (tokens.size() != parents.size())
    fail("tree batch: ", tokens.size(), " tokens but ", parents.size(), " parents");
  Batch b;
  b.tokens.assign(tokens.begin(), tokens.end());
  b.parents.assign(parents.begin(), parents.end());
  for (size_t i = 0; i < parents.size(); ++i) {
    if (parents[i] < -1 || parents[i] >= static_cast<int32_t>(i))
      fail("tree batch: node ", i, " has parent ", parents[i], " (parents must precede children)");
  }
  const std::vector<int32_t> d = b.depths();
  b.positions.resize(d.size());
  for (size_t i = 0; i < d.size(); ++i) b.positions[i] = root_position + d[i];
  return b;
}

void Batch::validate(int64_t vocab_size) const {
  if (positions.size() != tokens.size() || parents.size() != tokens.size())
    fail("batch: ", tokens.size(), " tokens, ", positions.size(), " positions and ", parents.size(),
         " parents must agree");
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (tokens[i] < 0 || tokens[i] >= vocab_size)
      fail("batch: token id ", tokens[i], " at row ", i, " is outside the vocabulary [0, ",
           vocab_size, ")");
    if (parents[i] < -1 || parents[i] >= static_cast<int32_t>(i))
      fail("batch: row ", i, " has parent ", parents[i], " (parents must precede children)");
    if (positions[i] < 0) fail("batch: row ", i, " has negative position ", positions[i]);
  }
}

std::vector<int32_t> Batch::depths() const {
  std::vector<int32_t> d(parents.size(), 0);
  for (size_t i = 0; i < parents.size(); ++i) d[i] = parents[i] < 0 ? 0 : d[parents[i]] + 1;
  return d;
}

void Batch::visible_rows(int64_t i, std::vector<int32_t>& out) const {
  out.clear();
  for (int32_t r = static_cast<int32_t>(i); r >= 0; r = parents[r]) out.push_back(r);
  std::reverse(out.begin(), out.end());
}

}  // namespace eagle2

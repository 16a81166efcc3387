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

void Batch::validate(int64_t vocab_size, int64_t n_sequences) const {
  if (positions.size() != tokens.size() || parents.size() != tokens.size())
    fail("batch: ", tokens.size(), " tokens, ", positions.size(), " positions and ", parents.size(),
         " parents must agree");
  if (!sequences.empty() && sequences.size() != tokens.size())
    fail("batch: ", tokens.size(), " tokens but ", sequences.size(), " sequence ids");
  for (size_t i = 0; i < sequences.size(); ++i) {
    if (sequences[i] < 0 || sequences[i] >= n_sequences)
      fail("batch: row ", i, " names sequence ", sequences[i], ", outside [0, ", n_sequences, ")");
    if (parents[i] >= 0 && parents[i] < static_cast<int32_t>(i) &&
        sequences[parents[i]] != sequences[i])
      fail("batch: row ", i, " of sequence ", sequences[i], " has parent ", parents[i],
           " of sequence ", sequences[parents[i]]);
  }
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (tokens[i] < 0 || tokens[i] >= vocab_size)
      fail("batch: token id ", tokens[i], " at row ", i, " is outside the vocabulary [0, ",
           vocab_size, ")");
    if (parents[i] < -1 || parents[i] >= static_cast<int32_t>(i))
      fail("batch: row ", i, " has parent ", parents[i], " (parents must precede children)");
    if (positions[i] < 0) fail("batch: row ", i, " has negative position ", positions[i]);
  }
}

void Batch::append(const Batch& other, int32_t sequence) {
  const auto base = static_cast<int32_t>(tokens.size());
  if (sequences.empty()) sequences.assign(tokens.size(), 0);
  for (int64_t i = 0; i < other.size(); ++i) {
    tokens.push_back(other.tokens[i]);
    positions.push_back(other.positions[i]);
    parents.push_back(other.parents[i] < 0 ? -1 : base + other.parents[i]);
    sequences.push_back(sequence);
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

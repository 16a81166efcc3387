#include "model/row_logprobs.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace eagle2 {

RowLogprobs row_logprobs(const float* logits, int64_t vocab, int32_t top, int32_t token) {
  double max = logits[0];
  for (int64_t v = 1; v < vocab; ++v) max = std::max<double>(max, logits[v]);
  double sum = 0;
  for (int64_t v = 0; v < vocab; ++v) sum += std::exp(static_cast<double>(logits[v]) - max);
  const double lse = max + std::log(sum);
  RowLogprobs row;
  if (token >= 0) row.chosen = logits[token] - lse;
  if (top <= 0) return row;
  std::vector<int32_t> ids(static_cast<size_t>(vocab));
  std::iota(ids.begin(), ids.end(), 0);
  std::partial_sort(ids.begin(), ids.begin() + top, ids.end(), [&](int32_t a, int32_t b) {
    return logits[a] > logits[b] || (logits[a] == logits[b] && a < b);
  });
  row.top.reserve(static_cast<size_t>(top));
  for (int32_t i = 0; i < top; ++i) {
    const int32_t id = ids[static_cast<size_t>(i)];
    row.top.emplace_back(id, logits[id] - lse);
  }
  return row;
}

}  // namespace eagle2

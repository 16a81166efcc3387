#include "model/row_logprobs.h"

#include <algorithm>
#include <cmath>

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
  // The `top` best in one pass with a heap of `top` ids (the worst kept on top), not a sort of
  // the whole vocabulary: a server computes this per generated token inside the batch's step.
  // `better` is a strict total order (ids break ties), so the result is the same as sorting.
  const auto better = [&](int32_t a, int32_t b) {
    return logits[a] > logits[b] || (logits[a] == logits[b] && a < b);
  };
  std::vector<int32_t> heap;
  heap.reserve(static_cast<size_t>(top));
  for (int32_t v = 0; v < static_cast<int32_t>(vocab); ++v) {
    if (static_cast<int32_t>(heap.size()) < top) {
      heap.push_back(v);
      std::push_heap(heap.begin(), heap.end(), better);
    } else if (better(v, heap.front())) {
      std::pop_heap(heap.begin(), heap.end(), better);
      heap.back() = v;
      std::push_heap(heap.begin(), heap.end(), better);
    }
  }
  std::sort_heap(heap.begin(), heap.end(), better);  // best first
  row.top.reserve(heap.size());
  for (const int32_t id : heap) row.top.emplace_back(id, logits[id] - lse);
  return row;
}

}  // namespace eagle2

// model/row_logprobs: the log-softmax of one logits row and its top-N, against a plain reference
// (a full sort of the vocabulary, ties to the lower id as greedy decoding picks), on rows with many
// equal logits, for every N from 0 to the vocabulary.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <vector>

#include "model/row_logprobs.h"

namespace eagle2 {
namespace {

TEST(RowLogprobs, TopNAndLogSoftmaxEqualAFullSort) {
  std::mt19937 rng(5);
  for (int round = 0; round < 20; ++round) {
    const int vocab = 1 + static_cast<int>(rng() % 300);
    std::vector<float> logits(static_cast<size_t>(vocab));
    // Few distinct values: many ties, which the order must break by id.
    for (float& x : logits) x = static_cast<float>(static_cast<int>(rng() % 7) - 3) * 1.5f;
    double max = *std::max_element(logits.begin(), logits.end()), sum = 0;
    for (const float x : logits) sum += std::exp(static_cast<double>(x) - max);
    const double lse = max + std::log(sum);
    std::vector<int32_t> order(static_cast<size_t>(vocab));
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
      return logits[a] > logits[b] || (logits[a] == logits[b] && a < b);
    });
    for (int top : {0, 1, 2, 5, 20, vocab}) {
      top = std::min(top, vocab);
      const int32_t token = static_cast<int32_t>(rng() % static_cast<unsigned>(vocab));
      const RowLogprobs r = row_logprobs(logits.data(), vocab, top, token);
      EXPECT_EQ(r.chosen, logits[token] - lse);
      ASSERT_EQ(static_cast<int>(r.top.size()), top);
      for (int i = 0; i < top; ++i) {
        EXPECT_EQ(r.top[i].first, order[i]) << "vocab " << vocab << " top " << top << " at " << i;
        EXPECT_EQ(r.top[i].second, logits[order[i]] - lse);
      }
    }
  }
}

}  // namespace
}  // namespace eagle2

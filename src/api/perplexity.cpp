// eagle2/perplexity.h over model/llama_model.h.
#include "eagle2/perplexity.h"

#include <algorithm>
#include <cmath>

#include "api/handles.h"
#include "core/error.h"
#include "model/batch.h"

namespace eagle2::api {

namespace {

// -log softmax(logits)[token], in double: max + log(sum exp(l - max)) - l[token]. The max keeps
// every exp at most 1, so nothing overflows however large the logits are.
double nll_of(const float* logits, int64_t vocab, int32_t token) {
  const float top = *std::max_element(logits, logits + vocab);
  double sum = 0;
  for (int64_t v = 0; v < vocab; ++v) sum += std::exp(static_cast<double>(logits[v]) - top);
  return static_cast<double>(top) + std::log(sum) - static_cast<double>(logits[token]);
}

}  // namespace

std::vector<double> token_nlls(Model& model, std::span<const int32_t> tokens, int64_t first,
                               int64_t batch, Threads& threads) {
  const auto n = static_cast<int64_t>(tokens.size());
  if (n < 2) fail("token_nlls: ", n, " tokens; scoring needs at least 2");
  if (first < 0 || first >= n - 1)
    fail("token_nlls: the first scored row ", first, " is outside [0, ", n - 1, ")");
  if (batch < 1) fail("token_nlls: the batch size must be at least 1 (got ", batch, ")");
  LlamaModel& m = *model.impl().model;
  const int64_t vocab = m.config().vocab_size;
  if (n > m.config().max_position_embeddings)
    fail(n, " tokens exceed the model's context of ", m.config().max_position_embeddings,
         " positions");
  eagle2::KvCache kv = m.make_cache(n);
  ForwardResult out;
  std::vector<int32_t> rows;
  std::vector<double> nlls;
  nlls.reserve(static_cast<size_t>(n - 1 - first));
  // Rows [begin, end) in one forward on top of the rows before them; row i's logits predict
  // token i + 1, so the last token is input only.
  for (int64_t begin = 0; begin < n; begin += batch) {
    const int64_t end = std::min(n, begin + batch);
    rows.clear();
    for (int64_t i = std::max(begin, first); i < std::min(end, n - 1); ++i)
      rows.push_back(static_cast<int32_t>(i - begin));
    const Batch b =
        Batch::causal(tokens.subspan(static_cast<size_t>(begin), static_cast<size_t>(end - begin)),
                      static_cast<int32_t>(begin));
    m.forward(b, kv, rows, out, threads.impl().pool);
    kv.keep_all();
    for (size_t j = 0; j < rows.size(); ++j) {
      const int64_t i = begin + rows[j];
      nlls.push_back(nll_of(&out.logits[j * static_cast<size_t>(vocab)], vocab, tokens[i + 1]));
    }
  }
  return nlls;
}

PerplexityEstimate estimate_perplexity(std::span<const double> nlls) {
  if (nlls.empty()) fail("perplexity: no scored tokens");
  PerplexityEstimate e;
  e.count = static_cast<int64_t>(nlls.size());
  double sum = 0, sum2 = 0;
  for (double x : nlls) sum += x, sum2 += x * x;
  e.mean_nll = sum / static_cast<double>(e.count);
  e.ppl = std::exp(e.mean_nll);
  const double var = sum2 / static_cast<double>(e.count) - e.mean_nll * e.mean_nll;
  if (e.count > 1 && var > 0) e.error = e.ppl * std::sqrt(var / static_cast<double>(e.count - 1));
  return e;
}

}  // namespace eagle2::api

// eagle2/logprobs.h over model/llama_model.h.
#include "eagle2/logprobs.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <span>

#include "api/handles.h"
#include "core/error.h"
#include "model/batch.h"
#include "model/row_logprobs.h"

namespace eagle2::api {

namespace {

// Rows whose logits one forward returns: bounds the logits buffer (rows x vocab floats) whatever
// the path's length.
constexpr int64_t kRowsPerForward = 64;

PositionLogprobs position_logprobs(const float* logits, int64_t vocab, int32_t top, int32_t next) {
  const RowLogprobs r = row_logprobs(logits, vocab, top, next);
  PositionLogprobs row;
  for (const auto& [id, logprob] : r.top) row.top.push_back({id, logprob});
  if (next >= 0) row.next_logprob = r.chosen;
  return row;
}

}  // namespace

std::vector<PositionLogprobs> path_logprobs(Model& model, const std::vector<int32_t>& tokens,
                                            int32_t top, Threads& threads) {
  LlamaModel& m = *model.impl().model;
  const int64_t vocab = m.config().vocab_size;
  const auto n = static_cast<int64_t>(tokens.size());
  if (n == 0) fail("logprobs: the token path is empty");
  if (top < 1 || top > vocab) fail("logprobs: top ", top, " is not in [1, ", vocab, "]");
  for (int64_t i = 0; i < n; ++i)
    if (tokens[static_cast<size_t>(i)] < 0 || tokens[static_cast<size_t>(i)] >= vocab)
      fail("logprobs: token ", tokens[static_cast<size_t>(i)], " at position ", i,
           " is not in the vocabulary [0, ", vocab, ")");
  if (n > m.config().max_position_embeddings)
    fail("logprobs: the path has ", n, " tokens but the model's context is ",
         m.config().max_position_embeddings);
  eagle2::KvCache kv = m.make_cache(n);
  ThreadPool& pool = threads.impl().pool;
  ForwardResult out;
  std::vector<PositionLogprobs> rows;
  rows.reserve(static_cast<size_t>(n));
  for (int64_t begin = 0; begin < n; begin += kRowsPerForward) {
    const int64_t len = std::min(kRowsPerForward, n - begin);
    const Batch b = Batch::causal(
        std::span(tokens).subspan(static_cast<size_t>(begin), static_cast<size_t>(len)),
        static_cast<int32_t>(begin));
    std::vector<int32_t> logit_rows(static_cast<size_t>(len));
    std::iota(logit_rows.begin(), logit_rows.end(), 0);
    m.forward(b, kv, logit_rows, out, pool);
    kv.keep_all();
    for (int64_t r = 0; r < len; ++r) {
      const int64_t i = begin + r;
      const int32_t next = i + 1 < n ? tokens[static_cast<size_t>(i + 1)] : -1;
      rows.push_back(position_logprobs(out.logits.data() + r * vocab, vocab, top, next));
    }
  }
  return rows;
}

}  // namespace eagle2::api

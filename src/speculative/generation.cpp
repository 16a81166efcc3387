#include "speculative/generation.h"

#include <algorithm>
#include <chrono>

#include "core/error.h"
#include "core/stopwatch.h"

namespace eagle2 {

bool is_eos(const LlamaConfig& cfg, int32_t token) {
  return std::find(cfg.eos_token_ids.begin(), cfg.eos_token_ids.end(), token) !=
         cfg.eos_token_ids.end();
}

void prefill(LlamaModel& model, KvCache& kv, const std::vector<int32_t>& tokens, int64_t chunk,
             ForwardResult& out, ThreadPool& pool, std::span<const int32_t> capture_layers) {
  if (tokens.empty()) fail("prefill: the prompt is empty");
  const auto n = static_cast<int64_t>(tokens.size());
  if (kv.size() + n > kv.capacity())
    fail("the prompt has ", n, " tokens but the context holds ", kv.capacity() - kv.size(),
         " more (raise --ctx)");
  chunk = std::max<int64_t>(1, chunk);
  const int64_t d = model.config().hidden_size;
  std::vector<float> hidden, captured;
  hidden.reserve(static_cast<size_t>(n * d));
  // Every row of every chunk, when layers are asked for.
  std::vector<int32_t> all_rows;
  if (!capture_layers.empty()) {
    captured.reserve(static_cast<size_t>(n * d) * capture_layers.size());
    all_rows.resize(static_cast<size_t>(std::min(chunk, n)));
    for (size_t i = 0; i < all_rows.size(); ++i) all_rows[i] = static_cast<int32_t>(i);
  }
  for (int64_t begin = 0; begin < n; begin += chunk) {
    const int64_t len = std::min(chunk, n - begin);
    Batch b = Batch::causal(std::span(tokens).subspan(begin, len), static_cast<int32_t>(kv.size()));
    const bool last = begin + len == n;
    const int32_t last_row = static_cast<int32_t>(len - 1);
    const std::span<const int32_t> rows =
        all_rows.empty() ? std::span<const int32_t>() : std::span(all_rows).first(len);
    const ForwardCapture capture{.layers = capture_layers, .rows = rows};
    model.forward(b, kv, last ? std::span<const int32_t>(&last_row, 1) : std::span<const int32_t>(),
                  out, pool, capture);
    kv.keep_all();
    hidden.insert(hidden.end(), out.hidden.begin(), out.hidden.end());
    captured.insert(captured.end(), out.captured.begin(), out.captured.end());
  }
  out.hidden = std::move(hidden);
  out.captured = std::move(captured);
}

GenerationStats generate_plain(LlamaModel& model, KvCache& kv, const std::vector<int32_t>& prompt,
                               const GenerationOptions& options, ThreadPool& pool,
                               const TokenCallback& on_token) {
  options.sampling.validate();
  GenerationStats stats;
  stats.prompt_tokens = static_cast<int64_t>(prompt.size());
  const LlamaConfig& cfg = model.config();
  ForwardResult out;

  auto t0 = SteadyClock::now();
  prefill(model, kv, prompt, options.prefill_chunk, out, pool);
  stats.prefill_seconds = seconds_since(t0);

  t0 = SteadyClock::now();
  const int32_t row0 = 0;
  while (stats.new_tokens < options.max_new_tokens) {
    // Output position new_tokens: the same number the speculative loop samples this token with.
    const int32_t token = sample_token(out.logits.data(), cfg.vocab_size, options.sampling,
                                       static_cast<uint64_t>(stats.new_tokens));
    if (options.stop_at_eos && is_eos(cfg, token)) {
      stats.stopped_at_eos = true;
      break;
    }
    ++stats.new_tokens;
    if (!on_token(token)) break;
    if (stats.new_tokens == options.max_new_tokens) break;
    if (kv.size() + 1 > kv.capacity()) {
      stats.stopped_at_context = true;
      break;
    }
    Batch b = Batch::causal(std::span(&token, 1), static_cast<int32_t>(kv.size()));
    model.forward(b, kv, std::span(&row0, 1), out, pool);
    kv.keep_all();
    ++stats.target_forwards;
  }
  stats.decode_seconds = seconds_since(t0);
  return stats;
}

}  // namespace eagle2

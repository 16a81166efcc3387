// Speculative generation with an EAGLE draft head, through the public API only.
//
//   speculative_generate MODEL_DIR HEAD_DIR PROMPT [MAX_NEW_TOKENS]
//   e.g. speculative_generate models/code-lm models/code-lm-eagle "def fib(n):" 64
//
// Prints the prompt and its greedy completion on stdout, streamed as the tokens are committed
// (exactly what `eagle2 generate -m MODEL_DIR -p PROMPT -n MAX_NEW_TOKENS` prints: speculative
// decoding is lossless), then the acceptance statistics on stderr. Exit status 0 on success, 2 for
// bad arguments, 1 with one "error: ..." line for anything the library refuses (a missing model, a
// head that does not fit it, a prompt too long).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <optional>
#include <string>
#include <vector>

#include "eagle2/drafter.h"
#include "eagle2/error.h"
#include "eagle2/generate.h"
#include "eagle2/head.h"
#include "eagle2/model.h"
#include "eagle2/parse_number.h"
#include "eagle2/runtime.h"
#include "eagle2/tokenizer.h"

namespace {

using namespace eagle2::api;

int usage(const char* program) {
  std::fprintf(
      stderr,
      "usage: %s MODEL_DIR HEAD_DIR PROMPT [MAX_NEW_TOKENS]\n"
      "  MODEL_DIR       a LLaMA-family model folder (config.json, safetensors, tokenizer)\n"
      "  HEAD_DIR        an EAGLE draft head trained for that model\n"
      "  PROMPT          the text to complete\n"
      "  MAX_NEW_TOKENS  tokens to generate at most (default 64)\n",
      program);
  return 2;
}

int run(const std::string& model_dir, const std::string& head_dir, const std::string& text,
        int64_t max_new_tokens) {
  // The target model (weights memory-mapped), its tokenizer, and the draft head. The head keeps a
  // reference to the model: the model must outlive it.
  Model model = Model::load(model_dir);
  const Tokenizer tokenizer = Tokenizer::open(model_dir);
  Head head = Head::load(head_dir, model);
  // A head folder may hold draft_vocab.tsv: drafting from its most frequent tokens only makes the
  // head's output layer smaller. The output is unchanged either way (the target decides).
  const int64_t draft_vocab = head.default_draft_vocab(head_dir, -1);
  if (draft_vocab > 0) head.restrict_vocab(head_dir + "/draft_vocab.tsv", draft_vocab);

  // BOS as the tokenizer's config asks.
  const std::vector<int32_t> prompt = tokenizer.encode(text, tokenizer.adds_bos());
  // The KV cache holds the prompt and everything generated: the CLI's default context.
  const int64_t context = std::min<int64_t>(2048, model.config().max_position_embeddings);
  KvCache kv(model, context);  // Error if the model cannot have that many positions
  Threads threads(default_thread_count());

  // EAGLE-2's dynamic draft tree with its default parameters (60 tokens per tree, depth 5,
  // 10 children per node): the spec strings are those of `eagle2 generate --spec`.
  const DrafterSpec spec = parse_drafter_spec("dynamic");
  const float temperature = 0.0f;  // greedy; the drafter is made for the temperature it serves
  Drafter drafter = Drafter::make(spec, &head, threads, context, temperature);

  GenerateOptions options;
  options.max_new_tokens = max_new_tokens;
  options.sampling.temperature = temperature;

  // Stream the text: TextStream turns token ids into text without splitting a UTF-8 character and
  // with the spacing the prompt's last token calls for.
  TextStream stream(tokenizer, prompt);
  std::fputs(text.c_str(), stdout);
  const Stats stats =
      generate_speculative(model, kv, drafter, prompt, options, threads, [&](int32_t token) {
        std::fputs(stream.push(token).c_str(), stdout);
        std::fflush(stdout);
        return true;  // false would stop here
      });
  std::fputs(stream.finish().c_str(), stdout);
  std::fputs("\n", stdout);

  // tau: tokens committed per target forward (1 for plain decoding); the histogram counts the
  // cycles by the number of draft tokens the target accepted.
  std::fprintf(stderr, "drafter %s: %lld tokens in %lld target forwards, tau %.3f\n",
               drafter.name().c_str(), static_cast<long long>(stats.new_tokens),
               static_cast<long long>(stats.target_forwards), stats.tau);
  std::fprintf(stderr, "accepted draft tokens per cycle (accepted:cycles):");
  for (size_t accepted = 0; accepted < stats.accept_histogram.size(); ++accepted)
    std::fprintf(stderr, " %zu:%lld", accepted,
                 static_cast<long long>(stats.accept_histogram[accepted]));
  std::fprintf(stderr,
               "\ndecode %.1f tokens/s (draft %.3f s, verify %.3f s), %d threads, %s kernels\n",
               stats.decode_tokens_per_second, stats.draft_seconds, stats.verify_seconds,
               threads.size(), kernel_name());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4 || argc > 5) return usage(argv[0]);
  int64_t max_new_tokens = 64;
  if (argc == 5) {
    // The library's strict number parser: the whole argument must be the number.
    std::string problem;
    const std::optional<int64_t> n = eagle2::parse_number<int64_t>(argv[4], &problem);
    if (!n || *n < 0) {
      std::fprintf(stderr, "error: MAX_NEW_TOKENS: %s\n",
                   n ? "must be 0 or more" : problem.c_str());
      return 2;
    }
    max_new_tokens = *n;
  }
  try {
    return run(argv[1], argv[2], argv[3], max_new_tokens);
  } catch (const eagle2::Error& e) {  // anything the input got wrong: one line that says what
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  } catch (const std::exception& e) {  // e.g. std::bad_alloc
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}

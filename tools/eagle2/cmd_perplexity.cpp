// eagle2 perplexity: a model's perplexity on a text file, cut into chunks as llama-perplexity cuts
// it, so that the two figures compare (docs/PARITY.md):
//   - the whole file is tokenized once, with the BOS the tokenizer asks for;
//   - chunk i is tokens [i*c, (i+1)*c), its first token replaced by BOS (when the tokenizer adds
//     one), run from an empty context; the file's tail past the last whole chunk is unused;
//   - only the second half of each chunk is scored: the predictions made at positions
//     [c/2, c-1), each of the next token, so every scored token has at least c/2 tokens of context;
//   - the figure is exp(mean NLL) over all scored tokens, +/- its standard error.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "commands.h"
#include "eagle2/corpus.h"
#include "eagle2/error.h"
#include "eagle2/model.h"
#include "eagle2/perplexity.h"
#include "eagle2/runtime.h"
#include "eagle2/tokenizer.h"
#include "flag_checks.h"

namespace eagle2::cli {

using namespace eagle2::api;

namespace {

struct PerplexityFlags {
  std::string model;
  std::string file;
  int64_t ctx = 512;
  int64_t chunks = 0;  // 0 = every whole chunk of the file
  int64_t batch = 0;   // 0 = the chunk size: one forward per chunk
  int threads = 0;
};

std::vector<int32_t> tokenize_file(const Tokenizer& tok, const std::string& path) {
  const std::string text = read_corpus_file(path);
  try {
    return tok.encode(text, tok.adds_bos());
  } catch (const Error& e) {
    fail(path, ": ", e.what());
  }
}

int run_perplexity(const PerplexityFlags& f) {
  Model model = Model::load(f.model);
  const Tokenizer tok = Tokenizer::open(f.model);
  const std::vector<int32_t> tokens = tokenize_file(tok, f.file);
  const auto n_tokens = static_cast<int64_t>(tokens.size());
  const int64_t c = f.ctx;
  const int64_t max_position = model.config().max_position_embeddings;
  if (c > max_position)
    fail("-c ", c, " exceeds the model's context of ", max_position, " positions");
  // llama-perplexity's own floor: fewer than two chunks is refused rather than measured on one.
  if (n_tokens < 2 * c)
    fail(f.file, ": ", n_tokens, " tokens, but -c ", c, " needs at least ", 2 * c,
         " (two chunks); use a longer text or a smaller -c");
  const int64_t whole = n_tokens / c;
  const int64_t chunks = f.chunks > 0 ? std::min(f.chunks, whole) : whole;
  const int64_t first = c / 2;
  const int64_t batch = f.batch > 0 ? f.batch : c;
  Threads threads(resolve_threads(f.threads));

  std::printf("%s: %lld tokens%s; %lld chunks of %lld, each scored on its last %lld predictions\n",
              f.file.c_str(), static_cast<long long>(n_tokens),
              tok.adds_bos() ? " (BOS first, and first in every chunk)" : "",
              static_cast<long long>(chunks), static_cast<long long>(c),
              static_cast<long long>(c - 1 - first));
  std::fflush(stdout);

  const auto t0 = std::chrono::steady_clock::now();
  std::vector<double> nlls;
  std::vector<int32_t> chunk;
  for (int64_t i = 0; i < chunks; ++i) {
    chunk.assign(tokens.begin() + i * c, tokens.begin() + (i + 1) * c);
    if (tok.adds_bos()) chunk[0] = tok.bos_id();
    const std::vector<double> part = token_nlls(model, chunk, first, batch, threads);
    nlls.insert(nlls.end(), part.begin(), part.end());
    std::printf("chunk %lld/%lld: running PPL %.4f\n", static_cast<long long>(i + 1),
                static_cast<long long>(chunks), estimate_perplexity(nlls).ppl);
    std::fflush(stdout);
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const PerplexityEstimate e = estimate_perplexity(nlls);
  std::printf("PPL = %.4f +/- %.5f over %lld tokens (%lld chunks of %lld)\n", e.ppl, e.error,
              static_cast<long long>(e.count), static_cast<long long>(chunks),
              static_cast<long long>(c));
  std::fprintf(stderr, "[stats] %lld chunks in %.2f s (%.1f tokens/s) | threads %d, kernels %s\n",
               static_cast<long long>(chunks), seconds,
               seconds > 0 ? static_cast<double>(chunks * c) / seconds : 0.0, threads.size(),
               kernel_name());
  return 0;
}

}  // namespace

Command add_perplexity(CLI::App& app) {
  auto f = std::make_shared<PerplexityFlags>();
  CLI::App* cmd = app.add_subcommand(
      "perplexity", "Perplexity of a model on a text file, chunked as llama-perplexity does");
  cmd->add_option("-m,--model", f->model, "Model folder or FILE.gguf")->required();
  cmd->add_option("-f,--file", f->file, "Text file (UTF-8)")->required();
  // At least 8, llama.cpp's own smallest context.
  cmd->add_option("-c,--ctx", f->ctx, "Chunk size in tokens: the context of each forward")
      ->check(integer_in(8, int64_t{1} << 24));
  cmd->add_option("--chunks", f->chunks, "Score only the first N chunks (default: all)")
      ->check(integer_in(1, int64_t{1} << 40));
  cmd->add_option("-b,--batch-size", f->batch,
                  "Rows per forward (default: the chunk size); the figures do not depend on it")
      ->check(integer_in(1, int64_t{1} << 24));
  add_threads_flag(*cmd, f->threads);
  return {cmd, [f] { return run_perplexity(*f); }};
}

}  // namespace eagle2::cli

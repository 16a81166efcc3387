// Several sequences decoded together through the batch engine, as a server runs them, through the
// public API only.
//
//   batch_generate MODEL_DIR HEAD_DIR MAX_NEW_TOKENS PROMPT [PROMPT...]
//   e.g. batch_generate models/code-lm models/code-lm-eagle 48 "import os" "def main():"
//
// Every step of the engine drafts one EAGLE-2 tree per live sequence and verifies all of them in
// one forward of the target model. Prints each prompt with its greedy completion on stdout, in the
// order given, one after the other: each is exactly what `eagle2 generate -p PROMPT -n
// MAX_NEW_TOKENS` prints for that prompt alone (the batch changes the speed, never the tokens).
// Per-sequence statistics go to stderr. Exit status 0 on success, 2 for bad arguments, 1 with one
// "error: ..." line for anything the library refuses.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <optional>
#include <string>
#include <vector>

#include "eagle2/drafter.h"
#include "eagle2/engine.h"
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
      "usage: %s MODEL_DIR HEAD_DIR MAX_NEW_TOKENS PROMPT [PROMPT...]\n"
      "  MODEL_DIR       a LLaMA-family model folder (config.json, safetensors, tokenizer)\n"
      "  HEAD_DIR        an EAGLE draft head trained for that model\n"
      "  MAX_NEW_TOKENS  tokens to generate at most for each prompt\n"
      "  PROMPT...       the texts to complete, decoded together\n",
      program);
  return 2;
}

int run(const std::string& model_dir, const std::string& head_dir, int64_t max_new_tokens,
        const std::vector<std::string>& texts) {
  Model model = Model::load(model_dir);
  const Tokenizer tokenizer = Tokenizer::open(model_dir);
  Head head = Head::load(head_dir, model);  // the model must outlive the head
  const int64_t draft_vocab = head.default_draft_vocab(head_dir, -1);
  if (draft_vocab > 0) head.restrict_vocab(head_dir + "/draft_vocab.tsv", draft_vocab);

  // One thread pool and one KV memory for all sequences. Each sequence may use up to `context`
  // tokens (prompt included); kv_tokens_for sizes the shared memory so that all of them fit at
  // once (a server gives less and lets sequences wait for memory).
  Threads threads(default_thread_count());
  const int64_t context = std::min<int64_t>(2048, model.config().max_position_embeddings);
  const int64_t sequences = static_cast<int64_t>(texts.size());
  Engine engine(model, Engine::kv_tokens_for(sequences, context), context, threads);

  // Each sequence names its own drafter and sampling options; here all draft EAGLE-2 dynamic
  // trees with the head, greedily ("plain" would decode a sequence without drafting).
  GenerateOptions options;
  options.max_new_tokens = max_new_tokens;
  const DrafterSpec spec = parse_drafter_spec("dynamic");
  std::vector<std::vector<int32_t>> prompts;
  std::vector<int64_t> ids;
  for (const std::string& text : texts) {
    prompts.push_back(tokenizer.encode(text, tokenizer.adds_bos()));
    ids.push_back(engine.add(prompts.back(), options, spec, &head));  // Error: e.g. too long
  }

  // Step until every sequence has finished (its token limit, an EOS or its context). A server
  // would add() new requests between steps and stream each sequence's new tokens.
  int64_t steps = 0, rows = 0;
  while (engine.live() > 0) {
    engine.step();
    ++steps;
    rows += engine.last_step().rows;
  }

  for (size_t i = 0; i < ids.size(); ++i) {
    // The prompt's ids give the first generated piece its spacing, as in streaming.
    TextStream stream(tokenizer, prompts[i]);
    std::string completion;
    for (const int32_t token : engine.tokens(ids[i])) completion += stream.push(token);
    completion += stream.finish();
    std::printf("%s%s\n", texts[i].c_str(), completion.c_str());

    const Stats stats = engine.stats(ids[i]);
    std::fprintf(stderr, "sequence %lld: %lld prompt tokens, %lld new tokens, tau %.3f%s\n",
                 static_cast<long long>(ids[i]), static_cast<long long>(stats.prompt_tokens),
                 static_cast<long long>(stats.new_tokens), stats.tau,
                 stats.stopped_at_eos ? ", stopped at EOS" : "");
  }
  std::fprintf(stderr,
               "%lld sequences in %lld steps (one target forward each, %lld rows), "
               "%d threads, %s kernels\n",
               static_cast<long long>(sequences), static_cast<long long>(steps),
               static_cast<long long>(rows), threads.size(), kernel_name());
  // A sequence that failed alone (its drafter or verification threw) finished with its output
  // incomplete while the others went on: finished() alone does not tell it from a length stop.
  int failed = 0;
  for (const int64_t id : ids)
    if (engine.failed(id)) {
      std::fprintf(stderr, "error: sequence %lld failed; its output above is incomplete\n",
                   static_cast<long long>(id));
      failed = 1;
    }
  return failed;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 5) return usage(argv[0]);
  std::string problem;
  const std::optional<int64_t> n = eagle2::parse_number<int64_t>(argv[3], &problem);
  if (!n || *n < 0) {
    std::fprintf(stderr, "error: MAX_NEW_TOKENS: %s\n", n ? "must be 0 or more" : problem.c_str());
    return 2;
  }
  try {
    return run(argv[1], argv[2], *n, std::vector<std::string>(argv + 4, argv + argc));
  } catch (const eagle2::Error& e) {  // anything the input got wrong: one line that says what
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  } catch (const std::exception& e) {  // e.g. std::bad_alloc
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}

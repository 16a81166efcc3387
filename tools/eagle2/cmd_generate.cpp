// eagle2 generate: stream a completion of a prompt, then one stats line.
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <sstream>

#include "commands.h"
#include "drafter_flags.h"
#include "eagle2/error.h"
#include "eagle2/generate.h"
#include "eagle2/model.h"
#include "eagle2/parse_number.h"
#include "eagle2/runtime.h"
#include "eagle2/tokenizer.h"
#include "flag_checks.h"

namespace eagle2::cli {

using namespace eagle2::api;

namespace {

struct GenerateFlags {
  RunFlags run;
  std::string prompt;
  std::string ids;  // comma-separated token ids, for models without a tokenizer
  int64_t n = 128;
  float temp = 0.0f;
  float top_p = 1.0f;
  int32_t top_k = 0;
  uint64_t seed = 0;
  bool ignore_eos = false;
  DrafterFlags draft;
  bool prompt_given = false, ids_given = false;  // -p "" is an empty prompt, not a missing one
};

std::vector<int32_t> parse_ids(const std::string& text) {
  std::vector<int32_t> ids;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    const std::optional<int32_t> id = parse_number<int32_t>(item);
    if (!id || *id < 0) fail("--ids: '", item, "' is not a token id");
    ids.push_back(*id);
  }
  if (ids.empty()) fail("--ids: no token ids given");
  return ids;
}

int run_generate(const GenerateFlags& f) {
  SamplingOptions sampling{f.temp, f.top_k, f.top_p, f.seed};
  sampling.validate();
  if (f.prompt_given == f.ids_given) fail("give exactly one of -p/--prompt and --ids");
  if (f.prompt_given && f.prompt.empty()) fail("-p/--prompt: the prompt is empty");

  Model model = Model::load(f.run.model_dir);
  const ModelConfig& cfg = model.config();
  // The folder's tokenizer: tokenizer.json wins over tokenizer.model, as in Hugging Face.
  std::optional<Tokenizer> tok;
  // A folder's tokenizer.json or tokenizer.model, or a GGUF file's own vocabulary (read only when
  // text is asked for: a GGUF without one still runs on --ids).
  const bool gguf = f.run.model_dir.ends_with(".gguf");
  if ((gguf && !f.ids_given) || std::filesystem::exists(f.run.model_dir + "/tokenizer.json") ||
      std::filesystem::exists(f.run.model_dir + "/tokenizer.model"))
    tok = Tokenizer::open(f.run.model_dir);

  std::vector<int32_t> prompt;
  if (f.ids_given) {
    prompt = parse_ids(f.ids);
  } else {
    if (!tok)
      fail(f.run.model_dir, ": no tokenizer.json or tokenizer.model; pass token ids with --ids");
    // BOS as the tokenizer's config asks (a SentencePiece model with a BOS id always does).
    prompt = tok->encode(f.prompt, tok->adds_bos());
  }
  const int64_t ctx = resolve_ctx(f.run, cfg.max_position_embeddings);
  if (static_cast<int64_t>(prompt.size()) >= ctx)
    fail("the prompt has ", prompt.size(), " tokens but --ctx is ", ctx,
         ": raise --ctx or shorten the prompt");
  KvCache kv(model, ctx);
  Threads threads(resolve_threads(f.run));

  GenerateOptions opt;
  opt.max_new_tokens = f.n;
  opt.sampling = sampling;
  opt.stop_at_eos = !f.ignore_eos;

  // Loaded before anything is printed: a bad head is one error line, not a prompt and an error.
  DrafterBundle drafter = make_drafter(f.draft, model, ctx, sampling.temperature, threads);

  std::optional<TextStream> stream;
  if (tok) {
    stream.emplace(*tok, prompt);
    std::fputs(f.prompt.c_str(), stdout);
  }
  auto on_token = [&](int32_t t) {
    if (stream) {
      std::fputs(stream->push(t).c_str(), stdout);
    } else {
      std::printf("%d ", t);
    }
    std::fflush(stdout);
    return true;
  };
  auto finish_text = [&] {
    if (stream) std::fputs(stream->finish().c_str(), stdout);
    std::fputs("\n", stdout);
    std::fflush(stdout);
  };

  if (!drafter) {
    const Stats st = generate_plain(model, kv, prompt, opt, threads, on_token);
    finish_text();
    std::fprintf(stderr,
                 "[stats] prompt %lld tokens, %.1f tokens/s | decode %lld tokens, %.1f tokens/s | "
                 "threads %d, kernels %s%s\n",
                 static_cast<long long>(st.prompt_tokens), st.prefill_tokens_per_second,
                 static_cast<long long>(st.new_tokens), st.decode_tokens_per_second, threads.size(),
                 kernel_name(), st.stopped_at_context ? " | stopped: context full" : "");
    return 0;
  }
  CycleCallback on_cycle;
  if (f.draft.verbose)
    on_cycle = [&](const Cycle& c) { print_cycle(stderr, c, tok ? &*tok : nullptr); };
  const Stats st =
      generate_speculative(model, kv, drafter.drafter, prompt, opt, threads, on_token, on_cycle);
  finish_text();
  print_speculative_stats(stderr, drafter.drafter.name(), st);
  std::fprintf(stderr, "[stats] threads %d, kernels %s%s\n", threads.size(), kernel_name(),
               st.stopped_at_context ? " | stopped: context full" : "");
  return 0;
}

}  // namespace

Command add_generate(CLI::App& app) {
  auto f = std::make_shared<GenerateFlags>();
  CLI::App* cmd = app.add_subcommand("generate", "Complete a prompt, streaming the text");
  add_run_flags(*cmd, f->run);
  CLI::Option* prompt = cmd->add_option("-p,--prompt", f->prompt, "Prompt text (UTF-8)");
  CLI::Option* ids =
      cmd->add_option("--ids", f->ids, "Prompt as comma-separated token ids (instead of -p)");
  cmd->add_option("-n,--n-predict", f->n, "Tokens to generate")
      ->check(integer_in(0, int64_t{1} << 30));
  // The sampling ranges are SamplingParams::validate's (one rule, exit 1); here only the type.
  cmd->add_option("--temp", f->temp, "Temperature (0 = greedy)")->check(finite_number());
  cmd->add_option("--top-p", f->top_p, "Nucleus sampling mass in (0, 1]")->check(finite_number());
  cmd->add_option("--top-k", f->top_k, "Keep the k most likely tokens (0 = off)")
      ->check(integer_in(INT32_MIN, INT32_MAX));
  cmd->add_option("--seed", f->seed, "Random seed for sampling")->check(seed_value());
  cmd->add_flag("--ignore-eos", f->ignore_eos, "Do not stop at the end-of-sequence token");
  add_drafter_flags(*cmd, f->draft);
  return {cmd, [f, prompt, ids] {
            f->prompt_given = prompt->count() > 0;
            f->ids_given = ids->count() > 0;
            return run_generate(*f);
          }};
}

}  // namespace eagle2::cli

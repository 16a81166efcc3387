// eagle2 bench-serve: the server under 1..16 concurrent clients, plain vs EAGLE-2 (and
// llama-server as a reference), as a table and SVG charts. The measuring lives in
// src/server/bench_serve.h; this file turns flags into its options.
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "bundled.h"
#include "commands.h"
#include "drafter_flags.h"
#include "eagle2/error.h"
#include "eagle2/parse_number.h"
#include "eagle2/prompts.h"
#include "flag_checks.h"
#include "server/bench_serve.h"

namespace eagle2::cli {

namespace {

namespace fs = std::filesystem;

struct BenchServeFlags {
  RunFlags run;
  std::string head_dir, prompts, concurrency = "1,2,4,8,16", out_dir = "bench-serve";
  size_t limit = 16;
  CLI::Option* limit_option = nullptr;  // given: applies with --in-order too
  server::BenchServeOptions options;
};

// ../shared/data/prompts/HumanEval.jsonl.gz beside the working directory or the repository.
std::string default_prompts() {
  const fs::path rel = fs::path("..") / "shared" / "data" / "prompts" / "HumanEval.jsonl.gz";
  if (fs::exists(rel)) return rel.string();
  const fs::path models = fs::path(bundled_path("code-lm")).parent_path();
  const fs::path beside = models.parent_path() / rel;
  if (fs::exists(beside)) return beside.string();
  fail(
      "no prompt set: pass --prompts FILE (the default, ../shared/data/prompts/"
      "HumanEval.jsonl.gz, is absent)");
}

int run_bench_serve(BenchServeFlags& f) {
  server::BenchServeOptions o = f.options;
  const ModelAndHead dirs = model_and_head(f.run.model_dir, f.head_dir);
  o.server.model_dir = dirs.model_dir;
  o.server.head_dir = dirs.head_dir;
  o.server.threads = resolve_threads(f.run);
  o.server.ctx = f.run.ctx;
  o.concurrency.clear();
  size_t start = 0;
  while (start <= f.concurrency.size()) {
    const size_t comma = std::min(f.concurrency.find(',', start), f.concurrency.size());
    const std::string item = f.concurrency.substr(start, comma - start);
    const auto c = parse_number<int>(item);
    if (!c || *c < 1 || *c > 256)
      fail("--concurrency: '", item, "' is not a client count in [1, 256]");
    o.concurrency.push_back(*c);
    start = comma + 1;
  }
  const std::string path = f.prompts.empty() ? default_prompts() : f.prompts;
  api::PromptSetOptions po;
  // A stream is replayed whole unless --limit says otherwise.
  po.limit = o.in_order && f.limit_option->count() == 0 ? 0 : f.limit;
  for (const api::Prompt& p : api::load_prompt_set(path, po)) o.prompts.push_back(p.text);
  o.out_dir = f.out_dir;
  if (!o.llama_server.empty() && o.llama_model.empty())
    fail("--llama-server needs --llama-model (a GGUF of the same model)");
  std::fprintf(stderr, "bench-serve: %zu prompts from %s, %lld tokens each, clients %s, %d reps\n",
               o.prompts.size(), path.c_str(), static_cast<long long>(o.max_tokens),
               f.concurrency.c_str(), o.reps);
  const server::BenchServeResult r = server::run_bench_serve(o);
  std::fputs(r.table.c_str(), stdout);
  if (!o.out_dir.empty())
    std::fprintf(stderr, "bench-serve: table, results.json and charts in %s/\n", o.out_dir.c_str());
  return 0;
}

}  // namespace

Command add_bench_serve(CLI::App& app) {
  auto f = std::make_shared<BenchServeFlags>();
  server::BenchServeOptions& o = f->options;
  CLI::App* cmd =
      app.add_subcommand("bench-serve",
                         "Drive an in-process eagle2 serve over loopback with 1..16 concurrent "
                         "clients, plain vs EAGLE-2: throughput table and SVG charts");
  add_served_model_flags(*cmd, f->run.model_dir, f->head_dir, o.server.draft_vocab);
  cmd->add_option("--spec", o.eagle_spec, "The EAGLE-2 drafter (default: serve's default)")
      ->check(drafter_spec_check());
  add_threads_flag(*cmd, f->run.threads);
  cmd->add_option("--ctx", f->run.ctx, "Context per request (default: as serve)")
      ->check(integer_in(1, int64_t{1} << 30));
  cmd->add_option("--prompts", f->prompts,
                  "Prompt set (default: ../shared/data/prompts/HumanEval.jsonl.gz)");
  f->limit_option =
      cmd->add_option("--limit", f->limit, "Prompts used (default: 16; all with --in-order)")
          ->check(integer_in(1, 100000));
  cmd->add_option("--concurrency", f->concurrency,
                  "Comma-separated client counts (default: 1,2,4,8,16)");
  cmd->add_option("--max-tokens", o.max_tokens, "Tokens per completion (default: 128)")
      ->check(integer_in(1, 1 << 20));
  cmd->add_option("--requests-per-client", o.requests_per_client,
                  "Completions each client sends per level, at least 8 per level (default: 2)")
      ->check(integer_in(1, 10000));
  cmd->add_flag("--in-order", o.in_order,
                "Each level sends the prompt set once, in its order (request i by client i mod c): "
                "a stream with repeats, e.g. bench/prompts/repeated_requests.jsonl");
  cmd->add_flag("--compare-suffix-scope", o.compare_suffix_scope,
                "Also run the spec on a server with --suffix-scope server (a fresh one per level "
                "and repetition) beside the request scope");
  cmd->add_option("--reps", o.reps, "Repetitions (ranges over them; default: 3)")
      ->check(integer_in(1, 1000));
  cmd->add_option("--llama-server", o.llama_server,
                  "llama-server binary for a reference row (e.g. "
                  "../shared/tools/llama.cpp/bin/llama-server)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--llama-model", o.llama_model, "GGUF of the same model for llama-server")
      ->check(CLI::ExistingFile);
  cmd->add_option("--out", f->out_dir,
                  "Folder for table.md, results.json and the charts (default: bench-serve)");
  return {cmd, [f] { return run_bench_serve(*f); }};
}

}  // namespace eagle2::cli

// eagle2 bench: the paper-style table (speedup over plain decoding, tau, time shares, output
// diversity) for several drafters on real prompt sets, measured side by side in one run.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "commands.h"
#include "drafter_flags.h"
#include "eagle2/bench.h"
#include "eagle2/drafter.h"
#include "eagle2/error.h"
#include "eagle2/head.h"
#include "eagle2/model.h"
#include "eagle2/parse_number.h"
#include "eagle2/prompts.h"
#include "eagle2/runtime.h"
#include "eagle2/tokenizer.h"
#include "flag_checks.h"

namespace eagle2::cli {

using namespace eagle2::api;

namespace {

struct BenchFlags {
  RunFlags run;
  std::string head_dir;
  std::vector<std::string> prompt_files;
  size_t limit = 10;
  size_t opening_words = 0;
  bool from_end = false;
  int64_t max_new = 128;
  std::string drafters = "plain,lookup,chain,static,dynamic";
  std::string temps = "0,1";
  int reps = 1;
  int warmup = 2;
  uint64_t seed = 1;
  std::string json_out, csv_out, svg_dir;
  int64_t draft_vocab = 0;
  std::string draft_weights = "auto";
};

// Commas inside brackets belong to a static tree's JSON (static:[[0],[1],[0,0]]).
std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out(1);
  int depth = 0;
  for (char c : s) {
    if (c == ',' && depth == 0) {
      out.emplace_back();
      continue;
    }
    depth += c == '[' ? 1 : c == ']' ? -1 : 0;
    out.back() += c;
  }
  if (out.size() == 1 && out[0].empty()) out.clear();
  return out;
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  if (!out) fail(path, ": cannot write");
  out << text;
}

int run_bench_cmd(const BenchFlags& f) {
  std::vector<DrafterSpec> specs;
  for (const auto& s : split(f.drafters)) specs.push_back(parse_drafter_spec(s));
  BenchOptions opt;
  opt.repetitions = f.reps;
  opt.warmup_prompts = f.warmup;
  opt.max_new_tokens = f.max_new;
  opt.seed = f.seed;
  opt.temperatures.clear();
  for (const auto& t : split(f.temps)) {
    const std::optional<float> temp = parse_number<float>(t);
    if (!temp) fail("--temps: '", t, "' is not a number");
    if (!(*temp >= 0)) fail("--temps: temperatures must be >= 0");
    opt.temperatures.push_back(*temp);
  }
  if (opt.temperatures.empty()) fail("--temps: no temperatures given");
  PromptSetOptions po{f.limit, f.opening_words, f.from_end};
  std::vector<PromptSet> sets;
  for (const auto& path : f.prompt_files) {
    std::string name = std::filesystem::path(path).filename().string();
    sets.push_back({name.substr(0, name.find('.')), load_prompt_set(path, po)});
  }

  Model model = Model::load(f.run.model_dir);
  const Tokenizer tok = Tokenizer::open(f.run.model_dir);  // folder or GGUF, as generate
  std::optional<Head> head;
  if (!f.head_dir.empty()) head = Head::load(f.head_dir, model, f.draft_weights);
  if (f.draft_vocab > 0) {
    if (!head) fail("--draft-vocab needs an EAGLE head: pass --draft HEAD_DIR");
    apply_draft_vocab(*head, f.head_dir, f.draft_vocab);
  }
  opt.ctx = resolve_ctx(f.run, model.config().max_position_embeddings);
  Threads threads(resolve_threads(f.run));

  const BenchRun runs =
      run_bench(model, head ? &*head : nullptr, tok, sets, specs, opt, threads,
                [last = -1](int64_t done, int64_t total) mutable {
                  // Redraw only when the bar moves: the output may be a log file.
                  const int width = 30;
                  const int filled = static_cast<int>(width * done / total);
                  if (filled == last && done != total) return;
                  last = filled;
                  std::fprintf(stderr, "\r[%s%s] %lld/%lld runs", std::string(filled, '#').c_str(),
                               std::string(width - filled, '.').c_str(),
                               static_cast<long long>(done), static_cast<long long>(total));
                  if (done == total) std::fprintf(stderr, "\n");
                });
  const std::vector<BenchSummary>& summary = runs.summary();
  std::printf(
      "model %s, head %s, %d threads, kernels %s, %lld new tokens per prompt, %d rep(s), "
      "%d warm-up prompt(s) per drafter and pass\n",
      f.run.model_dir.c_str(), f.head_dir.empty() ? "none" : f.head_dir.c_str(), threads.size(),
      kernel_name(), static_cast<long long>(f.max_new), f.reps, f.warmup);
  std::printf("%-24s %-18s %5s %9s %8s %7s %7s %7s %9s\n", "prompt set", "drafter", "temp",
              "tokens/s", "speedup", "tau", "draft%", "verify%", "distinct4");
  for (const BenchSummary& s : summary)
    std::printf("%-24s %-18s %5.2f %9.1f %7.2fx %7.2f %6.0f%% %6.0f%% %9.3f\n",
                s.prompt_set.c_str(), s.drafter.c_str(), static_cast<double>(s.temperature),
                s.tokens_per_second, s.speedup, s.tau, 100 * s.draft_share, 100 * s.verify_share,
                s.distinct4);
  if (!f.json_out.empty()) write_file(f.json_out, runs.json());
  if (!f.csv_out.empty()) write_file(f.csv_out, runs.csv());
  if (!f.svg_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(f.svg_dir, ec);
    if (ec) fail(f.svg_dir, ": cannot create directory: ", ec.message());
    const auto charts = runs.charts();
    for (const auto& [name, svg] : charts) write_file(f.svg_dir + "/" + name, svg);
    std::printf("wrote %zu chart(s) to %s\n", charts.size(), f.svg_dir.c_str());
  }
  const auto mismatches = runs.greedy_mismatches();
  if (!mismatches.empty()) {
    for (const auto& m : mismatches) std::fprintf(stderr, "LOSSLESSNESS VIOLATED: %s\n", m.c_str());
    fail(mismatches.size(), " greedy output(s) differ from plain decoding");
  }
  return 0;
}

}  // namespace

Command add_bench(CLI::App& app) {
  auto f = std::make_shared<BenchFlags>();
  CLI::App* cmd = app.add_subcommand("bench", "Benchmark drafters side by side on prompt sets");
  add_run_flags(*cmd, f->run);
  cmd->add_option("--draft", f->head_dir, "EAGLE draft head folder");
  cmd->add_option(
         "--draft-vocab", f->draft_vocab,
         "EAGLE drafters draft only the N most frequent tokens (HEAD_DIR/draft_vocab.tsv); "
         "0 = the full vocabulary")
      ->check(integer_in(0, INT32_MAX));
  add_draft_weights_flag(*cmd, f->draft_weights);
  cmd->add_option("--prompts", f->prompt_files,
                  "Prompt files: JSONL (turns/prompt/question/text; .gz too) or text documents "
                  "separated by blank lines")
      ->required();
  cmd->add_option("--limit", f->limit, "Prompts per file (0 = all)")
      ->check(integer_in(0, INT32_MAX));
  cmd->add_option("--opening-words", f->opening_words,
                  "Text files: use the first N words of each document as the prompt")
      ->check(integer_in(0, INT32_MAX));
  cmd->add_flag("--from-end", f->from_end, "Take the last prompts of each file (held-out data)");
  cmd->add_option("--max-new-tokens", f->max_new, "Tokens generated per prompt")
      ->check(integer_in(1, int64_t{1} << 20));
  cmd->add_option(
      "--drafters", f->drafters,
      "Comma-separated: plain, none, lookup[:D], chain[:D] (D + 1 draft tokens), static[:N|:JSON] "
      "(N: EAGLE-1 tree pruned to N tokens), dynamic[:T:D:K], dynamic:auto[:D:K] (tree size chosen "
      "each cycle from the measured verify cost), sampled[:T:D:K] (at T > 0 siblings sampled from "
      "the head's q, distribution-exact: docs/SAMPLING.md), sampled:auto[:D:K] (its tree size "
      "chosen each cycle from the sibling acceptance at the request's temperature), "
      "lookahead[:W:N:G] (lookahead decoding: "
      "window, n-gram size, n-grams verified), suffix[:T[:D[:P]]] (suffix decoding over the prompt "
      "and "
      "output: T tree tokens, D + 1 levels, nodes of frequency >= P %), sps:DRAFT_DIR[:D[:K]] (a "
      "separate draft model: a chain of D "
      "+ 1 tokens, K > 1 a top-K tree), medusa:HEADS_DIR[:T], hydra:HEADS_DIR[:T] (Medusa/Hydra "
      "heads of the model, T tokens per tree, default 8); :novalue or :norerank after a dynamic "
      "spec is EAGLE-2 without the value or without reranking (the paper's ablation); :cal after a "
      "dynamic spec ranks nodes by calibrated confidences; a chain, static, dynamic or sampled "
      "spec ending in @HEAD_DIR drafts with the EAGLE head in HEAD_DIR instead of --draft's (two "
      "heads side by "
      "side; --draft-vocab applies to --draft's head only)");
  cmd->add_option("--temps", f->temps, "Comma-separated temperatures");
  cmd->add_option("--reps", f->reps, "Repetitions")->check(integer_in(1, 1000));
  cmd->add_option("--warmup", f->warmup,
                  "Unmeasured warm-up generations (the first prompts) each drafter runs after a "
                  "reset, before each temperature and repetition")
      ->check(integer_in(0, 1000));
  cmd->add_option("--seed", f->seed, "Sampling seed")->check(seed_value());
  cmd->add_option("--json", f->json_out, "Write all results as JSON");
  cmd->add_option("--csv", f->csv_out, "Write the summary table as CSV");
  cmd->add_option("--svg-dir", f->svg_dir,
                  "Write SVG charts here (speedup and tau per drafter; tau and speedup against "
                  "the tree size when dynamic drafters run)");
  return {cmd, [f] { return run_bench_cmd(*f); }};
}

}  // namespace eagle2::cli

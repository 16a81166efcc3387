// eagle2 acceptance: where speculation's acceptance goes at each temperature. The target samples
// its own continuation of each prompt; along it, a head (--draft) or a draft model
// (--draft-model, as sps:) is compared with the target depth by depth: TV(p, q), the acceptance
// of a draft sampled from q (1 - TV, and measured), of the rank-1 and top-k deterministic drafts
// (measured, expected, and the ceiling the target's entropy leaves). eagle2/acceptance.h.
#include <cstdio>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "commands.h"
#include "drafter_flags.h"
#include "eagle2/acceptance.h"
#include "eagle2/error.h"
#include "eagle2/parse_number.h"
#include "eagle2/prompts.h"
#include "eagle2/tokenizer.h"
#include "flag_checks.h"

namespace eagle2::cli {

using namespace eagle2::api;

namespace {

struct AcceptanceFlags {
  std::string model_dir, head_dir, draft_model_dir, prompt_file, temps = "0,0.7,1";
  size_t limit = 20, opening_words = 0;
  bool from_end = false;
  int64_t new_tokens = 64, draft_vocab = 0;
  int32_t depth = 6, draft_top_k = 8, top_k = 0;
  float top_p = 1.0f;
  uint64_t seed = 1;
  int threads = 0;
  std::string draft_weights = "auto";
};

std::vector<float> acceptance_temperatures(const std::string& text) {
  std::vector<float> temps;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    const std::optional<float> t = parse_number<float>(item);
    if (!t || !(*t >= 0)) fail("--temps: '", item, "' is not a temperature >= 0");
    temps.push_back(*t);
  }
  if (temps.empty()) fail("--temps: no temperatures given");
  return temps;
}

void print_acceptance(const AcceptanceReport& r, const AcceptanceOptions& o) {
  std::printf(
      "temperature %.2f: %lld prompts, %lld new tokens, %lld roots; chain of %d drafted "
      "tokens: tau %.2f rank-1 (coupled), %.2f sampled from q (min(1, p/q))\n",
      static_cast<double>(o.temperature), static_cast<long long>(r.prompts),
      static_cast<long long>(r.new_tokens), static_cast<long long>(r.roots), o.depth,
      r.tau_top1_chain, r.tau_sampled_chain);
  std::printf("%5s %6s %6s %6s %7s %6s %7s %6s %6s %7s %6s %6s\n", "depth", "pairs", "TV", "1-TV",
              "sampled", "top1", "E[top1]", "max p", "topk", "E[topk]", "topk p", "H(p)");
  for (size_t i = 0; i < r.depths.size(); ++i) {
    const DepthAcceptance& d = r.depths[i];
    std::printf("%5zu %6lld %6.3f %6.3f %7.3f %6.3f %7.3f %6.3f %6.3f %7.3f %6.3f %6.2f\n", i + 1,
                static_cast<long long>(d.pairs), d.tv, 1 - d.tv, d.sampled, d.top1, d.top1_expected,
                d.top1_ceiling, d.topk, d.topk_expected, d.topk_ceiling, d.entropy);
  }
}

int run_acceptance(const AcceptanceFlags& f) {
  if (f.head_dir.empty() == f.draft_model_dir.empty())
    fail("acceptance: give exactly one of --draft HEAD_DIR and --draft-model DIR");
  if (f.draft_vocab > 0 && f.head_dir.empty())
    fail("--draft-vocab needs an EAGLE head: pass --draft HEAD_DIR");
  const std::vector<float> temps = acceptance_temperatures(f.temps);
  const std::vector<Prompt> prompts =
      load_prompt_set(f.prompt_file, PromptSetOptions{f.limit, f.opening_words, f.from_end});
  Model model = Model::load(f.model_dir);
  const Tokenizer tok = Tokenizer::open(f.model_dir);
  std::vector<std::vector<int32_t>> ids;
  for (const Prompt& p : prompts) {
    ids.push_back(tok.encode(p.text, tok.adds_bos()));
    if (ids.back().empty()) fail(p.id, ": the prompt has no tokens");
  }
  std::optional<Head> head;
  std::optional<Model> draft;
  if (!f.head_dir.empty()) {
    head = Head::load(f.head_dir, model, f.draft_weights);
    if (f.draft_vocab > 0) apply_draft_vocab(*head, f.head_dir, f.draft_vocab);
  } else {
    draft = Model::load(f.draft_model_dir);
  }
  Threads threads(resolve_threads(f.threads));
  std::printf(
      "model %s, %s %s%s, prompts %s (%zu), top-p %.2f, top-k %d, seed %llu\n", f.model_dir.c_str(),
      head ? "head" : "draft model", head ? f.head_dir.c_str() : f.draft_model_dir.c_str(),
      f.draft_vocab > 0 ? (" (draft vocabulary " + std::to_string(f.draft_vocab) + ")").c_str()
                        : "",
      f.prompt_file.c_str(), prompts.size(), static_cast<double>(f.top_p), f.top_k,
      static_cast<unsigned long long>(f.seed));
  for (const float t : temps) {
    AcceptanceOptions o;
    o.temperature = t;
    o.top_k = f.top_k;
    o.top_p = f.top_p;
    o.seed = f.seed;
    o.depth = f.depth;
    o.new_tokens = f.new_tokens;
    o.draft_top_k = f.draft_top_k;
    const AcceptanceReport r = head ? measure_acceptance(model, *head, ids, o, threads)
                                    : measure_acceptance(model, *draft, ids, o, threads);
    print_acceptance(r, o);
  }
  return 0;
}

}  // namespace

Command add_acceptance(CLI::App& app) {
  auto f = std::make_shared<AcceptanceFlags>();
  CLI::App* cmd = app.add_subcommand(
      "acceptance", "TV(p, q) and acceptance per draft depth along the target's sampled text");
  cmd->add_option("-m,--model", f->model_dir, "Model folder (config.json + safetensors)")
      ->required();
  cmd->add_option("--draft", f->head_dir, "EAGLE or EAGLE-3 head folder");
  cmd->add_option("--draft-model", f->draft_model_dir,
                  "A separate draft model of the same vocabulary (as sps:DIR)");
  cmd->add_option("--draft-vocab", f->draft_vocab,
                  "The head drafts only the N most frequent tokens (HEAD_DIR/draft_vocab.tsv)")
      ->check(integer_in(0, INT32_MAX));
  add_draft_weights_flag(*cmd, f->draft_weights);
  cmd->add_option("--prompts", f->prompt_file,
                  "Prompt file: JSONL (turns/prompt/question/text; .gz too) or text documents")
      ->required();
  cmd->add_option("--limit", f->limit, "Prompts (0 = all)")->check(integer_in(0, INT32_MAX));
  cmd->add_option("--opening-words", f->opening_words,
                  "Text files: the first N words of each document")
      ->check(integer_in(0, INT32_MAX));
  cmd->add_flag("--from-end", f->from_end, "Take the last prompts of the file (held-out data)");
  cmd->add_option("-n,--max-new-tokens", f->new_tokens,
                  "The target's sampled continuation per prompt")
      ->check(integer_in(2, int64_t{1} << 20));
  cmd->add_option("--temps", f->temps, "Comma-separated temperatures (0: greedy)");
  cmd->add_option("--top-p", f->top_p, "Nucleus sampling mass in (0, 1]")->check(finite_number());
  cmd->add_option("--top-k", f->top_k, "Sampling filter: the k most likely tokens (0 = off)")
      ->check(integer_in(0, INT32_MAX));
  cmd->add_option("--seed", f->seed, "Seed of the target's sampled continuation")
      ->check(seed_value());
  cmd->add_option("--depth", f->depth, "Draft depths measured per root")->check(integer_in(1, 64));
  cmd->add_option("--draft-top-k", f->draft_top_k, "k of the topk columns (siblings of a level)")
      ->check(integer_in(1, 64));
  add_threads_flag(*cmd, f->threads);
  return {cmd, [f] { return run_acceptance(*f); }};
}

}  // namespace eagle2::cli

// eagle2 demo: the README's main job. Completes a few Python prompts with plain greedy decoding and
// with EAGLE-2 on the bundled code model and head, prints each completion once (after checking
// that both decoders produced the same tokens), tau and the speedup measured side by side.
// With --temp T > 0 (and --seed) it samples instead: the tree drafter's text must again be plain
// sampling's with the same seed (its draft is deterministic and verified by the position-keyed
// rule), and a sampled tree (docs/SAMPLING.md) runs beside them: the target's distribution, but
// its own text, so it is timed and not compared.
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "bundled.h"
#include "commands.h"
#include "drafter_flags.h"
#include "eagle2/bench.h"
#include "eagle2/drafter.h"
#include "eagle2/error.h"
#include "eagle2/head.h"
#include "eagle2/model.h"
#include "eagle2/prompts.h"
#include "eagle2/runtime.h"
#include "eagle2/tokenizer.h"
#include "flag_checks.h"

namespace eagle2::cli {

using namespace eagle2::api;

namespace {

// Written for this demo (not taken from the training or held-out files): short openings of the
// kinds of code the model was trained on (standard library, SymPy, NumPy).
const std::vector<Prompt>& builtin_prompts() {
  static const std::vector<Prompt> prompts = {
      {"demo:search",
       "def binary_search(items, target):\n"
       "    \"\"\"Return the index of target in the sorted list items, or -1.\"\"\"\n"
       "    lo, hi = 0, len(items) - 1\n"},
      {"demo:stack",
       "class Stack:\n"
       "    \"\"\"A last-in, first-out stack of items.\"\"\"\n"
       "\n"
       "    def __init__(self):\n"
       "        self._items = []\n"
       "\n"
       "    def push(self, item):\n"},
      {"demo:cli",
       "import os\n"
       "import sys\n"
       "\n"
       "\n"
       "def main(argv=None):\n"
       "    \"\"\"List the files of a directory given on the command line.\"\"\"\n"
       "    if argv is None:\n"
       "        argv = sys.argv[1:]\n"},
      {"demo:numpy",
       "def moving_average(a, n=3):\n"
       "    \"\"\"\n"
       "    Compute the moving average of an array.\n"
       "\n"
       "    Parameters\n"
       "    ----------\n"
       "    a : array_like\n"
       "        Input array.\n"},
  };
  return prompts;
}

struct DemoFlags {
  RunFlags run;
  std::string head_dir;
  std::string prompts;  // a prompt set file instead of the built-in prompts
  // The winner of the budget sweep on this machine kind (docs/RESULTS.md): a tree sized each
  // cycle from the measured verify cost (auto), ranked by calibrated confidences (cal), up to 9
  // levels of the head's top choice (K = 1). On the bundled 25.7 M-parameter model a forward of
  // k tokens leaves the memory-bound regime early (8 tokens cost about 2x one token on 2 cores),
  // so wide trees verify more than they gain, and the head's top choice is right ~93 % of the time
  // at T = 0, so a deep chain-shaped tree is what pays.
  std::string tree = "dynamic:auto:8:1:cal";
  // Draft from the 1024 most frequent tokens (HEAD/draft_vocab.tsv, 91 % of the training text):
  // a 4x smaller draft lm_head at no measured cost in tau. -1: 1024 if the file exists, else 0.
  int64_t draft_vocab = -1;
  std::string draft_weights = "auto";
  int64_t n = 128;
  float temperature = 0;
  uint64_t seed = 1;
  // At T > 0: the distribution-exact drafter shown beside (none: not shown). A sampled chain of 8
  // tokens: at 8 verified tokens the best-first shape puts the whole budget into depth
  // (docs/SAMPLING.md "Results").
  std::string sampled_tree = "sampled:8:6:1";
  bool seed_given = false, sampled_tree_given = false;
};

// Drafters whose draft is sampled from q at T > 0 (verified by min(1, p/q)): distribution-exact,
// but their text is not plain sampling's for the seed, so the demo cannot compare it.
bool draft_sampled_from_q(const DrafterSpec& spec) {
  return spec.kind == "sampled" || (spec.kind == "sps" && spec.sps_top_k == 1);
}

int run_demo(const DemoFlags& f) {
  // The flags first: a bad one is an error before anything is loaded.
  const DrafterSpec eagle = parse_drafter_spec(f.tree);
  if (eagle.kind == "plain" || eagle.kind == "none")
    fail("--tree ", f.tree, ": the demo compares plain decoding with a drafter");
  const bool sampling = f.temperature > 0;
  if (!sampling && (f.seed_given || f.sampled_tree_given))
    fail("--seed and --sampled-tree take effect with --temp > 0 only");
  if (sampling && draft_sampled_from_q(eagle))
    fail("--tree ", f.tree,
         ": its draft is sampled from q at T > 0 (the target's distribution, not plain "
         "sampling's text); the demo times such a drafter beside (--sampled-tree)");
  std::vector<DrafterSpec> specs = {parse_drafter_spec("plain"), eagle};
  if (f.sampled_tree != "none") {
    DrafterSpec beside = parse_drafter_spec(f.sampled_tree);
    if (beside.kind != "sampled")
      fail("--sampled-tree ", f.sampled_tree, ": a sampled[:T:D:K] spec or none");
    if (sampling) specs.push_back(std::move(beside));
  }
  const size_t per_prompt = specs.size();

  const std::string model_dir = f.run.model_dir.empty() ? bundled_path("code-lm") : f.run.model_dir;
  const std::string head_dir = f.head_dir.empty() ? bundled_path("code-lm-eagle") : f.head_dir;

  Model model = Model::load(model_dir);
  Head head = Head::load(head_dir, model, f.draft_weights);
  const int64_t draft_vocab = head.default_draft_vocab(head_dir, f.draft_vocab);
  apply_draft_vocab(head, head_dir, draft_vocab);
  // The folder's tokenizer.json or tokenizer.model, or a GGUF file's vocabulary (the demo prints
  // text, so a model without one is an error).
  const Tokenizer tok = Tokenizer::open(model_dir);
  PromptSet set{"demo", f.prompts.empty() ? builtin_prompts() : load_prompt_set(f.prompts, {})};

  RunFlags run = f.run;
  run.model_dir = model_dir;
  Threads threads(resolve_threads(run));
  BenchOptions opt;
  opt.max_new_tokens = f.n;
  opt.temperatures = {f.temperature};
  opt.seed = f.seed;
  // One untimed generation per side first (bench's warm-up): page faults of the freshly loaded
  // weights and the first allocations land on neither side, and a learning drafter starts warm.
  opt.warmup_prompts = 1;
  opt.ctx = resolve_ctx(run, model.config().max_position_embeddings);

  std::printf("eagle2 demo: %s (%lld layers, hidden %lld) with the %s head %s\n", model_dir.c_str(),
              static_cast<long long>(model.config().num_layers),
              static_cast<long long>(model.config().hidden_size),
              head.kind() == "eagle3" ? "EAGLE-3" : "EAGLE-2", head_dir.c_str());
  if (sampling)
    std::printf("sampling at temperature %g (seed %llu) ", static_cast<double>(f.temperature),
                static_cast<unsigned long long>(f.seed));
  else
    std::printf("greedy decoding ");
  std::printf("of %lld tokens per prompt, %d threads, %s kernels, drafter %s",
              static_cast<long long>(f.n), threads.size(), kernel_name(), eagle.label.c_str());
  if (draft_vocab > 0) std::printf(", draft vocabulary %lld", static_cast<long long>(draft_vocab));
  std::printf("\n\n");
  std::fflush(stdout);

  const BenchRun runs = run_bench(model, &head, tok, {set}, specs, opt, threads);
  std::vector<std::string> mismatches = runs.greedy_mismatches();
  for (size_t p = 0; p < set.prompts.size(); ++p) {
    const std::vector<int32_t>& plain = runs.tokens(per_prompt * p);
    const std::vector<int32_t>& spec = runs.tokens(per_prompt * p + 1);
    if (sampling && plain != spec)
      mismatches.push_back("drafter " + eagle.label + " on " + set.prompts[p].id +
                           ": sampled output differs from plain sampling with the same seed");
    // This prompt's tau and speedup, computed as bench computes them.
    const BenchSummary one = runs.summary_of({per_prompt * p, per_prompt * p + 1})[1];
    std::printf("--- %s ---\n%s", set.prompts[p].id.c_str(), set.prompts[p].text.c_str());
    TextStream text(tok, tok.encode(set.prompts[p].text, true));
    std::string completion;
    for (const int32_t t : plain) completion += text.push(t);
    completion += text.finish();
    std::printf("%s\n", completion.c_str());
    std::printf("--- plain %.1f tokens/s | EAGLE-2 %.1f tokens/s, %.2fx | tau %.2f | %s\n",
                one.tokens_per_second / one.speedup, one.tokens_per_second, one.speedup, one.tau,
                plain != spec ? "DIFFERENT"
                : sampling    ? "identical to plain sampling (same seed)"
                              : "identical to plain decoding");
    if (per_prompt > 2) {
      const BenchSummary tree = runs.summary_of({per_prompt * p, per_prompt * p + 2})[1];
      std::printf("--- %s %.1f tokens/s, %.2fx | tau %.2f | the same distribution, its own text\n",
                  specs[2].label.c_str(), tree.tokens_per_second, tree.speedup, tree.tau);
    }
    std::printf("\n");
  }
  for (const BenchSummary& s : runs.summary()) {
    if (s.drafter == "plain") continue;
    const bool tree = per_prompt > 2 && s.drafter == specs[2].label;
    std::printf(
        "all prompts: plain %.1f tokens/s, %s %.1f tokens/s: speedup %.2fx, tau %.2f "
        "(tokens per target forward)\n",
        s.tokens_per_second / s.speedup, tree ? specs[2].label.c_str() : "EAGLE-2",
        s.tokens_per_second, s.speedup, s.tau);
  }
  if (!mismatches.empty()) {
    for (const std::string& m : mismatches) std::fprintf(stderr, "error: %s\n", m.c_str());
    fail(sampling ? "EAGLE-2's sampled output differs from plain sampling with the same seed (a "
                    "losslessness bug)"
                  : "EAGLE-2's greedy output differs from plain decoding (a losslessness bug)");
  }
  if (!sampling) {
    std::printf("EAGLE-2's completions are identical to plain decoding's.\n");
    return 0;
  }
  std::printf("EAGLE-2's completions are identical to plain sampling's with the same seed.\n");
  if (per_prompt > 2)
    std::printf(
        "%s samples from the same distribution as plain sampling (exact, docs/SAMPLING.md), not "
        "the same text: its draft is sampled from the head's distribution, so more of it is "
        "accepted (tau).\n",
        specs[2].label.c_str());
  return 0;
}

}  // namespace

Command add_demo(CLI::App& app) {
  auto f = std::make_shared<DemoFlags>();
  CLI::App* cmd = app.add_subcommand(
      "demo",
      "Complete Python prompts with plain decoding and EAGLE-2 on the bundled model; "
      "print the completions, tau and the speedup");
  cmd->add_option("-m,--model", f->run.model_dir, "Model folder (default: models/code-lm)");
  add_threads_flag(*cmd, f->run.threads);
  cmd->add_option("--ctx", f->run.ctx, "Context length (default: min(2048, the model's))")
      ->check(integer_in(16, int64_t{1} << 20));
  cmd->add_option("--draft", f->head_dir, "EAGLE head folder (default: models/code-lm-eagle)");
  cmd->add_option("--prompts", f->prompts,
                  "Prompt set (JSONL/text, as bench) instead of the built-in Python prompts")
      ->check(CLI::ExistingFile);
  cmd->add_option("--tree", f->tree,
                  "Drafter as bench spells it: dynamic[:T:D:K][:novalue|:norerank][:cal], "
                  "dynamic:auto[:D:K][:novalue|:norerank][:cal], "
                  "static[:N|:JSON], chain[:D], lookup[:D], lookahead[:W:N:G], suffix[:T[:D[:P]]], "
                  "sps:DRAFT_DIR[:D[:K]], medusa:HEADS_DIR[:T], hydra:HEADS_DIR[:T]");
  cmd->add_option("--draft-vocab", f->draft_vocab,
                  "Draft only the N most frequent tokens (HEAD/draft_vocab.tsv); 0 = all (default: "
                  "1024 when the head has a draft_vocab.tsv)")
      ->check(integer_in(0, INT32_MAX));
  add_draft_weights_flag(*cmd, f->draft_weights);
  cmd->add_option("-n,--n-predict", f->n, "Tokens per completion")
      ->check(integer_in(1, int64_t{1} << 20));
  cmd->add_option("--temp", f->temperature,
                  "Sample at this temperature (default 0: greedy); EAGLE-2's text is still plain "
                  "sampling's for the same --seed")
      ->check(number_in(0, 2));
  CLI::Option* seed =
      cmd->add_option("--seed", f->seed, "Sampling seed (default 1)")->check(seed_value());
  CLI::Option* sampled_tree = cmd->add_option(
      "--sampled-tree", f->sampled_tree,
      "At --temp > 0: a sampled[:T:D:K] drafter shown beside (the same distribution, "
      "not the same text), or none (default sampled:8:6:1)");
  return {cmd, [f, seed, sampled_tree] {
            f->seed_given = seed->count() > 0;
            f->sampled_tree_given = sampled_tree->count() > 0;
            return run_demo(*f);
          }};
}

}  // namespace eagle2::cli

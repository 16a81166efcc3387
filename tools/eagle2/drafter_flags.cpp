#include "drafter_flags.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "eagle2/error.h"
#include "eagle2/parse_number.h"
#include "flag_checks.h"

namespace eagle2::cli {

using namespace eagle2::api;

namespace {

// 0 when the text is not a budget in [1, 4096].
int parse_total_tokens(const std::string& text) {
  const std::optional<int> v = parse_number<int>(text);
  return v && *v >= 1 && *v <= 4096 ? *v : 0;
}

// --choices takes JSON or a file holding it. The first non-space character decides, so that
// neither is mistaken for the other: '[' is inline JSON (never tried as a path, which failed
// with "File name too long" past 255 bytes), anything else is a path (whose absence is reported
// as such, not as bad JSON).
TreeChoices read_tree_choices(const std::string& value) {
  const size_t first = value.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && value[first] == '[')
    return parse_tree_choices(value, "--choices");
  if (first == std::string::npos)
    fail("--choices: empty (give JSON such as [[0], [1], [0, 0]] or a file)");
  return load_tree_choices(value, "--choices " + value);
}

// The library's measurement, printed with --verbose.
VerifyCost measure_verify_cost(Model& target, int64_t ctx, bool verbose, Threads& threads) {
  VerifyCost cost = VerifyCost::measure(target, ctx, threads);
  if (verbose) {
    std::fprintf(stderr, "[budget] verify cost curve (context %lld):",
                 static_cast<long long>(std::min<int64_t>(64, ctx / 2)));
    for (const CostPoint& p : cost.curve())
      std::fprintf(stderr, " k=%lld %.3fms (x%.2f)", static_cast<long long>(p.k), 1e3 * p.seconds,
                   p.relative);
    std::fprintf(stderr, "\n");
  }
  return cost;
}

}  // namespace

CLI::Validator drafter_spec_check() {
  return CLI::Validator(
      [](std::string& v) -> std::string {
        try {
          parse_drafter_spec(v);
        } catch (const Error& e) {
          return e.what();
        }
        return {};
      },
      "SPEC");
}

void add_drafter_shorthands(CLI::App& cmd, DrafterFlags& f) {
  cmd.add_option("--tree", f.tree,
                 "Drafter: dynamic (EAGLE-2), static (EAGLE-1 tree), chain, lookup (prompt "
                 "lookup, no model) or none (plain decoding); default dynamic with --draft")
      ->check(CLI::IsMember({"dynamic", "static", "chain", "lookup", "none"}));
  cmd.add_option("--total-tokens", f.total_tokens,
                 "Dynamic tree: tokens verified per cycle, root included, or auto (chosen each "
                 "cycle from this machine's verify cost curve, measured at start-up)")
      ->check(CLI::Validator(
          [](std::string& v) -> std::string {
            if (v == "auto" || parse_total_tokens(v) > 0) return {};
            return "must be auto or an integer in [1, 4096] (got '" + v + "')";
          },
          "auto|INT in [1 - 4096]"))
      ->each([&f](const std::string&) { f.total_tokens_given = true; });
  cmd.add_option("--depth", f.depth,
                 "Draft levels after the first (a chain or a lookup drafts depth + 1 tokens; "
                 "lookup's default is 6)")
      ->check(integer_in(0, 64))
      ->each([&f](const std::string&) { f.depth_given = true; });
  cmd.add_option("--draft-top-k", f.top_k, "Dynamic tree: children per expanded node (K)")
      ->check(integer_in(1, 1024))
      ->each([&f](const std::string&) { f.top_k_given = true; });
  cmd.add_option("--choices", f.choices,
                 "Static tree shape as JSON paths of sibling ranks, or a file holding them "
                 "(default: EAGLE-1's mc_sim_7b_63)")
      ->each([&f](const std::string&) { f.choices_given = true; });
  cmd.add_flag("--calibrate", f.calibrate,
               "Dynamic tree: rank nodes by the acceptance rate learned while decoding for each "
               "draft probability and sibling rank, instead of the raw draft probabilities "
               "(reference EAGLE-2)");
  // After parsing, so that the order of the flags does not matter; a ParseError here is a flag
  // error (exit 2).
  cmd.parse_complete_callback([&f] {
    if (!f.spec_given) return;
    std::string given;
    const std::pair<const char*, bool> shorthands[] = {
        {"--tree", !f.tree.empty()},    {"--total-tokens", f.total_tokens_given},
        {"--depth", f.depth_given},     {"--draft-top-k", f.top_k_given},
        {"--choices", f.choices_given}, {"--calibrate", f.calibrate}};
    for (const auto& [name, on] : shorthands)
      if (on) given += (given.empty() ? "" : ", ") + std::string(name);
    if (!given.empty())
      throw CLI::ValidationError("--spec",
                                 "cannot be combined with " + given + " (the spec says it all)");
  });
}

bool shorthands_given(const DrafterFlags& f) {
  return !f.tree.empty() || f.total_tokens_given || f.depth_given || f.top_k_given ||
         f.choices_given || f.calibrate;
}

void add_drafter_flags(CLI::App& cmd, DrafterFlags& f) {
  cmd.add_option("--draft", f.head_dir, "EAGLE draft head folder (config.json + weights)");
  cmd.add_option(
         "--spec", f.spec,
         "Drafter as bench and demo spell it: plain, none, lookup[:D], chain[:D], "
         "static[:N|:JSON], dynamic[:T:D:K][:novalue|:norerank][:cal], "
         "dynamic:auto[:D:K][:novalue|:norerank][:cal], sampled[:T:D:K], lookahead[:W:N:G], "
         "suffix[:T[:D[:P]]], "
         "sps:DRAFT_DIR[:D[:K]], medusa:HEADS_DIR[:T], hydra:HEADS_DIR[:T] (instead of "
         "--tree and its flags)")
      ->check(drafter_spec_check())
      ->each([&f](const std::string&) { f.spec_given = true; });
  add_drafter_shorthands(cmd, f);
  cmd.add_option("--draft-vocab", f.draft_vocab,
                 "Draft only the N most frequent tokens (HEAD_DIR/draft_vocab.tsv, written by "
                 "eagle2 draft-vocab): a smaller draft lm_head; 0 = the full vocabulary")
      ->check(integer_in(0, INT32_MAX));
  add_draft_weights_flag(cmd, f.draft_weights);
  cmd.add_flag("--verbose", f.verbose, "Print each cycle's tree and accepted path");
}

void add_draft_weights_flag(CLI::App& cmd, std::string& weights) {
  cmd.add_option("--draft-weights", weights,
                 "The head's matrices: auto (quantized like the target: Q8_0 for a Q8_0 model, "
                 "Q4_0 for a Q4_0 or Q4_K_M one, as stored otherwise), as-is, q8_0, q4_0")
      ->check(CLI::Validator(
          [](std::string& text) -> std::string {
            for (const char* ok : {"auto", "as-is", "q8_0", "q4_0"})
              if (text == ok) return {};
            return "'" + text + "' is not one of auto, as-is, q8_0, q4_0";
          },
          "auto|as-is|q8_0|q4_0"));
}

DrafterSpec drafter_spec_from_flags(const DrafterFlags& f) {
  if (f.spec_given) {
    DrafterSpec spec = parse_drafter_spec(f.spec);
    if (!spec.head.empty())
      fail("--spec ", f.spec,
           ": a head folder after '@' is for eagle2 bench --drafters (two heads "
           "side by side); here pass --draft HEAD_DIR");
    return spec;
  }
  const std::string tree = f.tree.empty() ? (f.head_dir.empty() ? "none" : "dynamic") : f.tree;
  if (f.calibrate && tree != "dynamic") fail("--calibrate applies to --tree dynamic only");
  DrafterSpec spec;
  if (tree == "none") {
    spec = parse_drafter_spec("plain");
  } else if (tree == "lookup") {
    spec = parse_drafter_spec("lookup");
    if (f.depth_given) spec.lookup_depth = f.depth;
  } else if (tree == "chain") {
    spec = parse_drafter_spec("chain");
    spec.chain_depth = f.depth;
  } else if (tree == "static") {
    spec = parse_drafter_spec("static");
    if (f.choices_given) spec.choices = read_tree_choices(f.choices);
  } else {
    spec = parse_drafter_spec(f.total_tokens == "auto" ? "dynamic:auto" : "dynamic");
    if (!spec.auto_budget) {
      spec.dynamic.total_tokens = parse_total_tokens(f.total_tokens);
      if (spec.dynamic.total_tokens < 1)
        fail("--total-tokens must be auto or an integer in [1, 4096] (got '", f.total_tokens, "')");
    }
    spec.dynamic.depth = f.depth;
    spec.dynamic.top_k = f.top_k;
    spec.calibrate = f.calibrate;
  }
  spec.label = spec.to_string();
  return spec;
}

DrafterBundle make_drafter(const DrafterFlags& f, Model& target, int64_t ctx, float temperature,
                           Threads& threads) {
  const DrafterSpec spec = drafter_spec_from_flags(f);
  DrafterBundle b;
  if (spec.needs_head()) {
    if (f.head_dir.empty())
      fail(f.spec_given ? "--spec " + f.spec : "--tree " + spec.kind,
           " needs an EAGLE head: pass --draft HEAD_DIR");
    b.head = Head::load(f.head_dir, target, f.draft_weights);
    apply_draft_vocab(*b.head, f.head_dir, f.draft_vocab);
  }
  std::optional<VerifyCost> cost;
  if (spec.auto_budget) cost = measure_verify_cost(target, ctx, f.verbose, threads);
  b.drafter = Drafter::make(spec, target, b.head ? &*b.head : nullptr, threads, ctx, temperature,
                            cost ? &*cost : nullptr);
  return b;
}

void apply_draft_vocab(Head& head, const std::string& head_dir, int64_t n) {
  if (n <= 0) return;
  head.restrict_vocab(head_dir + "/draft_vocab.tsv", n);
}

void print_cycle(FILE* out, const Cycle& c, const Tokenizer* tok) {
  const int64_t nodes = static_cast<int64_t>(c.tokens.size());
  std::fprintf(out, "[cycle %lld] root at position %lld, %lld nodes, accepted %lld + bonus %d",
               static_cast<long long>(c.cycle), static_cast<long long>(c.committed),
               static_cast<long long>(nodes), static_cast<long long>(c.accepted), c.bonus);
  if (tok) std::fprintf(out, " '%s'", tok->piece(c.bonus).c_str());
  std::fprintf(out, "\n  path:");
  for (int32_t n : c.path) std::fprintf(out, " %d", n);
  std::fprintf(out, "\n  %5s %7s %7s %10s  piece\n", "node", "token", "parent", "value");
  for (int64_t i = 0; i < nodes; ++i) {
    const size_t n = static_cast<size_t>(i);
    std::fprintf(out, "  %5lld %7d %7d %10.4f  %s\n", static_cast<long long>(i), c.tokens[n],
                 c.parents[n], static_cast<double>(c.values[n]),
                 tok ? tok->piece(c.tokens[n]).c_str() : "");
  }
}

void print_speculative_stats(FILE* out, const std::string& drafter, const Stats& st) {
  std::fprintf(out,
               "[stats] drafter %s | tau %.3f over %lld cycles | prompt %lld tokens, %.1f "
               "tokens/s | decode %lld tokens, %.1f tokens/s\n",
               drafter.c_str(), st.tau, static_cast<long long>(st.cycles),
               static_cast<long long>(st.prompt_tokens), st.prefill_tokens_per_second,
               static_cast<long long>(st.new_tokens), st.decode_tokens_per_second);
  std::fprintf(out, "[stats] accepted length histogram:");
  for (size_t a = 0; a < st.accept_histogram.size(); ++a)
    std::fprintf(out, " %zu:%lld", a, static_cast<long long>(st.accept_histogram[a]));
  const double total = st.decode_seconds > 0 ? st.decode_seconds : 1;
  std::fprintf(
      out, "\n[stats] time: draft %.3fs (%.0f%%), verify %.3fs (%.0f%%), other %.3fs (%.0f%%)\n",
      st.draft_seconds, 100 * st.draft_seconds / total, st.verify_seconds,
      100 * st.verify_seconds / total, st.other_seconds, 100 * st.other_seconds / total);
}

}  // namespace eagle2::cli

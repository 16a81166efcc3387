#include "speculative/drafter_spec.h"

#include <algorithm>
#include <filesystem>
#include <functional>
#include <sstream>
#include <vector>

#include "core/error.h"
#include "core/regular_file.h"
#include "speculative/eagle_drafter.h"
#include "speculative/hybrid_drafter.h"
#include "speculative/lookahead_drafter.h"
#include "speculative/lookup_drafter.h"
#include "speculative/medusa_drafter.h"
#include "speculative/sps_drafter.h"

namespace eagle2 {

namespace {

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, sep)) out.push_back(item);
  return out;
}

int to_int(const std::string& s, const std::string& spec) {
  try {
    size_t used = 0;
    const int v = std::stoi(s, &used);
    if (used == s.size() && v >= 0) return v;
  } catch (const std::exception&) {
  }
  fail("drafter '", spec, "': '", s, "' is not a non-negative integer");
}

// Compact JSON, no spaces (a spec is one shell word): "[[0],[1],[0,0]]".
std::string choices_json(const TreeChoices& choices) {
  std::string out = "[";
  for (size_t i = 0; i < choices.size(); ++i) {
    out += i ? ",[" : "[";
    for (size_t j = 0; j < choices[i].size(); ++j) {
      // Appended piece by piece: a concatenation here trips GCC 12's false -Wrestrict.
      if (j) out += ',';
      out += std::to_string(choices[i][j]);
    }
    out += "]";
  }
  return out + "]";
}

// "DIR[:N1[:N2...]]": a folder followed by at most max_numbers integers, taken from the right (a
// folder may hold ':' itself; one whose name ends in ':<digits>' needs its numbers written out).
std::pair<std::string, std::vector<int>> folder_and_numbers(const std::string& rest,
                                                            size_t max_numbers,
                                                            const std::string& spec) {
  std::vector<std::string> parts = split(rest, ':');
  if (!rest.empty() && rest.back() == ':') parts.push_back("");
  std::vector<int> numbers;
  while (parts.size() > 1 && numbers.size() < max_numbers && !parts.back().empty() &&
         parts.back().find_first_not_of("0123456789") == std::string::npos) {
    numbers.insert(numbers.begin(), to_int(parts.back(), spec));
    parts.pop_back();
  }
  std::string folder;
  for (size_t i = 0; i < parts.size(); ++i) folder += (i ? ":" : "") + parts[i];
  if (folder.empty()) fail("drafter '", spec, "': the folder is missing");
  return {folder, numbers};
}

void parse_sps(const std::string& text, const std::string& rest, DrafterSpec& d) {
  auto [folder, numbers] = folder_and_numbers(rest, 2, text);
  d.folder = folder;
  if (numbers.size() >= 1) d.sps_depth = numbers[0];
  if (numbers.size() >= 2) d.sps_top_k = numbers[1];
  if (d.sps_top_k < 1 || d.sps_top_k > 64 || d.sps_depth > 63)
    fail("drafter '", text, "': expected sps:DRAFT_DIR[:D[:K]] with D in [0, 63], K in [1, 64]");
}

// A draft model proposes token ids that the target verifies: both must mean the same tokens. The
// vocabulary sizes must agree; when both folders hold a tokenizer file of the same name, the
// files must be identical (a model with its own tokenizer of the same size would draft garbage
// that verification merely rejects, silently).
void check_same_tokens(const LlamaModel& draft, const LlamaModel& target, const std::string& spec) {
  if (draft.config().vocab_size != target.config().vocab_size)
    fail("drafter '", spec, "': the draft model's vocabulary has ", draft.config().vocab_size,
         " tokens, the target's ", target.config().vocab_size,
         " (a draft model must share the target's tokenizer)");
  namespace fs = std::filesystem;
  for (const char* name : {"tokenizer.model", "tokenizer.json"}) {
    const fs::path a = fs::path(draft.dir()) / name, b = fs::path(target.dir()) / name;
    std::error_code ea, eb;
    if (!fs::is_regular_file(a, ea) || !fs::is_regular_file(b, eb)) continue;
    if (read_regular_file(a.string(), read_limit::kTokenizerJson, "tokenizer") !=
        read_regular_file(b.string(), read_limit::kTokenizerJson, "tokenizer"))
      fail("drafter '", spec, "': ", a.string(), " differs from ", b.string(),
           " (a draft model must share the target's tokenizer)");
  }
}

bool is_ablation(const std::vector<std::string>& parts) {
  return !parts.empty() && (parts.back() == "novalue" || parts.back() == "norerank");
}

// The part after "auto" of dynamic:auto and sampled:auto: [:DEPTH:TOP_K], the tree size chosen
// each cycle up to kAutoMaxTokens. `usage` is the spec's form for the error.
void parse_auto_budget(const std::vector<std::string>& parts, const std::string& text,
                       const char* usage, DrafterSpec& d) {
  d.auto_budget = true;
  d.dynamic.total_tokens = DrafterSpec::kAutoMaxTokens;
  if (parts.size() == 3) {
    d.dynamic.depth = to_int(parts[1], text);
    d.dynamic.top_k = to_int(parts[2], text);
  } else if (parts.size() != 1) {
    fail("drafter '", text, "': expected ", usage);
  }
}

// medusa:DIR[:T] and hydra:DIR[:T].
void parse_heads(const std::string& text, const std::string& rest, DrafterSpec& d) {
  auto [folder, numbers] = folder_and_numbers(rest, 1, text);
  d.folder = folder;
  if (!numbers.empty()) d.heads_tokens = numbers[0];
  if (d.heads_tokens < 1 || d.heads_tokens > DrafterSpec::kHeadsMaxTokens)
    fail("drafter '", text, "': expected ", d.kind, ":HEADS_DIR[:T] with T in [1, ",
         DrafterSpec::kHeadsMaxTokens, "]");
}

void parse_dynamic(const std::string& text, std::vector<std::string> parts, DrafterSpec& d) {
  if (!parts.empty() && parts.back() == "cal") {
    d.calibrate = true;
    parts.pop_back();
  }
  // EAGLE-2 without the value or without reranking (docs/SPECULATIVE.md "The ablation").
  if (is_ablation(parts)) {
    if (parts.back() == "novalue") d.dynamic.ranking = DynamicTreeParams::Ranking::OwnConfidence;
    if (parts.back() == "norerank") d.dynamic.rerank = false;
    parts.pop_back();
    if (is_ablation(parts)) fail("drafter '", text, "': at most one of :novalue and :norerank");
  }
  const bool none = parts.empty() || (parts.size() == 1 && parts[0].empty());
  if (none) return;
  if (parts[0] == "auto") {
    parse_auto_budget(parts, text, "dynamic:auto[:DEPTH:TOP_K][:novalue|:norerank][:cal]", d);
    return;
  }
  if (parts.size() != 3)
    fail("drafter '", text,
         "': expected dynamic:TOTAL_TOKENS:DEPTH:TOP_K[:novalue|:norerank][:cal]");
  // Named, not positional: DynamicTreeParams lists top_k, depth, total_tokens, the reverse of
  // the spec's T:D:K.
  d.dynamic.total_tokens = to_int(parts[0], text);
  d.dynamic.depth = to_int(parts[1], text);
  d.dynamic.top_k = to_int(parts[2], text);
}

std::unique_ptr<Drafter> make_sps_drafter(const DrafterSpec& spec, ThreadPool& pool, int64_t ctx,
                                          DraftAssets& assets) {
  LlamaModel* target = assets.target();
  if (!target) fail("drafter '", spec.label, "' needs the target model (internal error)");
  const std::function<std::unique_ptr<LlamaModel>()> load = [&] {
    std::unique_ptr<LlamaModel> draft = LlamaModel::load(spec.folder);
    check_same_tokens(*draft, *target, spec.label);
    return draft;
  };
  SpsDrafterOptions o;
  o.depth = spec.sps_depth;
  o.top_k = spec.sps_top_k;
  o.context = ctx;
  return std::make_unique<SpsDrafter>(assets.get<LlamaModel>("sps", spec.folder, load), pool, o);
}

// ...@HEAD_DIR: the head, loaded once per engine (DraftAssets) and quantized as --draft-weights
// auto does, so that it drafts as it would as the engine's --draft head.
std::shared_ptr<EagleHead> own_head(const DrafterSpec& spec, DraftAssets& assets) {
  LlamaModel* target = assets.target();
  if (!target) fail("drafter '", spec.label, "' needs the target model (internal error)");
  const std::function<std::unique_ptr<EagleHead>()> load = [&] {
    std::unique_ptr<EagleHead> head = EagleHead::load(spec.head, *target);
    if (const auto type = EagleHead::weights_type_for(*target)) head->quantize_weights(*type);
    return head;
  };
  return assets.get<EagleHead>("eagle-head", spec.head, load);
}

// "lookahead" (the defaults) or "lookahead:W:N:G", all three or none.
void parse_lookahead(const std::string& text, const std::string& rest, DrafterSpec& d) {
  if (text == "lookahead") return;
  const std::vector<std::string> parts = split(rest, ':');
  if (parts.size() != 3 || rest.empty() || rest.back() == ':')
    fail("drafter '", text,
         "': expected lookahead[:W:N:G] (window, n-gram size, n-grams verified)");
  d.lookahead.window = to_int(parts[0], text);
  d.lookahead.ngram_size = to_int(parts[1], text);
  d.lookahead.verify_ngrams = to_int(parts[2], text);
  d.lookahead.validate("drafter '" + text + "'");
}

// "suffix", "suffix:T", "suffix:T:D" or "suffix:T:D:P".
void parse_suffix(const std::string& text, const std::string& rest, DrafterSpec& d) {
  if (text == "suffix") return;
  const std::vector<std::string> parts = split(rest, ':');
  if (rest.empty() || rest.back() == ':' || parts.empty() || parts.size() > 3)
    fail("drafter '", text,
         "': expected suffix[:T[:D[:P]]] (tree tokens, draft levels after the first, minimum "
         "frequency %)");
  int* fields[] = {&d.suffix.tokens, &d.suffix.depth, &d.suffix.min_percent};
  for (size_t i = 0; i < parts.size(); ++i) *fields[i] = to_int(parts[i], text);
  d.suffix.validate("drafter '" + text + "'");
}

}  // namespace

namespace {

DrafterSpec parse_drafter_spec_body(const std::string& text) {
  DrafterSpec d;
  d.label = text;
  const auto colon = text.find(':');
  d.kind = text.substr(0, colon);
  const std::string rest = colon == std::string::npos ? "" : text.substr(colon + 1);
  if (d.kind == "plain" || d.kind == "none") {
    if (!rest.empty()) fail("drafter '", text, "' takes no parameters");
  } else if (d.kind == "lookup") {
    if (!rest.empty()) d.lookup_depth = to_int(rest, text);
  } else if (d.kind == "chain") {
    if (!rest.empty()) d.chain_depth = to_int(rest, text);
  } else if (d.kind == "static") {
    if (rest.empty()) {
      d.choices = mc_sim_7b_63();
    } else if (rest.find_first_not_of("0123456789") == std::string::npos) {
      // static:N: EAGLE-1's tree pruned to N tokens (root included), keeping its first paths (they
      // are listed shallow first, so every kept path keeps its prefix).
      const int n = to_int(rest, text);
      const auto& full = mc_sim_7b_63();
      if (n < 2 || n > static_cast<int>(full.size()) + 1)
        fail("drafter '", text, "': a pruned static tree has 2 to ", full.size() + 1, " tokens");
      d.choices.assign(full.begin(), full.begin() + (n - 1));
    } else {
      d.choices = parse_tree_choices(rest, "drafter '" + text + "'");
    }
  } else if (d.kind == "dynamic") {
    parse_dynamic(text, split(rest, ':'), d);
  } else if (d.kind == "sampled") {
    // A tree of siblings sampled from the head's q (EagleDrafterOptions::Shape::Sampled), at most
    // T tokens, D + 1 levels, K siblings per node; by default the budget of dynamic:8:6:2.
    d.dynamic.total_tokens = DrafterSpec::kSampledDefaultTokens;
    d.dynamic.depth = DrafterSpec::kSampledDefaultDepth;
    d.dynamic.top_k = DrafterSpec::kSampledDefaultTopK;
    const std::vector<std::string> parts =
        rest.empty() ? std::vector<std::string>{} : split(rest, ':');
    if (!parts.empty() && parts[0] == "auto") {
      // sampled:auto[:D:K]: each cycle keeps the first T - 1 paths of the shape, T chosen from
      // the sibling counts of the request's temperature and the verify cost.
      parse_auto_budget(parts, text, "sampled:auto[:DEPTH:TOP_K]", d);
    } else if (!parts.empty()) {
      if (parts.size() != 3)
        fail("drafter '", text,
             "': expected sampled[:TOTAL_TOKENS:DEPTH:TOP_K] or sampled:auto[:DEPTH:TOP_K]");
      d.dynamic.total_tokens = to_int(parts[0], text);
      d.dynamic.depth = to_int(parts[1], text);
      d.dynamic.top_k = to_int(parts[2], text);
    }
    if (d.dynamic.total_tokens < 1 || d.dynamic.depth < 0 || d.dynamic.top_k < 1)
      fail("drafter '", text,
           "': sampled:T:D:K needs T >= 1 tokens, D >= 0 levels after the first, K >= 1");
  } else if (d.kind == "sps") {
    parse_sps(text, rest, d);
  } else if (d.kind == "lookahead") {
    parse_lookahead(text, rest, d);
  } else if (d.kind == "medusa" || d.kind == "hydra") {
    parse_heads(text, rest, d);
  } else if (d.kind == "suffix") {
    parse_suffix(text, rest, d);
  } else {
    fail("unknown drafter '", text,
         "' (plain, none, lookup[:D], chain[:D], static[:N|:JSON], "
         "dynamic[:T:D:K][:novalue|:norerank][:cal], "
         "dynamic:auto[:D:K][:novalue|:norerank][:cal], DYNAMIC+suffix[:T[:D[:P]]], "
         "sampled[:T:D:K], sps:DRAFT_DIR[:D[:K]], lookahead[:W:N:G], "
         "suffix[:T[:D[:P]]], medusa:HEADS_DIR[:T], hydra:HEADS_DIR[:T])");
  }
  return d;
}

}  // namespace

DrafterSpec parse_drafter_spec(const std::string& full_text) {
  // "SPEC@HEAD_DIR": the first '@' ends the spec (no spec parameter holds one; a folder may).
  const auto at = full_text.find('@');
  const std::string text = full_text.substr(0, at);
  // "DYNAMIC+suffix[...]": a hybrid tree. Only after a dynamic spec: a folder (sps:DIR...) may
  // hold a '+'.
  const auto plus = text.starts_with("dynamic") ? text.find('+') : std::string::npos;
  DrafterSpec d = parse_drafter_spec_body(text.substr(0, plus));
  if (plus != std::string::npos) {
    const std::string part = text.substr(plus + 1);
    if (d.kind != "dynamic" || !part.starts_with("suffix") || (part.size() > 6 && part[6] != ':'))
      fail("drafter '", full_text,
           "': expected DYNAMIC+suffix[:T[:D[:P]]] (a dynamic spec, then the suffix drafter's "
           "own parameters)");
    try {
      parse_suffix(part, part.size() > 6 ? part.substr(7) : "", d);
    } catch (const Error& e) {
      fail("drafter '", full_text, "': ", e.what());  // names the whole spec, then the part
    }
    d.with_suffix = true;
    d.calibrate = true;  // one calibrated estimate ranks both sources' nodes
  }
  d.label = full_text;
  if (at != std::string::npos) {
    d.head = full_text.substr(at + 1);
    if (!d.needs_head())
      fail("drafter '", full_text,
           "': only chain, static, dynamic and sampled drafters take an EAGLE head "
           "(@HEAD_DIR)");
    if (d.head.empty()) fail("drafter '", full_text, "': the head folder after '@' is missing");
  }
  return d;
}

namespace {
std::string suffix_string(const SuffixParams& suffix) {
  return "suffix:" + std::to_string(suffix.tokens) + ":" + std::to_string(suffix.depth) + ":" +
         std::to_string(suffix.min_percent);
}
}  // namespace

std::string DrafterSpec::to_string() const {
  return head.empty() ? body_string() : body_string() + "@" + head;
}

std::string DrafterSpec::body_string() const {
  if (kind == "lookup") return "lookup:" + std::to_string(lookup_depth);
  if (kind == "chain") return "chain:" + std::to_string(chain_depth);
  if (kind == "static") {
    const TreeChoices& full = mc_sim_7b_63();
    if (choices == full) return "static";
    if (!choices.empty() && choices.size() < full.size() &&
        std::equal(choices.begin(), choices.end(), full.begin()))
      return "static:" + std::to_string(choices.size() + 1);
    return "static:" + choices_json(choices);
  }
  if (kind == "dynamic") {
    const std::string dk = std::to_string(dynamic.depth) + ":" + std::to_string(dynamic.top_k);
    return (auto_budget ? "dynamic:auto:" + dk
                        : "dynamic:" + std::to_string(dynamic.total_tokens) + ":" + dk) +
           (dynamic.ranking == DynamicTreeParams::Ranking::OwnConfidence ? ":novalue" : "") +
           (dynamic.rerank ? "" : ":norerank") + (calibrate ? ":cal" : "") +
           (with_suffix ? "+" + suffix_string(suffix) : "");
  }
  if (kind == "sampled")
    return "sampled:" + (auto_budget ? std::string("auto") : std::to_string(dynamic.total_tokens)) +
           ":" + std::to_string(dynamic.depth) + ":" + std::to_string(dynamic.top_k);
  if (kind == "sps")
    // Both numbers always written, so a folder ending in ":<digits>" reads back as itself.
    return "sps:" + folder + ":" + std::to_string(sps_depth) + ":" + std::to_string(sps_top_k);
  if (kind == "lookahead")
    return "lookahead:" + std::to_string(lookahead.window) + ":" +
           std::to_string(lookahead.ngram_size) + ":" + std::to_string(lookahead.verify_ngrams);
  if (kind == "suffix") return suffix_string(suffix);
  if (kind == "medusa" || kind == "hydra")
    return kind + ":" + folder + ":" + std::to_string(heads_tokens);  // T always written, as sps
  return kind;                                                        // plain, none
}

bool DrafterSpec::operator==(const DrafterSpec& o) const {
  return kind == o.kind && dynamic.top_k == o.dynamic.top_k && dynamic.depth == o.dynamic.depth &&
         dynamic.total_tokens == o.dynamic.total_tokens && dynamic.ranking == o.dynamic.ranking &&
         dynamic.rerank == o.dynamic.rerank && auto_budget == o.auto_budget &&
         chain_depth == o.chain_depth && lookup_depth == o.lookup_depth &&
         calibrate == o.calibrate && choices == o.choices && folder == o.folder &&
         sps_depth == o.sps_depth && sps_top_k == o.sps_top_k && lookahead == o.lookahead &&
         suffix == o.suffix && with_suffix == o.with_suffix && heads_tokens == o.heads_tokens &&
         head == o.head;
}

std::unique_ptr<Drafter> make_drafter(const DrafterSpec& spec, EagleHead* head, ThreadPool& pool,
                                      int64_t ctx, DraftPolicies& policies, float temperature) {
  if (spec.kind == "none") return std::make_unique<NoDrafter>();
  // D levels after the first = D + 1 draft tokens, as for a chain.
  if (spec.kind == "lookup") return std::make_unique<LookupDrafter>(3, 1, spec.lookup_depth + 1);
  if (spec.kind == "lookahead") return std::make_unique<LookaheadDrafter>(spec.lookahead);
  if (spec.kind == "suffix")
    return std::make_unique<SuffixDrafter>(spec.suffix, SuffixParams::kMaxNodes,
                                           policies.suffix_index());
  if (spec.kind == "plain") return nullptr;
  if (spec.kind == "sps") return make_sps_drafter(spec, pool, ctx, policies.assets());
  if (spec.kind == "medusa" || spec.kind == "hydra")
    return make_heads_drafter(spec.kind, spec.folder, spec.heads_tokens, spec.label, pool,
                              policies);
  if (!spec.needs_head()) fail("unknown drafter '", spec.label, "'");
  if (!spec.head.empty()) head = own_head(spec, policies.assets()).get();
  if (!head) fail("drafter '", spec.label, "' needs an EAGLE head: pass --draft HEAD_DIR");
  EagleDrafterOptions o;
  o.context = ctx;
  o.dynamic = spec.dynamic;
  if (spec.auto_budget && !policies.cost())
    fail("drafter '", spec.label, "': an auto budget needs the verify cost curve");
  o.auto_budget = spec.auto_budget;
  o.calibrate = spec.calibrate;
  o.chain_depth = spec.chain_depth;
  o.choices = spec.choices;
  o.shape = spec.kind == "chain"     ? EagleDrafterOptions::Shape::Chain
            : spec.kind == "static"  ? EagleDrafterOptions::Shape::Static
            : spec.kind == "sampled" ? EagleDrafterOptions::Shape::Sampled
                                     : EagleDrafterOptions::Shape::Dynamic;
  std::shared_ptr<DraftPolicy> policy = policies.get(*head, temperature);
  if (!spec.with_suffix) return std::make_unique<EagleDrafter>(*head, pool, o, std::move(policy));
  o.record_outcomes = false;  // the hybrid records each source's outcomes apart
  auto eagle = std::make_unique<EagleDrafter>(*head, pool, o, policy);
  auto suffix = std::make_unique<SuffixDrafter>(spec.suffix, SuffixParams::kMaxNodes,
                                                policies.suffix_index());
  return std::make_unique<HybridDrafter>(
      std::move(eagle), std::move(suffix), std::move(policy),
      spec.auto_budget ? DrafterSpec::kAutoMaxTokens : spec.dynamic.total_tokens);
}

}  // namespace eagle2

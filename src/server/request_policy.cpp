#include "server/request_policy.h"

#include <algorithm>
#include <array>
#include <string_view>

#include "eagle2/error.h"
#include "server/api_error.h"

namespace eagle2::server {

namespace {

// Kinds whose drafter loads nothing: what a request may spell out itself.
constexpr std::array<std::string_view, 9> kWeightFreeKinds = {
    "plain", "none", "lookup", "chain", "static", "dynamic", "sampled", "lookahead", "suffix"};
// Kinds that load their own weights from a folder the spec names: the operator's only.
constexpr std::array<std::string_view, 3> kWeightKinds = {"sps", "medusa", "hydra"};

template <size_t N>
bool one_of(const std::array<std::string_view, N>& kinds, std::string_view kind) {
  return std::find(kinds.begin(), kinds.end(), kind) != kinds.end();
}

[[noreturn]] void refuse(const std::string& message) {
  throw ApiError(400, "speculative: " + message, "speculative", "invalid_value");
}

std::string offered(const RequestPolicy& policy) {
  if (policy.drafters.empty()) return "this server offers none (--drafter NAME=SPEC)";
  std::string names;
  for (const auto& [name, spec] : policy.drafters) names += (names.empty() ? "" : ", ") + name;
  return "this server offers: " + names;
}

[[noreturn]] void over(const std::string& what, int64_t got, int limit, const char* flag) {
  refuse(what + " " + std::to_string(got) + " is over this server's limit of " +
         std::to_string(limit) + " (" + flag + ")");
}

void at_most(const std::string& what, int64_t got, int limit, const char* flag) {
  if (got > limit) over(what, got, limit, flag);
}

}  // namespace

void check_draft_limits(const api::DrafterSpec& s, const DraftLimits& l) {
  const char* tokens = "--max-draft-tokens";
  const char* depth = "--max-draft-depth";
  const char* top_k = "--max-draft-top-k";
  if (s.kind == "chain") {
    at_most("chain depth", s.chain_depth, l.max_depth, depth);
    at_most("chain tokens", int64_t{s.chain_depth} + 1, l.max_tokens, tokens);
  } else if (s.kind == "lookup") {
    at_most("lookup depth", s.lookup_depth, l.max_depth, depth);
    at_most("lookup tokens", int64_t{s.lookup_depth} + 1, l.max_tokens, tokens);
  } else if (s.kind == "dynamic") {
    at_most("dynamic tree depth", s.dynamic.depth, l.max_depth, depth);
    at_most("dynamic tree top-k", s.dynamic.top_k, l.max_top_k, top_k);
    // dynamic:auto's trees grow up to DrafterSpec::kAutoMaxTokens (its total_tokens).
    at_most("dynamic tree tokens", s.dynamic.total_tokens, l.max_tokens, tokens);
    if (s.with_suffix) {  // a hybrid's suffix part: the merged tree stays the dynamic one's size
      at_most("suffix tree tokens", s.suffix.tokens, l.max_tokens, tokens);
      at_most("suffix tree depth", s.suffix.depth, l.max_depth, depth);
    }
  } else if (s.kind == "sampled") {
    at_most("sampled tree depth", s.dynamic.depth, l.max_depth, depth);
    at_most("sampled tree siblings", s.dynamic.top_k, l.max_top_k, top_k);
    at_most("sampled tree tokens", s.dynamic.total_tokens, l.max_tokens, tokens);
  } else if (s.kind == "static") {
    at_most("static tree tokens", static_cast<int64_t>(s.choices.size()) + 1, l.max_tokens, tokens);
    for (const std::vector<int>& path : s.choices) {
      at_most("static tree depth", static_cast<int64_t>(path.size()), l.max_depth, depth);
      for (const int rank : path)
        at_most("static tree sibling rank + 1", int64_t{rank} + 1, l.max_top_k, top_k);
    }
  } else if (s.kind == "lookahead") {
    const api::LookaheadParams& p = s.lookahead;
    at_most("lookahead n-gram levels (N - 1)", int64_t{p.ngram_size} - 1, l.max_depth, depth);
    at_most("lookahead rows (W + G) * (N - 1)",
            (int64_t{p.window} + p.verify_ngrams) * (int64_t{p.ngram_size} - 1), l.max_tokens,
            tokens);
    // Each of W and G alone, too: with N = 1 the product above says nothing about them.
    at_most("lookahead window W", p.window, l.max_tokens, tokens);
    at_most("lookahead verified n-grams G", p.verify_ngrams, l.max_tokens, tokens);
  } else if (s.kind == "suffix") {
    at_most("suffix tree tokens", s.suffix.tokens, l.max_tokens, tokens);
    at_most("suffix tree depth", s.suffix.depth, l.max_depth, depth);
  }
}

api::DrafterSpec request_drafter(const std::string& text, const RequestPolicy& policy) {
  if (text.size() > kMaxSpecLength)
    refuse("longer than " + std::to_string(kMaxSpecLength) + " bytes");
  if (const auto named = policy.drafters.find(text); named != policy.drafters.end())
    return named->second;
  // Refused on the text alone, before any parsing that could look at the disk, and without
  // repeating it: the answer is the same whatever the folder and whether it exists.
  if (text.find('@') != std::string::npos)
    refuse("a request cannot name a head folder ('@...'): name one of the server's drafters; " +
           offered(policy));
  const std::string kind = text.substr(0, text.find_first_of(":+"));
  if (one_of(kWeightKinds, kind))
    refuse(
        "drafters with weights of their own (sps, medusa, hydra) are chosen by the server's "
        "operator, not by a request: name one of the server's drafters; " +
        offered(policy));
  if (!one_of(kWeightFreeKinds, kind))
    refuse("unknown drafter: name one of the server's drafters (" + offered(policy) +
           ") or a spec: plain, none, lookup[:D], chain[:D], static[:N|:JSON], "
           "dynamic[:T:D:K][:novalue|:norerank][:cal], dynamic:auto[:D:K][...], "
           "sampled[:T:D:K], lookahead[:W:N:G], suffix[:T[:D[:P]]], DYNAMIC+suffix[:T[:D[:P]]]");
  api::DrafterSpec spec;
  try {
    spec = api::parse_drafter_spec(text);  // a weight-free kind: its text names no file
  } catch (const Error& e) {
    refuse(e.what());
  }
  if (loads_weights(spec)) refuse("this drafter loads weights: " + offered(policy));
  check_draft_limits(spec, policy.draft);
  return spec;
}

void check_drafter_name(const std::string& name) {
  const bool valid_chars =
      !name.empty() && name.size() <= 64 &&
      name.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-") ==
          std::string::npos;
  if (!valid_chars) fail("drafter name '", name, "': expected 1 to 64 of A-Z a-z 0-9 _ . -");
  if (one_of(kWeightFreeKinds, name) || one_of(kWeightKinds, name))
    fail("drafter name '", name, "' is a drafter kind: choose another name");
}

bool loads_weights(const api::DrafterSpec& spec) {
  return !spec.folder.empty() || !spec.head.empty() || one_of(kWeightKinds, spec.kind);
}

}  // namespace eagle2::server

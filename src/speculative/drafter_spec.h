// One drafter spec: the text that names a drafter and its parameters, parsed once and used by
// generate (--spec, and its shorthand flags), bench (--drafters), demo (--tree) and the server.
// The grammar is "KIND[:PARAM...]", so that later drafters (sps, medusa, hydra, lookahead,
// ablations) add a kind without touching the others.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "draft/eagle_head.h"
#include "draft/tree_builder.h"
#include "draft/tree_choices.h"
#include "speculative/draft_policy.h"
#include "speculative/drafter.h"
#include "speculative/lookahead_drafter.h"
#include "speculative/suffix_drafter.h"
#include "speculative/tree_budget.h"

namespace eagle2 {

class ThreadPool;

// "plain" (plain decoding, no speculative loop), "none" (plain decoding through the speculative
// loop), "lookup[:D]" (prompt lookup), "chain[:D]", "static" (mc_sim_7b_63), "static:N" (its first
// N - 1 paths: N tokens) or "static:JSON", "dynamic" or "dynamic:T:D:K" (total_tokens, depth,
// top_k), "dynamic:auto" or "dynamic:auto:D:K"; then optionally ":novalue" or ":norerank" (the
// EAGLE-2 paper's ablation: DynamicTreeParams::ranking, rerank; at most one); a dynamic spec
// ending in ":cal" ranks nodes by calibrated confidences (EagleDrafterOptions::calibrate);
// "lookahead" or "lookahead:W:N:G" (lookahead decoding: window, n-gram size, n-grams verified
// per cycle; lookahead_drafter.h); "suffix[:T[:D[:P]]]" (suffix decoding over the request's prompt
// and output: at most T tree tokens, D + 1 levels, nodes of empirical frequency >= P %;
// suffix_drafter.h); "sps:DIR[:D[:K]]" (a draft model), "medusa:DIR[:T]" and
// "hydra:DIR[:T]" (Medusa or Hydra heads in DIR, T tokens per tree); "sampled[:T:D:K]" (a tree of
// siblings sampled from the EAGLE head's q without replacement at temperature > 0, verified by the
// multi-candidate rule: distribution-exact rather than plain sampling's text for the seed; the
// head's top-k in the same shape at temperature 0); a dynamic spec followed by
// "+suffix[:T[:D[:P]]]" is a hybrid tree (hybrid_drafter.h): the head's candidates and a suffix
// drafter's (its own T, D, P as above) ranked by one calibrated acceptance estimate, the tree the
// dynamic part's size; it always ranks calibrated, so ":cal" is implied (and written out by
// to_string). Error for anything else.
// D is always the number of draft levels after the first: a chain or a lookup drafts D + 1 tokens,
// a dynamic tree has D + 1 levels. A chain, static or dynamic spec may end in "@HEAD_DIR": that
// drafter drafts with the EAGLE head in HEAD_DIR instead of the engine's (--draft) head, so one
// bench run can set two heads side by side ("dynamic:8:6:2@models/code-lm-eagle3").
struct DrafterSpec {
  std::string label;  // as the user wrote it (bench's drafter column); not part of equality
  std::string kind;
  DynamicTreeParams dynamic;  // ...:novalue and ...:norerank set its ranking and rerank
  // "dynamic:auto[:D:K]": each cycle's tree size chosen from the target's verify cost curve
  // (tree_budget.h), at most kAutoMaxTokens.
  bool auto_budget = false;
  static constexpr int kAutoMaxTokens = 64;
  int chain_depth = 5;
  // Lookup's default is 6 (7 draft tokens), not the EAGLE drafters' 5: it is what bench and
  // generate both drafted before the spec was unified, so their lookup figures stay comparable
  // with earlier runs; a lookup draft costs no model forward, only verify width.
  static constexpr int kLookupDefaultDepth = 6;
  int lookup_depth = kLookupDefaultDepth;
  bool calibrate = false;  // dynamic ...:cal
  // sampled[:T:D:K] (its numbers live in `dynamic`): by default dynamic:8:6:2's budget;
  // sampled:auto[:D:K] sets auto_budget and T = kAutoMaxTokens, the most a cycle may choose.
  static constexpr int kSampledDefaultTokens = 8;
  static constexpr int kSampledDefaultDepth = 6;
  static constexpr int kSampledDefaultTopK = 2;
  TreeChoices choices;
  // sps:DIR[:D[:K]], medusa:DIR[:T], hydra:DIR[:T]: the folder of the drafter's own weights.
  std::string folder;
  // sps: D draft levels after the first, K children per level (K = 1: a chain of D + 1 tokens).
  static constexpr int kSpsDefaultDepth = 4;
  int sps_depth = kSpsDefaultDepth;
  int sps_top_k = 1;
  // lookahead[:W:N:G]. The bare kind's defaults (2:3:2) are small on purpose: every row of the
  // window and of the n-grams is a row of the target forward, and on a CPU a forward of many rows
  // costs nearly its rows' compute (the reference's W = 15, N = 5, G = 15 is 120 rows); see
  // LookaheadParams and docs/SPECULATIVE.md "Lookahead decoding".
  LookaheadParams lookahead;
  SuffixParams suffix;       // suffix[:T[:D[:P]]], and a hybrid's "+suffix[:T[:D[:P]]]"
  bool with_suffix = false;  // dynamic...+suffix...: a hybrid tree
  // medusa:DIR[:T], hydra:DIR[:T]: T tokens per tree, root included. 8 by default: on this
  // project's 2-core CPU a target forward of 8 tokens costs 1.6-1.9x one token (of 16, 3.5x), and
  // the bundled EAGLE drafters pay best at 8 tokens (chain:6, dynamic:8:6:2:cal); Medusa's weaker
  // deep heads make a wider tree pay less, not more (docs/SPECULATIVE.md).
  static constexpr int kHeadsDefaultTokens = 8;
  static constexpr int kHeadsMaxTokens = 1024;
  int heads_tokens = kHeadsDefaultTokens;
  // chain/static/dynamic ...@HEAD_DIR: the head this drafter drafts with (empty: the engine's).
  // Loaded once per DraftAssets, with the weights type --draft-weights auto gives.
  std::string head;

  // The canonical spec string: parse_drafter_spec(s.to_string()) == s. Defaults are written out
  // ("dynamic" -> "dynamic:60:5:10"), static trees as static, static:N or static:JSON.
  std::string to_string() const;
  std::string body_string() const;  // to_string() without "@HEAD_DIR"
  // The drafter the spec describes, label aside.
  bool operator==(const DrafterSpec& other) const;
  // Whether make_drafter needs an EAGLE head for it.
  bool needs_head() const {
    return kind == "chain" || kind == "static" || kind == "dynamic" || kind == "sampled";
  }
};

DrafterSpec parse_drafter_spec(const std::string& text);

// The drafter of a spec (nullptr for "plain"), for one sequence decoded at `temperature`.
// `head` is required by chain, static and dynamic; their drafters share the engine's policy of
// (head, temperature) from `policies` (whose cost model an auto spec requires).
std::unique_ptr<Drafter> make_drafter(const DrafterSpec& spec, EagleHead* head, ThreadPool& pool,
                                      int64_t ctx, DraftPolicies& policies, float temperature);

}  // namespace eagle2

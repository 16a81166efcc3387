// Drafters: the spec string that names one ("dynamic:60:5:10", "chain:3", "static", "lookup",
// "plain", ...; docs/SPECULATIVE.md), parsed once and shared by generate, bench, demo and the
// server; and the drafter a spec makes for one sequence. A spec is a plain value (copy it, share
// it between threads); a Drafter borrows its head and target (which must outlive it) and serves
// one sequence at a time on one thread. Errors: eagle2::Error (eagle2/error.h).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "eagle2/cost.h"
#include "eagle2/head.h"
#include "eagle2/model.h"
#include "eagle2/runtime.h"

namespace eagle2::api {

// A static tree as paths of sibling ranks ([0, 1] = the 2nd child of the 1st child of the root);
// the prefixes of every path come before it.
using TreeChoices = std::vector<std::vector<int>>;
// Parses JSON such as "[[0], [1], [0, 0]]"; `where` names the source in errors.
TreeChoices parse_tree_choices(const std::string& json_text, const std::string& where);
// The same from a JSON file (a regular file of at most 64 MiB).
TreeChoices load_tree_choices(const std::string& path, const std::string& where);

// The EAGLE-2 dynamic tree's parameters (the spec's T:D:K).
struct DynamicTreeParams {
  int top_k = 10;         // K: children per expanded node
  int depth = 5;          // D: expansion levels after the first
  int total_tokens = 60;  // T: tokens verified per cycle, root included
  // The EAGLE-2 paper's ablation (docs/SPECULATIVE.md "The ablation"): rank nodes for expansion
  // and rerank by their value (EAGLE-2) or their own confidence alone (":novalue"); rerank, or
  // keep the nodes selected for expansion (":norerank", rerank = false).
  enum class Ranking { Value, OwnConfidence };
  Ranking ranking = Ranking::Value;
  bool rerank = true;
};

// Lookahead decoding's parameters (the spec's W:N:G).
struct LookaheadParams {
  int window = 2;                                 // W: columns of the Jacobi window
  int ngram_size = 3;                             // N: n-gram length, root included
  int verify_ngrams = 2;                          // G: pooled n-grams verified per cycle, at most
  static constexpr int64_t kMaxTreeTokens = 512;  // (W + G) * (N - 1), root included
};

// Suffix decoding's parameters (the spec's T:D:P).
struct SuffixParams {
  int tokens = 8;        // T: tree tokens, root included, at most 1024
  int depth = 7;         // D: draft levels after the first, at most 63
  int min_percent = 10;  // P: nodes whose path frequency is below P % are not drafted
};

// "plain" (plain decoding, no speculative loop), "none" (the speculative loop with the root
// alone), "lookup[:D]", "suffix[:T[:D[:P]]]", "chain[:D]", "static", "static:N", "static:JSON",
// "dynamic[:T:D:K]", "dynamic:auto[:D:K]", "sampled[:T:D:K]" (at T > 0 siblings sampled from the
// head's q: distribution-exact, not plain sampling's text; docs/SAMPLING.md),
// "lookahead[:W:N:G]"; a dynamic spec may then say
// ":novalue" or
// ":norerank" (at most one), and one ending in ":cal" ranks nodes by calibrated confidences;
// "sps:DRAFT_DIR[:D[:K]]" (a draft model), "medusa:HEADS_DIR[:T]" and "hydra:HEADS_DIR[:T]" (Medusa
// or Hydra heads of the target, T tokens per tree, root included; default 8). A dynamic spec then
// "+suffix[:T[:D[:P]]]" is a hybrid tree: the head's and a suffix drafter's candidates ranked by
// one calibrated acceptance estimate, kept to the dynamic part's tree size (":cal" implied).
// D is always the draft levels after the first: a chain or a lookup drafts D + 1 tokens.
// A chain, static, dynamic or sampled spec may end in "@HEAD_DIR" (that drafter's own EAGLE head).
// Same fields and defaults as the engine's own spec (the conversion is field by field).
struct DrafterSpec {
  std::string label;  // as the user wrote it (bench's drafter column); not part of equality
  std::string kind;
  DynamicTreeParams dynamic;
  bool auto_budget = false;  // dynamic:auto: each cycle's tree size from the verify cost
  static constexpr int kAutoMaxTokens = 64;
  int chain_depth = 5;
  static constexpr int kLookupDefaultDepth = 6;
  int lookup_depth = kLookupDefaultDepth;
  bool calibrate = false;  // dynamic ...:cal
  TreeChoices choices;
  // sps:DIR[:D[:K]], medusa:DIR[:T], hydra:DIR[:T]: the folder of the drafter's own weights.
  std::string folder;
  // sps: D draft levels after the first, K children per level (K = 1: a chain of D + 1 tokens).
  static constexpr int kSpsDefaultDepth = 4;
  int sps_depth = kSpsDefaultDepth;
  int sps_top_k = 1;
  LookaheadParams lookahead;  // lookahead[:W:N:G]
  SuffixParams suffix;        // suffix[:T[:D[:P]]], and a hybrid's "+suffix[:T[:D[:P]]]"
  bool with_suffix = false;   // dynamic...+suffix...: a hybrid tree (implies calibrate)
  // medusa:DIR[:T], hydra:DIR[:T]: T tokens per tree, root included.
  static constexpr int kHeadsDefaultTokens = 8;
  int heads_tokens = kHeadsDefaultTokens;
  // chain/static/dynamic ...@HEAD_DIR: the EAGLE head this drafter drafts with instead of the
  // engine's (eagle2 bench: two heads side by side in one run).
  std::string head;

  // The canonical spec string: parse_drafter_spec(s.to_string()) == s.
  std::string to_string() const;
  // The drafter the spec describes, label aside.
  bool operator==(const DrafterSpec& other) const;
  // Whether drafting needs an EAGLE head (chain, static, dynamic, sampled).
  bool needs_head() const;
};

// Error naming the spec for anything the grammar above does not describe.
DrafterSpec parse_drafter_spec(const std::string& text);

// The drafter of one sequence, with the drafting policy it learns into (its calibration and
// pacing): empty for "plain". Move-only.
class Drafter {
 public:
  Drafter();
  // For a sequence decoded at `temperature` in a context of ctx tokens. `head`: required by chain,
  // static and dynamic (it must outlive the drafter); `cost`: required by dynamic:auto.
  static Drafter make(const DrafterSpec& spec, Head* head, Threads& threads, int64_t ctx,
                      float temperature, const VerifyCost* cost = nullptr);
  // The same for drafters that read the target or load their own weights from the spec's folder
  // (sps:DIR, medusa:DIR, hydra:DIR): `target` is the model the drafts are verified by (it must
  // outlive the drafter). Every other spec makes the same drafter as above.
  static Drafter make(const DrafterSpec& spec, Model& target, Head* head, Threads& threads,
                      int64_t ctx, float temperature, const VerifyCost* cost = nullptr);
  ~Drafter();
  Drafter(Drafter&&) noexcept;
  Drafter& operator=(Drafter&&) noexcept;

  explicit operator bool() const;  // false for "plain"
  std::string name() const;        // as the stats line prints it ("dynamic", "chain", ...)

  struct Impl;  // the library's side of the handle (src/api)
  explicit Drafter(std::unique_ptr<Impl> impl);
  Impl& impl() const { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace eagle2::api

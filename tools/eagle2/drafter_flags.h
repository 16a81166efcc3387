// The drafting flags shared by generate (and later bench): which drafter, its tree budget, and
// how to print what it did.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdio>
#include <optional>
#include <string>

#include "eagle2/drafter.h"
#include "eagle2/generate.h"
#include "eagle2/head.h"
#include "eagle2/model.h"
#include "eagle2/runtime.h"
#include "eagle2/tokenizer.h"

namespace eagle2::cli {

// The shorthand flags (--tree, --total-tokens, --depth, --draft-top-k, --choices, --calibrate)
// build the same DrafterSpec as --spec; the two ways cannot be mixed.
struct DrafterFlags {
  std::string head_dir;  // --draft
  std::string spec;      // --spec: a drafter spec as bench and demo spell it
  bool spec_given = false;
  std::string tree;  // dynamic|static|chain|lookup|none (default: dynamic with --draft)
  // EAGLE2.md: verify batch size, root included; "auto": chosen each cycle from the target's
  // cost curve, measured at start-up.
  std::string total_tokens = "60";
  int depth = 5;               // expansion forwards after level 1
  int top_k = 10;              // K
  std::string choices;         // static tree shape: JSON text or a file holding it
  bool choices_given = false;  // --choices '' is an error, not the default tree
  bool calibrate = false;      // dynamic: calibrated confidences (EagleDrafterOptions::calibrate)
  // Which shorthands were given: --depth matters for lookup only when given (its default depth
  // differs from the EAGLE drafters', DrafterSpec::kLookupDefaultDepth), and any of them next to
  // --spec is a flag error.
  bool depth_given = false, top_k_given = false, total_tokens_given = false;
  int64_t draft_vocab = 0;  // > 0: draft only the N most frequent tokens (HEAD/draft_vocab.tsv)
  std::string draft_weights = "auto";  // --draft-weights: api::Head::load's weights
  bool verbose = false;
};

// --draft-weights auto|as-is|q8_0|q4_0 (api::Head::load).
void add_draft_weights_flag(CLI::App& cmd, std::string& weights);

void add_drafter_flags(CLI::App& cmd, DrafterFlags& flags);
// The shorthands alone (--tree, --total-tokens, --depth, --draft-top-k, --choices, --calibrate),
// refused next to --spec (flags.spec_given): what serve offers besides its own --spec and --draft.
void add_drafter_shorthands(CLI::App& cmd, DrafterFlags& flags);
bool shorthands_given(const DrafterFlags& flags);

// A flag value that must be a drafter spec (parse_drafter_spec's message otherwise: exit 2).
CLI::Validator drafter_spec_check();

// The spec the flags ask for: --spec as given, else the shorthands' ("plain" without --draft and
// --tree: generate's --tree none has always meant plain decoding, not the speculative loop).
// Reads a --choices file.
api::DrafterSpec drafter_spec_from_flags(const DrafterFlags& flags);

// The drafter the flags ask for (empty for plain decoding) and the head it drafts with. The
// drafter owns the policy it learns into (one engine, one sequence: the CLI's whole lifetime).
struct DrafterBundle {
  std::optional<api::Head> head;
  api::Drafter drafter;  // declared after the head: destroyed before it
  explicit operator bool() const { return static_cast<bool>(drafter); }
};
// The target is not const: --total-tokens auto times forwards of it. `temperature`: the one the
// sequence is decoded at (the drafter learns per head and temperature).
DrafterBundle make_drafter(const DrafterFlags& flags, api::Model& target, int64_t ctx,
                           float temperature, api::Threads& threads);

void print_cycle(FILE* out, const api::Cycle& cycle, const api::Tokenizer* tok);

// --draft-vocab N: restricts the head to the N most frequent tokens of HEAD_DIR/draft_vocab.tsv
// (nothing for N = 0).
void apply_draft_vocab(api::Head& head, const std::string& head_dir, int64_t n);
void print_speculative_stats(FILE* out, const std::string& drafter, const api::Stats& st);

}  // namespace eagle2::cli

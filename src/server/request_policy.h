// What a request may ask of this server, decided by the operator at start-up: the drafters it may
// name, and how large anything a request sizes may be. A network client is hostile by default:
// it never names a file (drafters that load weights are offered by name, --drafter NAME=SPEC),
// and every size it controls is checked against these limits before anything is allocated or
// any work starts (docs/SERVER.md "Limits and threat model").
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "eagle2/drafter.h"

namespace eagle2::server {

// The largest drafter a request may ask for (--max-draft-tokens, --max-draft-depth,
// --max-draft-top-k). The operator's own drafters (--spec, --drafter) are not held to them.
struct DraftLimits {
  int max_tokens = 128;  // tokens drafted per cycle, root included
  int max_depth = 32;    // draft levels
  int max_top_k = 16;    // children per expanded node
};

struct RequestPolicy {
  std::map<std::string, api::DrafterSpec> drafters;  // --drafter NAME=SPEC, by NAME
  int64_t max_tokens = int64_t{1} << 30;             // the largest max_tokens (--max-tokens)
  DraftLimits draft;
};

// Fixed limits on a body's shape (not flags: no valid request comes near them).
inline constexpr int kMaxJsonDepth = 64;             // nested arrays and objects
inline constexpr size_t kMaxObjectMembers = 256;     // keys in one JSON object
inline constexpr size_t kMaxMessages = 4096;         // chat messages
inline constexpr size_t kMaxStopLength = 1024;       // bytes of one stop string
inline constexpr size_t kMaxSpecLength = 16 * 1024;  // bytes of "speculative"

// The drafter a request's "speculative" names: one of policy.drafters by name, or a spec that
// loads nothing from disk (plain, none, lookup, chain, static, dynamic, lookahead, suffix) within
// policy.draft. Otherwise ApiError 400 naming "speculative", whose message never repeats a
// folder the request gave: the server says no before it looks at the disk, so the answer is the
// same whether the folder exists or not.
api::DrafterSpec request_drafter(const std::string& text, const RequestPolicy& policy);

// Error unless `spec` is within `limits` (what the message names is only numbers).
void check_draft_limits(const api::DrafterSpec& spec, const DraftLimits& limits);

// Error unless `name` can name a --drafter: 1 to 64 of [A-Za-z0-9_.-], and not a drafter kind
// ("chain", "sps", ...), which would read as a spec.
void check_drafter_name(const std::string& name);

// Whether a spec makes its drafter load weights of its own (a folder or an @HEAD).
bool loads_weights(const api::DrafterSpec& spec);

}  // namespace eagle2::server

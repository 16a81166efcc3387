// The body of POST /v1/completions and /v1/chat/completions, parsed and validated into what the
// server runs. Every problem is an ApiError naming the field (400; 404 for an unknown model), so
// that a client learns what to fix from one response.
//
// Fields (OpenAI's names and meanings; where the server differs, it says so):
//   model        optional; the loaded model's id or "default", else 404
//   prompt       completions: a string, a one-string array, or an array of token ids
//   messages     chat: a non-empty array of {"role": string, "content": string | null |
//                [{"type": "text", "text": string}, ...]} (parts are joined into one string)
//   max_tokens   integer in [1, --max-tokens] (chat also reads max_completion_tokens). Absent: 16
//                for completions, as OpenAI; for chat, to the end of the context (or an EOS)
//   temperature  number in [0, 2]; absent: 0 (greedy, as `eagle2 generate`; OpenAI's is 1)
//   top_p        number in (0, 1];  top_k (extension) integer >= 0, 0 = off
//   seed         integer in [0, 2^64 - 1]; absent: 0. Sampling is keyed by (seed, position), so
//                the same request and seed give the same text whatever else the server runs
//   stop         a string or an array of at most 4 non-empty strings of at most 1024 bytes
//   n            1 only;  best_of 1 only;  echo false only;  suffix null only
//   stream       bool;  stream_options {"include_usage": bool}, only with stream true
//   logprobs     chat: bool, with top_logprobs integer in [0, 20] (only with logprobs true);
//                completions: integer in [0, 20] (OpenAI allows 5), false = off. The target
//                model's log-probs of each generated token (docs/SERVER.md "Log-probs")
//   tools, functions (only empty), tool_choice, function_call (only "none"), response_format
//                (only {"type": "text"}): anything else changes what the answer means, so 400
//   speculative  (extension) the name of one of the server's drafters (--drafter NAME=SPEC), or a
//                spec that loads no weights: "plain", "none", "lookup", "chain:6",
//                "dynamic:auto:8:1:cal", ... (docs/SPECULATIVE.md) within the server's limits;
//                absent: the server's --spec
//   The body: JSON nested at most 64 deep, at most 256 keys per object, at most 4096 messages.
//   accepted and ignored: user, presence_penalty and frequency_penalty when 0, logit_bias when
//                empty, and any other field not listed here.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "eagle2/drafter.h"
#include "eagle2/generate.h"
#include "server/request_policy.h"

namespace eagle2::server {

enum class Endpoint { Completions, Chat };

struct CompletionRequest {
  Endpoint endpoint = Endpoint::Completions;
  // Completions: the prompt text, or (prompt_is_ids) its token ids.
  std::string prompt;
  bool prompt_is_ids = false;
  std::vector<int32_t> prompt_ids;
  // Chat: the messages as a JSON array text (key order kept: templates may show it with tojson).
  std::string messages_json;

  std::optional<int64_t> max_tokens;  // absent: the endpoint's default (see above)
  api::SamplingOptions sampling;
  std::vector<std::string> stop;
  bool stream = false;
  bool include_usage = false;  // stream_options.include_usage: a last chunk with the usage
  // -1: no log-probs; N >= 0: each token's log-prob and the N most likely alternatives.
  int32_t logprobs = -1;
  std::optional<api::DrafterSpec> speculative;  // absent: the server's default
};

// The most log-prob alternatives per token a request may ask (chat's top_logprobs, OpenAI's
// limit; completions' logprobs, where OpenAI stops at 5).
constexpr int32_t kMaxLogprobs = 20;

// OpenAI's default max_tokens for /v1/completions.
constexpr int64_t kDefaultCompletionTokens = 16;

// `model_id`: the loaded model's id (what /v1/models lists); `policy`: the drafters a request may
// name and the server's limits (request_policy.h), checked here, before any work.
CompletionRequest parse_completion_request(const std::string& body, Endpoint endpoint,
                                           const std::string& model_id,
                                           const RequestPolicy& policy = {});

}  // namespace eagle2::server

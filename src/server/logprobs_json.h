// choices[].logprobs in OpenAI's two shapes, from the engine's per-token log-probs (the target's
// log-softmax at temperature 1: docs/SERVER.md "Log-probs"):
//   chat:        {"content": [{"token", "logprob", "bytes", "top_logprobs": [{"token", "logprob",
//                "bytes"}, ...]}, ...], "refusal": null}
//   completions: {"tokens": [...], "token_logprobs": [...], "top_logprobs": [{token: logprob, ...},
//                ...], "text_offset": [...]}
// A token's text is the bytes it adds mid-text (Tokenizer::token_bytes), shown as UTF-8 with any
// incomplete character as U+FFFD; "bytes" has them exactly.
#pragma once

#include <cstdint>
#include <vector>

#include "eagle2/tokenizer.h"
#include "server/openai_response.h"

namespace eagle2::server {

Json chat_logprobs_json(const std::vector<TokenText>& tokens, const api::Tokenizer& tok);

// text_offset: where each token's text starts in the completion's text, in characters (Unicode
// code points, as OpenAI counts them) from its start;
// `offset` is where `tokens` begin (a stream's earlier chunks), and is advanced past them.
Json completion_logprobs_json(const std::vector<TokenText>& tokens, const api::Tokenizer& tok,
                              int64_t& offset);

}  // namespace eagle2::server

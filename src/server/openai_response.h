// The JSON the server answers with, in OpenAI's shapes so that its clients read it unchanged:
// completion and chat.completion objects, their streamed chunks in server-sent events, model
// objects, and errors. Extensions are named as such: usage.target_forwards and usage.tau, and
// x_eagle2.tokens on every streamed chunk that carries tokens.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "eagle2/engine.h"
#include "server/openai_request.h"

namespace eagle2::server {

// Insertion order kept: objects read as OpenAI's documentation prints them.
using Json = nlohmann::ordered_json;

// One generated token's text (TextStream::push's output: empty while a UTF-8 character is
// incomplete) and whether it was an accepted draft token (false: the target's own token).
struct TokenText {
  std::string text;
  bool drafted = false;
  int32_t id = 0;
  api::TokenLogprobs logprobs;  // when the request asked for them
  std::string source{};         // TokenPiece::source; written as "source" when not empty
};

struct Usage {
  int64_t prompt_tokens = 0;
  int64_t completion_tokens = 0;
  int64_t target_forwards = 0;  // extension: decode-phase target forwards
  double tau = 0;               // extension: tokens committed per target forward
  // Extension, hybrid trees only (all zero otherwise, and then not written): tree nodes drafted
  // and accepted per source, as "drafted_by_source" / "accepted_by_source": {"head", "suffix"}.
  int64_t head_drafted = 0, head_accepted = 0, suffix_drafted = 0, suffix_accepted = 0;
  // Extension, speculative requests that drafted (empty otherwise, and then not written): tree
  // nodes drafted and accepted per depth, [0] the root's children, as "drafted_by_depth" /
  // "accepted_by_depth" (the last entry counts every deeper node too, past 16 levels).
  std::vector<int64_t> drafted_by_depth{}, accepted_by_depth{};
};

// What every object of one response shares.
struct ResponseHeader {
  std::string id;       // "cmpl-..." or "chatcmpl-..."
  int64_t created = 0;  // Unix seconds
  std::string model;
  Endpoint endpoint = Endpoint::Completions;
};
ResponseHeader make_response_header(Endpoint endpoint, const std::string& model);

Json usage_json(const Usage& usage);

// The whole answer of a non-streaming request. finish_reason: "stop" or "length".
// logprobs: choices[0].logprobs (logprobs_json.h), null when not asked for.
Json completion_json(const ResponseHeader& h, const std::string& text,
                     const std::string& finish_reason, const Usage& usage, Json logprobs = nullptr);

// One streamed chunk: `text` new text, `tokens` the tokens it came from. Chat: the first chunk's
// delta carries the role. finish_reason: empty but on the last chunk (whose delta is empty).
// usage_null: with stream_options.include_usage every chunk carries "usage": null, as OpenAI's.
Json chunk_json(const ResponseHeader& h, const std::string& text,
                const std::vector<TokenText>& tokens, bool first, const std::string& finish_reason,
                bool usage_null, Json logprobs = nullptr);
// stream_options.include_usage: the chunk after the last, with no choices and the usage.
Json usage_chunk_json(const ResponseHeader& h, const Usage& usage);

// The text of a JSON value. Bytes that are not UTF-8 (a model may emit any byte tokens) become
// U+FFFD instead of failing the response midway.
std::string json_text(const Json& j);

// Server-sent events framing.
std::string sse_event(const Json& data);
inline constexpr const char* kSseDone = "data: [DONE]\n\n";

// {"error": {"message", "type", "param", "code"}}; the type follows from the status.
Json error_json(int status, const std::string& message, const std::string& param = {},
                const std::string& code = {});

// /v1/models and /v1/models/{id}.
Json model_json(const std::string& model_id, int64_t created);
Json models_json(const std::string& model_id, int64_t created);

}  // namespace eagle2::server

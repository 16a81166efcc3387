// HTTP requests to eagle2 serve for the server tests: JSON in and out, and streamed responses
// read as server-sent events, on cpp-httplib's client.
#pragma once

#include <httplib.h>

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace eagle2::test {

struct SseResult {
  int status = 0;  // the HTTP status; 0 when the connection failed or was abandoned
  std::string content_type;
  std::string retry_after;             // the Retry-After header (503)
  std::string raw;                     // the body as received
  std::vector<nlohmann::json> events;  // each "data: {...}" event, parsed
  bool done = false;                   // "data: [DONE]" arrived, as the last event
};

// POSTs `body` to `path` and reads the response as it streams. on_event sees each parsed event
// as it arrives; returning false hangs up (the connection is closed mid-stream).
SseResult post_sse(httplib::Client& client, const std::string& path, const nlohmann::json& body,
                   const httplib::Headers& headers = {},
                   const std::function<bool(const nlohmann::json&)>& on_event = nullptr);

// Joins the streamed text of completion or chat chunks (choices[0].text or .delta.content).
std::string joined_text(const SseResult& r);

// The finish_reason of the last chunk that has one ("" if none).
std::string finish_reason(const SseResult& r);

}  // namespace eagle2::test

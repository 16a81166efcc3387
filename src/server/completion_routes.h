// POST /v1/completions and /v1/chat/completions: parse, tokenize, submit to the scheduler, and
// answer with one JSON object or a stream of server-sent events.
#pragma once

#include <httplib.h>

#include <string>

#include "server/api_error.h"
#include "server/openai_request.h"
#include "server/server_state.h"

namespace eagle2::server {

// Answers the request, whose body (read by the caller within --max-body) is `body`. Throws
// ApiError for a request refused before it reached the scheduler (the caller records the status
// in the metrics; the scheduler records the rest).
void handle_completion(ServerState& state, Endpoint endpoint, const std::string& body,
                       httplib::Response& res);

// An OpenAI-shaped error response.
void send_error(httplib::Response& res, const ApiError& error);

}  // namespace eagle2::server

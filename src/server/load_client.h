// A client of OpenAI-style completion endpoints, for eagle2 bench-serve and the server's load
// tests: one request (streaming or not) with its text, usage and timings, and optionally a client
// that hangs up after some chunks (what a user closing the tab does). Works against any server
// that speaks the API (eagle2 serve, llama-server).
#pragma once

#include <cstdint>
#include <string>

namespace eagle2::server {

struct LoadRequest {
  std::string path = "/v1/completions";
  std::string body;  // the JSON request (its "stream" decides how the answer is read)
  bool stream = false;
  // Streaming: close the connection after this many chunks (-1: read to the end).
  int64_t hang_up_after_chunks = -1;
  // Streaming: sleep this long after each chunk (a slow reader).
  int64_t chunk_delay_ms = 0;
  std::string api_key;  // sent as a bearer token when not empty
};

struct LoadResult {
  int status = 0;            // HTTP status; 0 when no response came (connection error)
  bool hung_up = false;      // the client closed the connection on purpose
  bool done_marker = false;  // streaming: "data: [DONE]" arrived
  std::string text;          // choices[0].text, or the chat message / deltas concatenated
  std::string finish_reason;
  std::string body;             // non-streaming: the whole body (errors too)
  int64_t chunks = 0;           // streaming: data chunks before [DONE]
  int64_t drafted_tokens = 0;   // streaming: x_eagle2.tokens entries marked drafted
  int64_t streamed_tokens = 0;  // streaming: x_eagle2.tokens entries
  int64_t prompt_tokens = -1, completion_tokens = -1, target_forwards = -1;
  double tau = -1;
  double seconds = 0;               // request sent -> last byte
  double first_token_seconds = -1;  // streaming: request sent -> first chunk with text
  std::string error;                // a transport or parse failure
};

// One request to host:port. Never throws: failures are in `error`/`status`.
LoadResult send_request(const std::string& host, int port, const LoadRequest& request,
                        int timeout_seconds = 600);

// GET path, returning (status, body); status 0 on a connection error.
std::pair<int, std::string> http_get(const std::string& host, int port, const std::string& path);

// The value of an unlabelled sample ("name value") in Prometheus text; -1 when absent.
double metric_value(const std::string& metrics_text, const std::string& name);

}  // namespace eagle2::server

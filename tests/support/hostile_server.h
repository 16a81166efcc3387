// The server the hostile suites (tests/hostile/) attack, and the checks they share: `eagle2 serve`
// on stories260K with its EAGLE head, two drafters offered by name (one with its own head folder,
// one a draft model) and a small --max-body, over real loopback sockets.
#pragma once

#include <httplib.h>

#include <cstddef>
#include <memory>
#include <string>

#include "support/serve_process.h"

namespace eagle2::test {

inline constexpr const char* kHostileModel = "data/models/stories260K-hf/config.json";
inline constexpr const char* kHostileHead = "data/models/stories260K-eagle-head/config.json";
inline constexpr const char* kHostilePrompt = "Once upon a time";
inline constexpr int kHostileTokens = 8;

struct HostileServer {
  std::string model_dir, head_dir;
  std::string expected;        // generate's text for kHostilePrompt, kHostileTokens tokens
  std::string generate_error;  // why that text could not be made (empty when it was)
  std::unique_ptr<ServeProcess> server;  // port() 0 when it did not start
};

// Starts it with --max-body `max_body`. Needs ../shared (EAGLE2_SHARED_FILE(..., kHostileModel)
// first); without it, returns a server-less HostileServer.
std::unique_ptr<HostileServer> start_hostile_server(size_t max_body);

// POST of a JSON body, with generous timeouts (60 s read, 10 s write).
httplib::Result post_json(const HostileServer& s, const std::string& path, const std::string& body,
                          const httplib::Headers& headers = {});

// The server is alive and a normal request gets generate's text (gtest failures otherwise).
void expect_still_serving(const HostileServer& s);

// A body for a failure message: bytes outside printable ASCII as \xNN, at most 300.
std::string printable(const std::string& body);

}  // namespace eagle2::test

// eagle2 serve: an OpenAI-compatible HTTP server over the scheduler (cpp-httplib). The CLI builds
// one from its flags and runs it; tests run one in-process on an ephemeral port.
//
// Routes: GET / (the web page), GET /health, GET /metrics (Prometheus), GET /v1/models,
// GET /v1/models/{id}, POST /v1/completions, POST /v1/chat/completions. With an API key, the
// /v1/ routes need "Authorization: Bearer KEY"; /, /health and /metrics never do. Before any
// route: the Host and Origin checks and CORS of browser_guard.h (OPTIONS is answered there).
//
// This header sees only the standard library and server_options.h: the CLI, which may include
// nothing of the engine's internals, includes it (the rest lives behind the pointer).
#pragma once

#include <memory>
#include <string>

#include "server/server_options.h"

namespace eagle2::server {

class Server {
 public:
  // Loads the model (and head, tokenizer, template), measures the verify cost, starts the
  // scheduler and binds host:port. Error when any of it fails (a port in use, a bad model...); a
  // port in use fails first, before the load.
  explicit Server(const ServerOptions& options);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  int port() const;  // the bound port (the ephemeral one for port 0)
  // "model code-lm, head code-lm-eagle, spec dynamic:auto:8:1:cal, parallel 4"
  std::string summary() const;
  // The drafter spec of requests without "speculative", as written.
  std::string default_spec() const;

  // Serves until stop(): then stops accepting connections, lets admitted requests decode to
  // their end for at most --drain-timeout (then they end with their text so far and a
  // shutting-down error; queued ones get 503), and returns once every handler has finished.
  // Once only.
  void run();
  // From any thread, before or during run(). Does not wait.
  void stop();
  // From now on, for the server's lifetime, SIGINT and SIGTERM call stop(), and a second one
  // exits the process at once (and SIGPIPE is ignored). Call it before announcing the server, so
  // that a signal sent as soon as the announcement is read stops it gracefully rather than killing
  // it.
  void stop_on_signals();
  // stop_on_signals(), then run().
  void run_until_signal();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace eagle2::server

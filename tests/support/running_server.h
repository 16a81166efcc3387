// `eagle2 serve` in-process for a test: a server running on its own thread for the object's
// lifetime, stopped and joined however the test leaves its scope (an ASSERT returns early, and
// a thread still joinable when it is destroyed would end the process instead of failing the
// test).
#pragma once

#include <httplib.h>

#include <memory>
#include <thread>

#include "server/http_server.h"

namespace eagle2::test {

class RunningServer {
 public:
  explicit RunningServer(const server::ServerOptions& o)
      : server_(std::make_unique<server::Server>(o)), thread_([this] { server_->run(); }) {}
  ~RunningServer() {
    server_->stop();
    thread_.join();
  }
  RunningServer(const RunningServer&) = delete;
  RunningServer& operator=(const RunningServer&) = delete;

  int port() const { return server_->port(); }
  // Starts the server's shutdown (as SIGTERM does) without waiting for it.
  void stop() { server_->stop(); }
  httplib::Client client() const {
    httplib::Client c("127.0.0.1", server_->port());
    c.set_read_timeout(60);
    return c;
  }

 private:
  std::unique_ptr<server::Server> server_;
  std::thread thread_;
};

}  // namespace eagle2::test

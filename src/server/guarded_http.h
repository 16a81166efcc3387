// cpp-httplib's server with connections that slow, idle or surplus clients cannot use to starve
// it (issue 43, "Connections"; docs/SERVER.md "Limits and threat model").
//
// Why not httplib 0.11.4 as it is: each connection holds one thread of its pool for its whole
// life, the pool's queue is unbounded, and its only read limit is per read() (5 s), so a client
// that sends one header byte every 4 s holds a thread forever; with every thread held, new
// connections (a /health check included) wait in the queue unseen. So:
// - process_and_close_socket (virtual in httplib) is replaced by a loop of our own around
//   httplib's process_request, over a Stream of our own (ConnectionStream) whose reads stop at a
//   deadline for the whole request (head and body: --read-timeout) and at kMaxHeadBytes of
//   head, with --keep-alive-timeout between requests and at most --keep-alive-max of them.
// - new_task_queue gives (a handle onto) a queue that runs at most --max-connections connections
//   on as many threads; a connection beyond them goes, on the accepting thread, to the
//   OverflowLane, which answers /health and gives 503 to anything else at once. httplib's queue API
//   hands over a closure, not the socket: the closure calls process_and_close_socket(sock)
//   synchronously, so the queue runs it inline with a thread-local mark that makes
//   process_and_close_socket hand the socket to the lane instead of serving it.
#pragma once

#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>

#include "server/overflow_lane.h"

namespace eagle2::server {

struct ConnectionLimits {
  size_t max_connections = 72;  // served at once, each on its own thread
  std::chrono::seconds read_timeout{10};
  std::chrono::seconds keep_alive_timeout{5};
  size_t keep_alive_max = 100;  // requests per connection
  std::chrono::seconds write_timeout{5};
  // --max-body: with the head, what bounds a request's bytes (request_byte_budget()).
  size_t max_body = size_t{1} << 20;
};

class GuardedHttpServer : public httplib::Server {
 public:
  // `overflow`: the lane's answer to a connection beyond max_connections.
  GuardedHttpServer(ConnectionLimits limits,
                    std::function<std::string(const OverflowRequest&)> overflow);
  ~GuardedHttpServer() override;

  const ConnectionLimits& limits() const { return limits_; }
  int64_t connections_open() const { return open_; }
  int64_t connections_refused() const { return lane_.answered(); }

  // The largest request head (request line and headers) read before its handler runs; more and
  // the request gets 400. httplib 0.11.4 bounds each line (8 KiB) but not their number.
  static constexpr size_t kMaxHeadBytes = 65536;
  // The most bytes read for one request, head and body with their framing: httplib 0.11.4
  // reads chunk-size lines (and their extensions) byte by byte into an unbounded string that no
  // content receiver sees, so --max-body alone does not bound them. Past it, the request is cut
  // off (400) and the connection closed.
  static size_t request_byte_budget(size_t max_body) {
    return kMaxHeadBytes + max_body + std::max<size_t>(65536, max_body / 2);
  }

 protected:
  bool process_and_close_socket(socket_t sock) override;

 private:
  class Queue;
  ConnectionLimits limits_;
  OverflowLane lane_;
  std::atomic<int64_t> open_{0};
  std::unique_ptr<Queue> queue_;  // its threads are made with the server (an error if they cannot)
};

enum class CutOff { None, Deadline, HeadTooLarge, RequestTooLarge };
// For httplib's error handler: why the server stopped reading the current request, if it did.
CutOff request_cut_off();

// For a handler, about the connection its request came on (false/no-op outside a handler).
// Whether the client has gone: it closed or reset the connection, or shut down its sending side
// (nothing more can come, and an HTTP/1.1 client does that only when it is leaving).
bool client_gone();
// The request's head has been read: from here on only --max-body bounds what is read.
void request_head_read();

}  // namespace eagle2::server

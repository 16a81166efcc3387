#include "server/guarded_http.h"

#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "eagle2/error.h"

namespace eagle2::server {

namespace {

using Clock = std::chrono::steady_clock;

// poll() for `events` until `deadline`, through EINTR. False at the deadline, and (given
// `listening`) within 100 ms of the server's stop, when httplib closes its listening socket: a
// stopping server must not wait for a client's --read-timeout.
bool wait_for(int sock, short events, Clock::time_point deadline,
              const std::atomic<socket_t>* listening = nullptr) {
  for (;;) {
    if (listening && *listening == INVALID_SOCKET) return false;
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return false;
    pollfd p{sock, events, 0};
    const int r = ::poll(&p, 1, static_cast<int>(std::min<int64_t>(left, 100)));
    if (r > 0) return true;
    if (r < 0 && errno != EINTR) return false;
  }
}

void ip_and_port(int sock, bool remote, std::string& ip, int& port) {
  sockaddr_storage a{};
  socklen_t size = sizeof a;
  const int r = remote ? getpeername(sock, reinterpret_cast<sockaddr*>(&a), &size)
                       : getsockname(sock, reinterpret_cast<sockaddr*>(&a), &size);
  if (r != 0) return;
  char host[NI_MAXHOST], service[NI_MAXSERV];
  if (getnameinfo(reinterpret_cast<sockaddr*>(&a), size, host, sizeof host, service, sizeof service,
                  NI_NUMERICHOST | NI_NUMERICSERV) != 0)
    return;
  ip = host;
  port = std::atoi(service);
}

// One connection's socket as httplib reads and writes it: buffered reads that end at the
// request's deadline and (until its head is read) at kMaxHeadBytes; writes that wait at most the
// write timeout for room. Used by the connection's thread only.
class ConnectionStream final : public httplib::Stream {
 public:
  ConnectionStream(int sock, const ConnectionLimits& limits, const std::atomic<socket_t>& listening)
      : sock_(sock), limits_(limits), listening_(listening) {}

  void start_request(Clock::time_point deadline) {
    deadline_ = deadline;
    head_bytes_ = 0;
    request_bytes_ = 0;
    head_done_ = false;
  }
  // Why a read of this request was stopped (httplib then answers 400 and would read on; the
  // connection closes instead, and the error handler names the reason).
  CutOff cut_off() const { return cut_off_; }
  void head_done() { head_done_ = true; }

  // Waits for the next request's first byte for at most `idle`; false when none comes, the
  // client closed, or the server stops (`listening` turns invalid).
  bool wait_for_next_request(std::chrono::seconds idle) {
    return pos_ < end_ || wait_for(sock_, POLLIN, Clock::now() + idle, &listening_);
  }

  bool peer_gone() const {
    pollfd p{sock_, POLLIN | POLLRDHUP, 0};
    if (::poll(&p, 1, 0) <= 0) return false;
    if (p.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)) return true;
    char c = 0;  // readable: more of the request, a pipelined one, or the end of the stream
    return ::recv(sock_, &c, 1, MSG_PEEK | MSG_DONTWAIT) == 0;
  }

  bool is_readable() const override {
    return pos_ < end_ || wait_for(sock_, POLLIN, deadline_, &listening_);
  }
  bool is_writable() const override {
    return wait_for(sock_, POLLOUT, Clock::now() + limits_.write_timeout) && !peer_gone();
  }

  ssize_t read(char* ptr, size_t size) override {
    if (pos_ == end_) {
      if (!head_done_ && head_bytes_ >= GuardedHttpServer::kMaxHeadBytes)
        cut_off_ = CutOff::HeadTooLarge;
      else if (request_bytes_ >= GuardedHttpServer::request_byte_budget(limits_.max_body))
        cut_off_ = CutOff::RequestTooLarge;
      else if (!wait_for(sock_, POLLIN, deadline_, &listening_))
        cut_off_ = CutOff::Deadline;  // the request's time is up (or the server stops)
      if (cut_off_ != CutOff::None) return -1;
      ssize_t got = -1;
      do {
        got = ::recv(sock_, buffer_, sizeof buffer_, 0);
      } while (got < 0 && errno == EINTR);
      if (got <= 0) return got;
      pos_ = 0;
      end_ = static_cast<size_t>(got);
      if (!head_done_) head_bytes_ += end_;
      request_bytes_ += end_;
    }
    const size_t n = std::min(size, end_ - pos_);
    std::memcpy(ptr, buffer_ + pos_, n);
    pos_ += n;
    return static_cast<ssize_t>(n);
  }

  ssize_t write(const char* ptr, size_t size) override {
    if (!wait_for(sock_, POLLOUT, Clock::now() + limits_.write_timeout)) return -1;
    ssize_t sent = -1;
    do {
      sent = ::send(sock_, ptr, size, MSG_NOSIGNAL);
    } while (sent < 0 && errno == EINTR);
    return sent;
  }

  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    ip_and_port(sock_, true, ip, port);
  }
  void get_local_ip_and_port(std::string& ip, int& port) const override {
    ip_and_port(sock_, false, ip, port);
  }
  socket_t socket() const override { return sock_; }

 private:
  int sock_;
  const ConnectionLimits& limits_;
  const std::atomic<socket_t>& listening_;  // httplib's listening socket: invalid once stopped
  Clock::time_point deadline_ = Clock::time_point::max();
  size_t head_bytes_ = 0, request_bytes_ = 0;
  bool head_done_ = false;
  CutOff cut_off_ = CutOff::None;
  char buffer_[4096];
  size_t pos_ = 0, end_ = 0;
};

// The connection the current thread serves (null outside process_and_close_socket).
thread_local ConnectionStream* tl_connection = nullptr;
// Set while the task queue runs a connection's closure inline for the overflow lane.
thread_local bool tl_to_overflow_lane = false;

}  // namespace

// At most max_connections connections on as many threads (a connection never waits for a
// thread, so none waits unseen); the rest to the overflow lane, from the accepting thread. Its
// own workers rather than httplib::ThreadPool, whose constructor ends the process when a thread
// cannot be created (the threads made so far are destroyed joinable): here the failure is an
// exception out of the server's constructor, before it announces itself, which the CLI reports
// as its one error line. httplib makes its queue when listen starts and deletes it at the end:
// it gets a Handle onto this one.
class GuardedHttpServer::Queue final : public httplib::TaskQueue {
 public:
  explicit Queue(GuardedHttpServer& server) : server_(server) {
    try {
      for (size_t i = 0; i < server.limits_.max_connections; ++i)
        workers_.emplace_back([this] { work(); });
    } catch (const std::exception& e) {
      shutdown();
      throw Error("cannot create the " + std::to_string(server.limits_.max_connections) +
                  " connection threads of --max-connections: " + e.what());
    }
  }
  ~Queue() override { shutdown(); }

  void enqueue(std::function<void()> fn) override {
    if (server_.open_.fetch_add(1) >= static_cast<int64_t>(server_.limits_.max_connections)) {
      --server_.open_;
      tl_to_overflow_lane = true;
      fn();  // calls process_and_close_socket(sock), which hands sock to the lane and returns
      tl_to_overflow_lane = false;
      return;
    }
    {
      std::lock_guard lock(mutex_);
      jobs_.push_back(std::move(fn));
    }
    ready_.notify_one();
  }

  void shutdown() override {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    ready_.notify_all();
    for (std::thread& t : workers_)
      if (t.joinable()) t.join();
  }

 private:
  void work() {
    for (;;) {
      std::function<void()> fn;
      {
        std::unique_lock lock(mutex_);
        ready_.wait(lock, [&] { return stopping_ || !jobs_.empty(); });
        if (jobs_.empty()) return;  // stopping, and every connection taken has been served
        fn = std::move(jobs_.front());
        jobs_.pop_front();
      }
      fn();
      --server_.open_;
    }
  }

  // What httplib's new_task_queue returns (httplib deletes it; the queue stays the server's).
 public:
  class Handle final : public httplib::TaskQueue {
   public:
    explicit Handle(Queue& queue) : queue_(queue) {}
    void enqueue(std::function<void()> fn) override { queue_.enqueue(std::move(fn)); }
    void shutdown() override { queue_.shutdown(); }

   private:
    Queue& queue_;
  };

 private:
  GuardedHttpServer& server_;
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<std::function<void()>> jobs_;
  bool stopping_ = false;
  std::vector<std::thread> workers_;
};

GuardedHttpServer::GuardedHttpServer(ConnectionLimits limits,
                                     std::function<std::string(const OverflowRequest&)> overflow)
    : limits_(limits), lane_(std::move(overflow)), queue_(std::make_unique<Queue>(*this)) {
  new_task_queue = [this] { return new Queue::Handle(*queue_); };
  set_read_timeout(limits_.read_timeout);
  set_write_timeout(limits_.write_timeout);
  set_keep_alive_timeout(limits_.keep_alive_timeout.count());
  set_keep_alive_max_count(limits_.keep_alive_max);
}

GuardedHttpServer::~GuardedHttpServer() {
  lane_.stop();
}

bool GuardedHttpServer::process_and_close_socket(socket_t sock) {
  if (tl_to_overflow_lane) {
    lane_.adopt(sock);
    return true;
  }
  ConnectionStream stream(sock, limits_, svr_sock_);
  tl_connection = &stream;
  // The first request's time runs from the accept, so a client that never sends holds its
  // thread for --read-timeout at most; a later one's from its first byte, after at most
  // --keep-alive-timeout of idling.
  Clock::time_point deadline = Clock::now() + limits_.read_timeout;
  bool ok = true;
  for (size_t served = 0; served < limits_.keep_alive_max && svr_sock_ != INVALID_SOCKET;
       ++served) {
    if (served > 0) {
      if (!stream.wait_for_next_request(limits_.keep_alive_timeout)) break;
      deadline = Clock::now() + limits_.read_timeout;
    }
    stream.start_request(deadline);
    bool closed = false;
    // Response writing (and httplib's error and exception handlers) runs outside httplib's
    // routing try: whatever escapes ends this connection, never the process.
    try {
      ok = process_request(stream, served + 1 == limits_.keep_alive_max, closed, nullptr);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "eagle2 serve: a connection failed: %s\n", e.what());
      ok = false;
    } catch (...) {
      ok = false;
    }
    if (!ok || closed || stream.cut_off() != CutOff::None) break;
  }
  tl_connection = nullptr;
  // Closing with unread input (a refused body, a cut-off head, pipelined requests) makes the
  // kernel reset the connection, which can destroy the answer before the client reads it. With
  // input waiting, the sending side is shut first and what the client still sends is read and
  // dropped until it pauses for 100 ms (at most 64 KiB, 1 s); without, the socket closes at once,
  // so that the connection's place is free for the next one.
  char drop[4096];
  if (::recv(sock, drop, 1, MSG_PEEK | MSG_DONTWAIT) > 0) {
    ::shutdown(sock, SHUT_WR);
    const Clock::time_point linger = Clock::now() + std::chrono::seconds(1);
    for (size_t dropped = 0; dropped < 65536;) {
      const Clock::time_point pause =
          std::min(linger, Clock::now() + std::chrono::milliseconds(100));
      if (!wait_for(sock, POLLIN, pause, &svr_sock_)) break;
      const ssize_t n = ::recv(sock, drop, sizeof drop, MSG_DONTWAIT);
      if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) break;
      if (n > 0) dropped += static_cast<size_t>(n);
    }
  }
  ::close(sock);
  return ok;
}

CutOff request_cut_off() {
  return tl_connection ? tl_connection->cut_off() : CutOff::None;
}

bool client_gone() {
  return tl_connection && tl_connection->peer_gone();
}

void request_head_read() {
  if (tl_connection) tl_connection->head_done();
}

}  // namespace eagle2::server

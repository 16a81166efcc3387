#include "server/overflow_lane.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>

namespace eagle2::server {

namespace {

std::string trimmed(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

bool equals_ignoring_case(const std::string& a, const std::string& b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

void close_socket(int sock) {
  ::shutdown(sock, SHUT_RDWR);
  ::close(sock);
}

}  // namespace

OverflowRequest parse_overflow_head(const std::string& head) {
  OverflowRequest r;
  r.complete = head.find("\r\n\r\n") != std::string::npos;
  size_t line_end = head.find("\r\n");
  const std::string request_line = head.substr(0, line_end);
  const size_t sp1 = request_line.find(' ');
  const size_t sp2 = sp1 == std::string::npos ? sp1 : request_line.find(' ', sp1 + 1);
  if (sp2 == std::string::npos || request_line.find(' ', sp2 + 1) != std::string::npos) return r;
  r.method = request_line.substr(0, sp1);
  r.target = request_line.substr(sp1 + 1, sp2 - sp1 - 1);
  while (line_end != std::string::npos) {
    const size_t start = line_end + 2;
    line_end = head.find("\r\n", start);
    const std::string line = head.substr(start, line_end - start);
    if (line.empty()) break;
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    const std::string name = line.substr(0, colon);
    if (equals_ignoring_case(name, "host")) r.hosts.push_back(trimmed(line.substr(colon + 1)));
    if (equals_ignoring_case(name, "origin")) r.origins.push_back(trimmed(line.substr(colon + 1)));
  }
  return r;
}

OverflowLane::OverflowLane(std::function<std::string(const OverflowRequest&)> answer)
    : answer_(std::move(answer)) {
  if (pipe2(wake_, O_CLOEXEC | O_NONBLOCK) != 0) wake_[0] = wake_[1] = -1;
  thread_ = std::thread([this] { loop(); });
}

OverflowLane::~OverflowLane() {
  stop();
  if (wake_[0] >= 0) ::close(wake_[0]);
  if (wake_[1] >= 0) ::close(wake_[1]);
}

void OverflowLane::stop() {
  stopping_ = true;
  if (wake_[1] >= 0) {
    const char c = 0;
    (void)!::write(wake_[1], &c, 1);
  }
  if (thread_.joinable()) thread_.join();
  std::lock_guard lock(mutex_);
  for (const int sock : incoming_) close_socket(sock);
  incoming_.clear();
}

void OverflowLane::adopt(int sock) {
  if (stopping_ || wake_[1] < 0) {
    close_socket(sock);
    return;
  }
  // Non-blocking: the lane's one thread must never wait on one client.
  fcntl(sock, F_SETFL, fcntl(sock, F_GETFL) | O_NONBLOCK);
  {
    std::lock_guard lock(mutex_);
    incoming_.push_back(sock);
  }
  const char c = 0;
  (void)!::write(wake_[1], &c, 1);  // a full pipe already wakes the loop
}

void OverflowLane::respond(Pending& p) {
  std::string out;
  try {
    out = answer_(parse_overflow_head(p.head));
  } catch (...) {  // an exception here would end the process: the client gets a bare 503
    out = "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
  }
  // A fresh socket's send buffer holds the few hundred bytes of an answer; if not, the client
  // gets what fitted and a closed connection.
  (void)!::send(p.sock, out.data(), out.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  ::shutdown(p.sock, SHUT_WR);
  p.answered = true;
  p.deadline = std::chrono::steady_clock::now() + kHeadDeadline;
  ++answered_;
}

void OverflowLane::loop() {
  std::vector<pollfd> fds;
  char buffer[4096];
  while (!stopping_) {
    {
      std::lock_guard lock(mutex_);
      for (const int sock : incoming_) {
        if (pending_.size() >= kMaxPending) {  // a flood: the oldest goes, unanswered
          close_socket(pending_.front().sock);
          pending_.erase(pending_.begin());
        }
        pending_.push_back({sock, std::chrono::steady_clock::now() + kHeadDeadline, {}, false});
      }
      incoming_.clear();
    }
    fds.assign(1, pollfd{wake_[0], POLLIN, 0});
    for (const Pending& p : pending_) fds.push_back(pollfd{p.sock, POLLIN, 0});
    const int ready = ::poll(fds.data(), fds.size(), 50);
    if (ready < 0 && errno != EINTR) {  // (not expected) the lane must go on, or sockets pile up
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      continue;
    }
    if (fds[0].revents & POLLIN)
      while (::read(wake_[0], buffer, sizeof buffer) > 0) {
      }
    const auto now = std::chrono::steady_clock::now();
    for (size_t i = 0; i < pending_.size(); ++i) {
      Pending& p = pending_[i];
      bool done = false;
      if (fds[i + 1].revents != 0) {
        const ssize_t got = ::recv(p.sock, buffer, sizeof buffer, MSG_DONTWAIT);
        if (got == 0 || (got < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
          done = true;  // the client closed (or reset): nothing more to say
        } else if (got > 0 && !p.answered) {
          p.head.append(buffer,
                        static_cast<size_t>(std::min<ssize_t>(got, kMaxHeadBytes - p.head.size())));
          if (p.head.find("\r\n\r\n") != std::string::npos || p.head.size() >= kMaxHeadBytes)
            respond(p);
        }
      }
      if (!done && now >= p.deadline) {
        if (p.answered)
          done = true;
        else
          respond(p);  // no complete head in time: 503
      }
      if (done) {
        close_socket(p.sock);
        p.sock = -1;
      }
    }
    std::erase_if(pending_, [](const Pending& p) { return p.sock < 0; });
  }
  for (const Pending& p : pending_) close_socket(p.sock);
  pending_.clear();
}

}  // namespace eagle2::server

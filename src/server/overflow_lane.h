// Connections beyond --max-connections (issue 43, "Connections"): answered at once on one thread
// that multiplexes them with poll(), never queued behind the connection threads that slow or
// idle clients may hold. A connection here gets one answer and is closed: GET /health is
// answered as usual (so a health check passes while the limit is held), anything else gets 503.
// One thread and non-blocking sockets: a slow client here holds no thread, only a place among
// kMaxPending, and for at most kHeadDeadline.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace eagle2::server {

// What the lane parsed of a request's head.
struct OverflowRequest {
  std::string method, target;
  std::vector<std::string> hosts;    // every Host header's value (none, one, or a refused two)
  std::vector<std::string> origins;  // every Origin header's value (likewise)
  bool complete = false;             // the head reached its blank line (within kMaxHeadBytes)
};

class OverflowLane {
 public:
  // `answer`: the complete HTTP response (status line, headers with Connection: close, body)
  // for a request's head; called on the lane's thread.
  explicit OverflowLane(std::function<std::string(const OverflowRequest&)> answer);
  ~OverflowLane();  // stop(): every socket still here is closed
  OverflowLane(const OverflowLane&) = delete;
  OverflowLane& operator=(const OverflowLane&) = delete;

  // Takes ownership of an accepted socket. From any thread; never blocks.
  void adopt(int sock);
  void stop();
  int64_t answered() const { return answered_; }  // connections answered so far

  // A request head arrives within this, or the connection gets 503 unread; after the answer,
  // what the client still sends is read and dropped for at most this long, so that closing
  // with unread bytes (which makes the kernel reset the connection) does not destroy the
  // answer before the client reads it.
  static constexpr std::chrono::milliseconds kHeadDeadline{1000};
  static constexpr size_t kMaxHeadBytes = 8192;
  static constexpr size_t kMaxPending = 256;  // beyond: the oldest is closed unanswered

 private:
  struct Pending {
    int sock = -1;
    std::chrono::steady_clock::time_point deadline;
    std::string head;
    bool answered = false;
  };
  void loop();
  void respond(Pending& p);

  std::function<std::string(const OverflowRequest&)> answer_;
  std::mutex mutex_;
  std::vector<int> incoming_;  // adopted, not yet seen by the loop
  int wake_[2] = {-1, -1};     // a pipe: adopt() and stop() wake the loop's poll()
  std::atomic<bool> stopping_{false};
  std::atomic<int64_t> answered_{0};
  std::vector<Pending> pending_;  // the loop's own
  std::thread thread_;
};

// The request line and Host headers of a head (up to its blank line); empty method when the
// request line is malformed.
OverflowRequest parse_overflow_head(const std::string& head);

}  // namespace eagle2::server

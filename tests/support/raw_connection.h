// A client's side of one TCP connection to a test server on 127.0.0.1, byte by byte: for tests
// that behave as no HTTP library would (dribble a head, idle, hang up mid-request), and a reader
// of /metrics samples.
#pragma once

#include <chrono>
#include <optional>
#include <string>

namespace eagle2::test {

class RawConnection {
 public:
  explicit RawConnection(int port);  // connected, or !connected()
  ~RawConnection() { close(); }
  RawConnection(const RawConnection&) = delete;
  RawConnection& operator=(const RawConnection&) = delete;

  bool connected() const { return sock_ >= 0; }
  bool send(const std::string& bytes);  // all of them; false when the server closed
  // What arrives until the server closes the connection or `limit` passes; `closed` says which.
  std::string read_until_close(std::chrono::milliseconds limit, bool* closed = nullptr);
  // Whether the server closed the connection (EOF or reset) within `limit`; what it sent before
  // is dropped.
  bool closed_within(std::chrono::milliseconds limit) {
    bool closed = false;
    read_until_close(limit, &closed);
    return closed;
  }
  void close();  // the client hangs up

 private:
  int sock_ = -1;
};

// The value of the sample `name` (with its labels, e.g. eagle2_requests_total{status="ok"}) in
// Prometheus text; nullopt when absent.
std::optional<double> metric(const std::string& metrics_text, const std::string& name);

// GET /metrics of the server on `port` and the sample `name` (nullopt when either fails).
std::optional<double> server_metric(int port, const std::string& name);

// Polls server_metric until it equals `value` (true) or `limit` passes (false): for state that
// the server reaches a moment after the event a test caused.
bool metric_reaches(int port, const std::string& name, double value,
                    std::chrono::milliseconds limit = std::chrono::seconds(20));

}  // namespace eagle2::test

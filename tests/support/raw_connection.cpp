#include "support/raw_connection.h"

#include <arpa/inet.h>
#include <httplib.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <sstream>
#include <thread>

namespace eagle2::test {

RawConnection::RawConnection(int port) {
  sock_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (sock_ < 0) return;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(sock_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) close();
}

bool RawConnection::send(const std::string& bytes) {
  size_t sent = 0;
  while (sock_ >= 0 && sent < bytes.size()) {
    const ssize_t n = ::send(sock_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) return false;
    sent += static_cast<size_t>(n);
  }
  return sock_ >= 0;
}

std::string RawConnection::read_until_close(std::chrono::milliseconds limit, bool* closed) {
  std::string out;
  if (closed) *closed = false;
  const auto until = std::chrono::steady_clock::now() + limit;
  char buffer[4096];
  while (sock_ >= 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                          until - std::chrono::steady_clock::now())
                          .count();
    if (left <= 0) break;
    pollfd p{sock_, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left)) <= 0) continue;
    const ssize_t n = ::recv(sock_, buffer, sizeof buffer, 0);
    if (n <= 0) {
      if (closed) *closed = true;
      break;
    }
    out.append(buffer, static_cast<size_t>(n));
  }
  return out;
}

void RawConnection::close() {
  if (sock_ >= 0) ::close(sock_);
  sock_ = -1;
}

std::optional<double> metric(const std::string& metrics_text, const std::string& name) {
  std::istringstream in(metrics_text);
  std::string line;
  while (std::getline(in, line))
    if (line.size() > name.size() && line.starts_with(name) && line[name.size()] == ' ')
      return std::stod(line.substr(name.size() + 1));
  return std::nullopt;
}

std::optional<double> server_metric(int port, const std::string& name) {
  httplib::Client c("127.0.0.1", port);
  c.set_read_timeout(10);
  const httplib::Result r = c.Get("/metrics");
  if (!r || r->status != 200) return std::nullopt;
  return metric(r->body, name);
}

bool metric_reaches(int port, const std::string& name, double value,
                    std::chrono::milliseconds limit) {
  const auto until = std::chrono::steady_clock::now() + limit;
  for (;;) {
    if (server_metric(port, name) == value) return true;
    if (std::chrono::steady_clock::now() >= until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

}  // namespace eagle2::test

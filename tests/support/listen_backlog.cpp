#include "support/listen_backlog.h"

#include <arpa/inet.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cstring>
#include <fstream>

namespace eagle2::test {

namespace {

constexpr int kTcpListen = 10;  // TCP_LISTEN in the kernel's tcp_states.h

}  // namespace

std::optional<int> listen_backlog(const std::string& address, int port) {
  in_addr wanted{};
  if (inet_pton(AF_INET, address.c_str(), &wanted) != 1) return std::nullopt;
  const int sock = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
  if (sock < 0) return std::nullopt;
  const timeval patience{5, 0};  // a kernel that never ends the dump must not hang the test
  setsockopt(sock, SOL_SOCKET, SO_RCVTIMEO, &patience, sizeof patience);
  struct {
    nlmsghdr header;
    inet_diag_req_v2 request;
  } message{};
  message.header.nlmsg_len = sizeof message;
  message.header.nlmsg_type = SOCK_DIAG_BY_FAMILY;
  message.header.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
  message.request.sdiag_family = AF_INET;
  message.request.sdiag_protocol = IPPROTO_TCP;
  message.request.idiag_states = 1u << kTcpListen;
  std::optional<int> found;  // set at the dump's end
  int backlog = -1;
  if (send(sock, &message, sizeof message, 0) == static_cast<ssize_t>(sizeof message)) {
    alignas(nlmsghdr) char buffer[16384];
    for (bool done = false; !done;) {
      const ssize_t n = recv(sock, buffer, sizeof buffer, 0);
      if (n <= 0) break;  // an error or the timeout: no answer
      int left = static_cast<int>(n);
      for (auto* h = reinterpret_cast<nlmsghdr*>(buffer); NLMSG_OK(h, left);
           h = NLMSG_NEXT(h, left)) {
        if (h->nlmsg_type == NLMSG_DONE) found = backlog;
        if (h->nlmsg_type == NLMSG_DONE || h->nlmsg_type == NLMSG_ERROR) {
          done = true;
          break;
        }
        if (h->nlmsg_len < NLMSG_LENGTH(sizeof(inet_diag_msg))) continue;
        inet_diag_msg m;
        std::memcpy(&m, NLMSG_DATA(h), sizeof m);
        // For a listening socket the kernel reports its backlog as the write queue.
        if (m.idiag_family == AF_INET && ntohs(m.id.idiag_sport) == port &&
            m.id.idiag_src[0] == wanted.s_addr)
          backlog = static_cast<int>(m.idiag_wqueue);
      }
    }
  }
  close(sock);
  return found;
}

std::optional<int> system_max_backlog() {
  std::ifstream in("/proc/sys/net/core/somaxconn");
  int value = 0;
  if (!(in >> value)) return std::nullopt;
  return value;
}

}  // namespace eagle2::test

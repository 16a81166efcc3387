#include "support/listen_backlog.h"

#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>

namespace eagle2::test {

namespace {

constexpr int kTcpListen = 10;  // TCP_LISTEN in the kernel's tcp_states.h

// Dumps the listening TCP sockets of one address family: the largest backlog on `port`, -1 when
// none listens there, nullopt when the kernel does not answer.
std::optional<int> family_backlog(int family, int port) {
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
  message.request.sdiag_family = static_cast<__u8>(family);
  message.request.sdiag_protocol = IPPROTO_TCP;
  message.request.idiag_states = 1u << kTcpListen;
  std::optional<int> found;
  int largest = -1;
  if (send(sock, &message, sizeof message, 0) == static_cast<ssize_t>(sizeof message)) {
    alignas(nlmsghdr) char buffer[16384];
    for (bool done = false; !done;) {
      const ssize_t n = recv(sock, buffer, sizeof buffer, 0);
      if (n <= 0) break;
      int left = static_cast<int>(n);
      for (auto* h = reinterpret_cast<nlmsghdr*>(buffer); NLMSG_OK(h, left);
           h = NLMSG_NEXT(h, left)) {
        if (h->nlmsg_type == NLMSG_DONE) found = largest;
        if (h->nlmsg_type == NLMSG_DONE || h->nlmsg_type == NLMSG_ERROR) {
          done = true;
          break;
        }
        if (h->nlmsg_len < NLMSG_LENGTH(sizeof(inet_diag_msg))) continue;
        const auto* m = static_cast<const inet_diag_msg*>(NLMSG_DATA(h));
        // For a listening socket the kernel reports its backlog as the write queue.
        if (ntohs(m->id.idiag_sport) == port)
          largest = std::max(largest, static_cast<int>(m->idiag_wqueue));
      }
    }
  }
  close(sock);
  return found;
}

}  // namespace

std::optional<int> listen_backlog(int port) {
  const std::optional<int> v4 = family_backlog(AF_INET, port);
  const std::optional<int> v6 = family_backlog(AF_INET6, port);
  if (!v4) return v6;
  if (!v6) return v4;
  return std::max(*v4, *v6);
}

std::optional<int> system_max_backlog() {
  std::ifstream in("/proc/sys/net/core/somaxconn");
  int value = 0;
  if (!(in >> value)) return std::nullopt;
  return value;
}

}  // namespace eagle2::test

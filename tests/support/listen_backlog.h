// The backlog of a TCP socket listening on an IPv4 address and port of this machine, as the
// kernel reports it over NETLINK_SOCK_DIAG (what `ss -lt` shows as Send-Q): the server tests
// check what the server asked listen() for, not what the library says it does.
#pragma once

#include <optional>
#include <string>

namespace eagle2::test {

// The backlog of the IPv4 TCP socket listening on `address` (dotted, e.g. "127.0.0.1"):`port`;
// -1 when none listens there; nullopt when the kernel does not answer the query completely (no
// sock_diag where the tests run) or `address` is not an IPv4 address.
std::optional<int> listen_backlog(const std::string& address, int port);

// net.core.somaxconn: the kernel's cap on any listen() backlog; nullopt when unreadable.
std::optional<int> system_max_backlog();

}  // namespace eagle2::test

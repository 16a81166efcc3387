// The backlog of a TCP socket listening on a port of this machine, as the kernel reports it over
// NETLINK_SOCK_DIAG (what `ss -lt` shows as Send-Q): the server tests check what the server
// asked listen() for, not what the library says it does.
#pragma once

#include <optional>

namespace eagle2::test {

// The largest backlog of the IPv4 or IPv6 TCP sockets listening on `port`: -1 when none listens
// there, nullopt when the kernel refuses the query (no sock_diag where the tests run).
std::optional<int> listen_backlog(int port);

// net.core.somaxconn: the kernel's cap on any listen() backlog; nullopt when unreadable.
std::optional<int> system_max_backlog();

}  // namespace eagle2::test

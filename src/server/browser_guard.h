// What keeps a web page the operator happens to open from using `eagle2 serve` (issue 43):
// DNS rebinding (a page whose name resolves to 127.0.0.1 sends Host: its own name), cross-site
// "simple requests" (text/plain or untyped POSTs need no CORS preflight) and cross-origin reads.
// Pure functions of the request's headers and the server's options; http_server.cpp applies them.
#pragma once

#include <string>

#include "server/server_options.h"

namespace eagle2::server {

// Whether the Host header may reach the server (docs/SERVER.md "Browser safety"). The port in it
// is not compared. Accepted: no Host at all (HTTP/1.0; a browser always sends one); a name in
// --allowed-host, or any with --allowed-host '*'; the address the server is bound to; for a
// loopback bind, 127.0.0.1, [::1] and localhost; for a wildcard bind (0.0.0.0, ::), those and
// any IP literal (rebinding needs a name the attacker controls, never an address).
bool host_allowed(const std::string& host_header, bool has_host, const ServerOptions& options);

// Whether a request with this Origin header may be served: the page's own origin
// (http://HOST, HOST being the request's accepted Host header) or one of --allowed-origins.
bool origin_allowed(const std::string& origin, const std::string& host_header,
                    const ServerOptions& options);
// Whether `origin` is one of --allowed-origins (and so gets CORS headers).
bool origin_listed(const std::string& origin, const ServerOptions& options);

// Whether a Content-Type names application/json (any case, parameters such as charset allowed).
bool is_json_content_type(const std::string& content_type);

}  // namespace eagle2::server

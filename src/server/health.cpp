#include "server/health.h"

#include <algorithm>
#include <chrono>
#include <cstdint>

#include "server/browser_guard.h"

namespace eagle2::server {

namespace {

const char* reason_phrase(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 403:
      return "Forbidden";
    default:
      return "Service Unavailable";
  }
}

// A complete HTTP/1.1 response that closes the connection, for the overflow lane.
std::string raw_response(int status, const Json& body) {
  const std::string text = json_text(body);
  std::string out =
      "HTTP/1.1 " + std::to_string(status) + " " + reason_phrase(status) +
      "\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(text.size()) +
      "\r\nConnection: close\r\n";
  if (status == 503) out += "Retry-After: 1\r\n";
  return out + "\r\n" + text;
}

}  // namespace

ConnectionLimits connection_limits(const ServerOptions& o) {
  ConnectionLimits l;
  // Enough threads for every slot and every queue place, plus a few for /health, /metrics and
  // refusals, keep every waiting request in the scheduler's queue (where it gets a 503 when
  // the queue is full) rather than in httplib's.
  l.max_connections = o.max_connections > 0
                          ? static_cast<size_t>(o.max_connections)
                          : static_cast<size_t>(o.parallel) + static_cast<size_t>(o.max_queue) + 4;
  l.read_timeout = std::chrono::seconds(o.read_timeout);
  l.keep_alive_timeout = std::chrono::seconds(o.keep_alive_timeout);
  l.keep_alive_max = static_cast<size_t>(std::max(1, o.keep_alive_max));
  l.max_body = o.max_body;
  return l;
}

// /health's answer: 503 while shutting down, or when the scheduler has work and has not come
// round its loop for --stall-timeout (stuck: the requests it holds will not end).
std::pair<int, Json> health(const ServerState& state) {
  if (state.stopping) return {503, {{"status", "shutting down"}}};
  const auto stalled = state.scheduler.stalled_for();
  if (stalled >= std::chrono::seconds(state.options.stall_timeout))
    return {
        503,
        {{"status", "unhealthy"},
         {"reason", "the scheduler has made no step for " + std::to_string(stalled.count() / 1000) +
                        " s while requests wait or decode (--stall-timeout " +
                        std::to_string(state.options.stall_timeout) + ")"}}};
  return {200, {{"status", "ok"}}};
}

// A connection beyond --max-connections: GET /health is answered (a health check must pass
// while slow or idle clients hold every connection), anything else gets 503 at once.
std::string overflow_answer(const OverflowRequest& r, const ServerState& state,
                            const ConnectionLimits& limits) {
  const bool is_health = r.complete && r.method == "GET" &&
                         (r.target == "/health" || r.target.starts_with("/health?"));
  if (!is_health)
    return raw_response(503, error_json(503,
                                        "the server has --max-connections (" +
                                            std::to_string(limits.max_connections) +
                                            ") connections open: retry later",
                                        "", "too_many_connections"));
  const std::string host = r.hosts.empty() ? "" : r.hosts[0];
  if (r.hosts.size() > 1 || !host_allowed(host, !r.hosts.empty(), state.options))
    return raw_response(403, error_json(403,
                                        "the Host header names neither this server's address "
                                        "nor a name given with --allowed-host",
                                        "", "forbidden"));
  // As the routes do (http_server.cpp): another site's page may not read even /health.
  if (r.origins.size() > 1 ||
      (r.origins.size() == 1 && !origin_allowed(r.origins[0], host, state.options)))
    return raw_response(403, error_json(403,
                                        "requests from the Origin of another site are refused "
                                        "(see --allowed-origins)",
                                        "", "forbidden"));
  const auto [status, body] = health(state);
  return raw_response(status, body);
}

// The gauges of the scheduler's slots and of the connections, read as /metrics is asked.
std::string connection_metrics(const ServerState& state, const GuardedHttpServer& http) {
  const auto gauge = [](const char* name, const char* type, const char* help, int64_t v) {
    return std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " " + type + "\n" +
           name + " " + std::to_string(v) + "\n";
  };
  return gauge("eagle2_slots_busy", "gauge", "Requests admitted and decoding (of --parallel).",
               state.scheduler.active()) +
         gauge("eagle2_connections_open", "gauge",
               "Connections being served (of --max-connections).", http.connections_open()) +
         gauge("eagle2_connections_overflow_total", "counter",
               "Connections beyond --max-connections, answered at once (503, or /health).",
               http.connections_refused());
}

}  // namespace eagle2::server

// What the server says about itself, outside the completion routes: /health (shutting down, or
// a stuck scheduler), the answer to a connection beyond --max-connections (overflow_lane.h), and
// the slot and connection gauges of /metrics.
#pragma once

#include <string>
#include <utility>

#include "server/guarded_http.h"
#include "server/openai_response.h"
#include "server/server_state.h"

namespace eagle2::server {

// The connection limits of the options (--max-connections 0: parallel + max_queue + 4).
ConnectionLimits connection_limits(const ServerOptions& options);

// /health's status and body: 503 while shutting down, or when the scheduler has work and has not
// come round its loop for --stall-timeout (stuck: the requests it holds will not end); else 200.
std::pair<int, Json> health(const ServerState& state);

// The complete HTTP response for a connection beyond the limit: GET /health is answered (a health
// check must pass while slow or idle clients hold every connection), anything else gets 503.
std::string overflow_answer(const OverflowRequest& request, const ServerState& state,
                            const ConnectionLimits& limits);

// eagle2_slots_busy, eagle2_connections_open and eagle2_connections_overflow_total, in
// Prometheus text.
std::string connection_metrics(const ServerState& state, const GuardedHttpServer& http);

}  // namespace eagle2::server

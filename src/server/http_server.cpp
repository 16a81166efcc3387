#include "server/http_server.h"

#include <httplib.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <thread>

#include "eagle2/error.h"
#include "server/api_error.h"
#include "server/browser_guard.h"
#include "server/completion_routes.h"
#include "server/guarded_http.h"
#include "server/health.h"
#include "server/openai_response.h"
#include "server/server_state.h"
#include "server/stop_signal.h"
#include "server/web_page.h"

namespace eagle2::server {

namespace {

using httplib::Request;
using httplib::Response;

void send_json(Response& res, int status, const Json& body) {
  res.status = status;
  res.set_content(json_text(body), "application/json");
}

// Compares the whole key whatever the first difference, so that the time of a refusal does not
// tell an attacker how much of a guessed key was right.
bool same_key(const std::string& given, const std::string& key) {
  unsigned char diff = given.size() == key.size() ? 0 : 1;
  for (size_t i = 0; i < given.size(); ++i)
    diff |= static_cast<unsigned char>(given[i] ^ key[i % key.size()]);
  return diff == 0;
}

// Whether host:port can be bound now, as the server will bind it (SO_REUSEADDR, no SO_REUSEPORT).
// Checked before the minutes a start-up may take (loading, measuring the verify cost), so that
// a port in use fails at once; the bind after the load checks again, since another process may
// take the port in between.
bool can_bind(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  if (getaddrinfo(host.c_str(), service.c_str(), &hints, &found) != 0) return false;
  bool bound = false;
  for (addrinfo* a = found; a && !bound; a = a->ai_next) {
    const int sock = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (sock < 0) continue;
    const int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    bound = bind(sock, a->ai_addr, a->ai_addrlen) == 0;
    close(sock);
  }
  freeaddrinfo(found);
  return bound;
}

// httplib listens with a backlog of 5 (CPPHTTPLIB_LISTEN_BACKLOG, fixed in Debian's compiled
// library), so more clients connecting at once than its accept thread has taken overflow the
// listen queue (the kernel counts ListenOverflows). The load test's sixteen clients start
// together; with that backlog it lost a request ("no response: Read", about 1.2 s after sending
// it) in 4 of 7 runs, with this raise in none of 10, consistent with connections dropped at the
// full queue (docs/bench/server-backlog/; no packet capture). On Linux a second listen() on a
// listening socket only changes its backlog: raise it to SOMAXCONN (4096; the kernel caps it at
// net.core.somaxconn). `sock` is the last socket httplib offered to the socket options (it tries
// the host's addresses in turn and keeps the first that binds and listens), checked to be the
// one listening on `port`; otherwise the backlog stays httplib's.
void widen_backlog(int sock, int port) {
  int listening = 0;
  socklen_t size = sizeof listening;
  if (sock < 0 || getsockopt(sock, SOL_SOCKET, SO_ACCEPTCONN, &listening, &size) != 0 || !listening)
    return;
  sockaddr_storage address{};
  size = sizeof address;
  if (getsockname(sock, reinterpret_cast<sockaddr*>(&address), &size) != 0) return;
  int bound = -1;
  if (address.ss_family == AF_INET)
    bound = ntohs(reinterpret_cast<const sockaddr_in&>(address).sin_port);
  if (address.ss_family == AF_INET6)
    bound = ntohs(reinterpret_cast<const sockaddr_in6&>(address).sin6_port);
  if (bound == port) ::listen(sock, SOMAXCONN);
}

// An error response after which the server closes the connection: for a request whose body was
// not read to its end (refused before it, or cut off at --max-body), which httplib would
// otherwise read as the next request on the connection. Written through a content provider that
// reports a failure once it has written the whole body: httplib then ends the connection, and
// "Connection: close" tells the client so.
void send_error_and_close(Response& res, const ApiError& e) {
  send_error(res, e);
  auto text = std::make_shared<const std::string>(std::move(res.body));
  res.body.clear();
  res.set_header("Connection", "close");
  res.set_content_provider(text->size(), "application/json",
                           [text](size_t offset, size_t length, httplib::DataSink& sink) {
                             sink.write(text->data() + offset, length);
                             return false;
                           });
}

// Methods whose body httplib reads into memory before a handler sees it: any of them outside the
// completion routes is answered without reading the body (see routes()).
bool reads_body(const std::string& method) {
  return method == "POST" || method == "PUT" || method == "PATCH" || method == "DELETE" ||
         method == "PRI";
}

bool is_completion_route(const Request& req) {
  return req.method == "POST" &&
         (req.path == "/v1/completions" || req.path == "/v1/chat/completions");
}

[[noreturn]] void cannot_listen(const ServerOptions& o) {
  fail("cannot listen on ", o.host, ":", o.port,
       " (the port is in use, or the host is not an address of this machine)");
}

}  // namespace

struct Server::Impl {
  explicit Impl(const ServerOptions& o)
      : state(o), http(connection_limits(o), [this](const OverflowRequest& r) {
          return overflow_answer(r, state, http.limits());
        }) {
    state.created = std::chrono::duration_cast<std::chrono::seconds>(
                        std::chrono::system_clock::now().time_since_epoch())
                        .count();
    // Connections: --max-connections threads, deadlines and keep-alive limits, the overflow
    // lane beyond them (guarded_http.h says why httplib's own pool is not enough).
    http.set_payload_max_length(o.max_body);
    // httplib's default also sets SO_REUSEPORT, with which a second server on the same port
    // binds too and the kernel splits the connections between the two: a port in use must be an
    // error instead. SO_REUSEADDR alone still allows a restart while old connections linger.
    http.set_socket_options([this](socket_t sock) {
      const int yes = 1;
      setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
      offered_socket = sock;  // called before bind and listen: the last call is the listener
    });
    routes();
    if (o.port == 0) {
      port = http.bind_to_any_port(o.host);
    } else {
      port = http.bind_to_port(o.host, o.port) ? o.port : -1;
    }
    if (port < 0) cannot_listen(o);
    widen_backlog(offered_socket, port);
  }

  // Authorization for /v1/: ApiError 401 unless the server has no key or the request brings it.
  void authorize(const Request& req) const {
    const std::string& key = state.options.api_key;
    if (key.empty()) return;
    const std::string auth = req.get_header_value("Authorization");
    const std::string prefix = "Bearer ";
    if (!auth.starts_with(prefix) || !same_key(auth.substr(prefix.size()), key))
      throw ApiError(401,
                     auth.empty() ? "missing API key: send the header 'Authorization: Bearer KEY'"
                                  : "invalid API key",
                     "", "invalid_api_key");
  }

  // A /v1/ handler: authorized first; an ApiError becomes its OpenAI-shaped response, counted in
  // eagle2_requests_total when the route is a completion route.
  template <class Handler>
  httplib::Server::Handler v1(Handler handler, bool counted) {
    return [this, handler, counted](const Request& req, Response& res) {
      try {
        authorize(req);
        handler(req, res);
      } catch (const ApiError& e) {
        if (counted) state.metrics.request_done(std::to_string(e.status()));
        send_error(res, e);
      }
    };
  }

  std::string body_too_large() const {
    return "the request body is larger than " + std::to_string(state.options.max_body) +
           " bytes (the server's --max-body)";
  }

  // A completion's body, read through httplib's content reader so that --max-body holds however
  // the body comes: with a Content-Length (httplib refuses a larger one before reading it and
  // sets 413), chunked, or gzip/deflate/br-encoded (httplib inflates it as it arrives; the
  // inflated bytes are what is counted here). At most max_body bytes are ever held.
  std::string read_body(Response& res, const httplib::ContentReader& reader) const {
    const size_t limit = state.options.max_body;
    std::string body;
    bool over = false;
    const bool ok = reader([&](const char* data, size_t n) {
      if (n > limit - body.size()) {  // body.size() <= limit: no underflow
        over = true;
        return false;
      }
      body.append(data, n);
      return true;
    });
    if (over || res.status == 413) throw ApiError(413, body_too_large(), "", "body_too_large");
    // The connection layer stopped the read (guarded_http.h): the body is not malformed, it did
    // not come in time or came past the bytes read for one request.
    const CutOff cut = ok ? CutOff::None : request_cut_off();
    if (cut == CutOff::Deadline)
      throw ApiError(408,
                     "the request did not arrive within --read-timeout (" +
                         std::to_string(state.options.read_timeout) + " s)",
                     "", "request_timeout");
    if (cut == CutOff::RequestTooLarge)
      throw ApiError(413, "the request is larger than the server reads for one request", "",
                     "body_too_large");
    if (!ok)
      throw ApiError(400,
                     "the request body could not be read (malformed chunked framing or "
                     "compressed data)",
                     "", "invalid_body");
    return body;
  }

  // POST /v1/completions and /v1/chat/completions: authorized before the body is read, the body
  // read within --max-body, then handle_completion. Refusals are counted in
  // eagle2_requests_total; one before the body was read to its end closes the connection.
  httplib::Server::HandlerWithContentReader completion_route(Endpoint endpoint) {
    return
        [this, endpoint](const Request& req, Response& res, const httplib::ContentReader& reader) {
          bool body_read = false;
          try {
            authorize(req);
            // A cross-site page may POST text/plain (or an untyped Blob) without a CORS
            // preflight: only a JSON body reaches the parser.
            if (!is_json_content_type(req.get_header_value("Content-Type")))
              throw ApiError(415,
                             "the request body must be JSON: send 'Content-Type: "
                             "application/json'",
                             "", "unsupported_media_type");
            const std::string body = read_body(res, reader);
            body_read = true;
            handle_completion(state, endpoint, body, res);
          } catch (const ApiError& e) {
            state.metrics.request_done(std::to_string(e.status()));
            if (body_read)
              send_error(res, e);
            else
              send_error_and_close(res, e);
          }
        };
  }

  // Browser safety, before any route or body (docs/SERVER.md "Browser safety"): a Host that is
  // not this server's (DNS rebinding) or an Origin that is neither the page's own nor listed in
  // --allowed-origins gets 403 and the connection closes (its body, if any, is never read). A
  // listed Origin gets its CORS headers on whatever the request's answer is. True: refused.
  bool refused_by_browser_guard(const Request& req, Response& res) {
    const ServerOptions& o = state.options;
    const std::string host = req.get_header_value("Host");
    std::string why;
    // Two Host headers (no browser sends that) could mean one thing here and another to a
    // proxy in front: refused, as RFC 9112 asks.
    if (req.get_header_value_count("Host") > 1 || !host_allowed(host, req.has_header("Host"), o))
      why =
          "the Host header names neither this server's address nor a name given with "
          "--allowed-host";
    const std::string origin = req.get_header_value("Origin");
    if (why.empty() && req.has_header("Origin") && !origin_allowed(origin, host, o))
      why = "requests from the Origin of another site are refused (see --allowed-origins)";
    if (why.empty()) {
      if (req.has_header("Origin") && origin_listed(origin, o)) {
        res.set_header("Access-Control-Allow-Origin", origin);
        res.set_header("Vary", "Origin");
        if (req.method == "OPTIONS") {
          res.set_header("Access-Control-Allow-Methods", "GET, POST, OPTIONS");
          res.set_header("Access-Control-Allow-Headers", "Authorization, Content-Type");
          res.set_header("Access-Control-Max-Age", "600");
        }
      }
      return false;
    }
    if (is_completion_route(req)) state.metrics.request_done("403");
    send_error_and_close(res, ApiError(403, why, "", "forbidden"));
    return true;
  }

  void models(Response& res) { send_json(res, 200, models_json(state.model.id(), state.created)); }

  void model(const std::string& id, Response& res) {
    if (id != state.model.id() && id != "default")
      throw ApiError(404, "the model '" + id + "' does not exist", "model", "model_not_found");
    send_json(res, 200, model_json(state.model.id(), state.created));
  }

  void routes() {
    http.Get("/", [](const Request&, Response& res) {
      res.set_content(std::string(index_html()), "text/html; charset=utf-8");
    });
    http.Get("/health", [this](const Request&, Response& res) {
      const auto [status, body] = health(state);
      send_json(res, status, body);
    });
    http.Get("/metrics", [this](const Request&, Response& res) {
      state.metrics.queue_depth(state.scheduler.queue_depth());
      res.set_content(state.metrics.render() + connection_metrics(state, http),
                      "text/plain; version=0.0.4; charset=utf-8");
    });
    http.Get("/v1/models", v1([this](const Request&, Response& res) { models(res); }, false));
    http.Get(R"(/v1/models/(.+))",
             v1([this](const Request& req, Response& res) { model(req.matches[1], res); }, false));
    http.Post("/v1/completions", completion_route(Endpoint::Completions));
    http.Post("/v1/chat/completions", completion_route(Endpoint::Chat));
    // httplib reads the body of any other POST, PUT, PATCH, DELETE or PRI into memory before
    // routing it, and a chunked or compressed one without limit: such a request is answered
    // here, before any of it is read, and its connection closed.
    http.set_pre_routing_handler([this](const Request& req, Response& res) {
      request_head_read();
      if (refused_by_browser_guard(req, res)) return httplib::Server::HandlerResponse::Handled;
      if (req.method == "OPTIONS") {  // a CORS preflight (or a plain OPTIONS): no body, no route
        res.status = 204;
        res.set_header("Allow", "GET, POST, OPTIONS");
        return httplib::Server::HandlerResponse::Handled;
      }
      if (is_completion_route(req) || !reads_body(req.method))
        return httplib::Server::HandlerResponse::Unhandled;
      send_error_and_close(
          res, ApiError(404, "no route " + req.method + " " + req.path, "", "not_found"));
      return httplib::Server::HandlerResponse::Handled;
    });

    // Whatever httplib refuses itself, in OpenAI's error shape too: an unknown route (404),
    // malformed HTTP (400).
    // Responses the handlers built already have their body.
    http.set_error_handler([this](const Request& req, Response& res) {
      if (!res.body.empty() || res.content_provider_) return;
      std::string message = "HTTP " + std::to_string(res.status);
      if (res.status == 404) message = "no route " + req.method + " " + req.path;
      if (res.status == 413) message = body_too_large();
      if (res.status == 400) message = "malformed HTTP request";
      // A request the connection layer stopped reading: its reason, and the connection closes.
      const CutOff cut = request_cut_off();
      if (res.status == 400 && cut != CutOff::None) {
        res.status = cut == CutOff::Deadline ? 408 : cut == CutOff::HeadTooLarge ? 431 : 413;
        message = cut == CutOff::Deadline ? "the request did not arrive within --read-timeout (" +
                                                std::to_string(state.options.read_timeout) + " s)"
                  : cut == CutOff::HeadTooLarge
                      ? "the request head (request line and headers) is larger than " +
                            std::to_string(GuardedHttpServer::kMaxHeadBytes) + " bytes"
                      : "the request is larger than the server reads for one request";
        res.set_header("Connection", "close");
      }
      send_json(res, res.status, error_json(res.status, message));
    });
    // An exception no handler caught: 500 without its text (which may name files), the text in
    // the server's log.
    http.set_exception_handler([](const Request&, Response& res, std::exception_ptr ep) {
      try {
        std::rethrow_exception(ep);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "eagle2 serve: a request failed: %s\n", e.what());
      } catch (...) {
      }
      send_json(res, 500, error_json(500, "internal error", "", "internal_error"));
    });
  }

  void run() {
    // The shutdown runs on its own thread, woken through the pipe (a signal handler can do no
    // more than write to it). In order: /health turns 503 and new completions get 503 (the
    // scheduler takes no more); queued requests end with 503 and admitted ones decode to their
    // end, or until --drain-timeout, when they end with their text so far and a shutting-down
    // error; their responses finish sending; only then does the listening socket close, because
    // httplib cuts streaming responses short once it has. listen() below then waits for the
    // remaining connections' handlers, so run() returns when the last response is complete.
    std::thread watcher([this] {
      stop_pipe.wait();
      state.stopping = true;
      // Returns once every admitted request has ended, at the drain deadline at the latest.
      state.scheduler.shutdown(std::chrono::steady_clock::now() +
                               std::chrono::seconds(state.options.drain_timeout));
      // The responses' last bytes: a client that stopped reading is dropped by httplib's write
      // timeout (5 s) well before this.
      state.wait_for_responses(std::chrono::seconds(10));
      // httplib's stop() acts only once listen() runs: wait for that, or for listen to fail.
      while (!http.is_running() && !listen_done)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      http.stop();
    });
    // Whatever ends listen (its threads could not be created, accept failed) ends run() with
    // an error, after the watcher, which would end the process if destroyed joinable.
    bool listened = false;
    std::string failure;
    try {
      listened = http.listen_after_bind();
    } catch (const std::exception& e) {
      failure = std::string("cannot start the HTTP server: ") + e.what();
    }
    if (!listened && failure.empty())
      failure = "the listening socket failed (" + std::string(std::strerror(errno)) + ")";
    listen_done = true;
    stop_pipe.notify();  // listen() failed: the watcher still has to finish
    watcher.join();
    if (!failure.empty()) fail(failure);
  }

  ServerState state;
  GuardedHttpServer http;  // after the state: destroyed first, its handlers use the state
  StopPipe stop_pipe;
  std::unique_ptr<SignalStop> signals;  // stop_on_signals(): restored when the server goes
  std::atomic<bool> listen_done{false};
  int port = -1;
  int offered_socket = -1;  // the listening socket, as httplib offered it to the socket options
};

Server::Server(const ServerOptions& options) {
  if (options.port != 0 && !can_bind(options.host, options.port)) cannot_listen(options);
  impl_ = std::make_unique<Impl>(options);
}

Server::~Server() = default;

int Server::port() const {
  return impl_->port;
}

std::string Server::summary() const {
  const ServerState& s = impl_->state;
  return "model " + s.model.id() + ", head " + s.model.head_name() + ", spec " +
         s.model.default_spec().label + ", parallel " + std::to_string(s.options.parallel);
}

std::string Server::default_spec() const {
  return impl_->state.model.default_spec().label;
}

void Server::run() {
  impl_->run();
}

void Server::stop() {
  impl_->stop_pipe.notify();
}

void Server::stop_on_signals() {
  if (!impl_->signals) impl_->signals = std::make_unique<SignalStop>(impl_->stop_pipe);
}

void Server::run_until_signal() {
  stop_on_signals();
  impl_->run();
}

}  // namespace eagle2::server

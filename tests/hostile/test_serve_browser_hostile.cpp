// `eagle2 serve` against what a web page could make a browser send (issue 43, "Browser safety"),
// over real loopback sockets to the real binary: a Host that is not the server's (DNS rebinding),
// a text/plain, form or untyped POST (a cross-site "simple request" needs no preflight), another
// site's Origin, and CORS for an origin the operator listed. Labelled "hostile" (ctest -L
// hostile); the bundled model, 127.0.0.1 only, a few dozen requests.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "support/serve_process.h"

namespace eagle2 {
namespace {

using nlohmann::json;

constexpr const char* kListedOrigin = "http://app.example:3000";
constexpr const char* kAllowedHost = "api.example";

// One server for the suite: the bundled model, one listed origin and one extra host name.
test::ServeProcess& server() {
  static const std::unique_ptr<test::ServeProcess> s = std::make_unique<test::ServeProcess>(
      std::string("--allowed-origins ") + kListedOrigin + " --allowed-host " + kAllowedHost);
  return *s;
}

const std::string kCompletion = json{{"prompt", "def add(a, b):"}, {"max_tokens", 4}}.dump();

httplib::Result get(const std::string& path, const httplib::Headers& headers) {
  httplib::Client c = server().client();
  return c.Get(path.c_str(), headers);
}

httplib::Result post(const httplib::Headers& headers, const std::string& content_type) {
  httplib::Client c = server().client();
  return c.Post("/v1/completions", headers, kCompletion, content_type.c_str());
}

// The raw request `text` on a fresh connection; the status of the answer (0: none).
int raw_status(const std::string& text) {
  const int sock = socket(AF_INET, SOCK_STREAM, 0);
  if (sock < 0) return 0;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(server().port()));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  timeval timeout{60, 0};
  setsockopt(sock, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  std::string reply;
  if (connect(sock, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      send(sock, text.data(), text.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(text.size())) {
    char buf[4096];
    for (ssize_t n;
         reply.find("\r\n") == std::string::npos && (n = recv(sock, buf, sizeof buf, 0)) > 0;)
      reply.append(buf, static_cast<size_t>(n));
  }
  close(sock);
  return reply.starts_with("HTTP/1.1 ") && reply.size() >= 12 ? std::stoi(reply.substr(9, 3)) : 0;
}

void expect_still_serving() {
  ASSERT_TRUE(server().alive()) << "the server died: wait status " << server().exit_status();
  const httplib::Result r = post({}, "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << r->body;
}

TEST(HostileBrowser, AHostThatIsNotTheServersGets403) {
  const std::string port = std::to_string(server().port());
  // A rebinding page's name resolves to 127.0.0.1, so it reaches the socket; its Host says so.
  for (const std::string& host : std::vector<std::string>{
           "rebind.attacker.example", "rebind.attacker.example:" + port, "127.0.0.1.nip.example",
           "localhost.attacker.example:" + port, "10.0.0.1", "[::1", "127.0.0.1:x"}) {
    const httplib::Headers h = {{"Host", host}};
    const httplib::Result health = get("/health", h);
    ASSERT_TRUE(health) << host;
    EXPECT_EQ(health->status, 403) << host << ": " << health->body;
    const httplib::Result completion = post(h, "application/json");
    ASSERT_TRUE(completion) << host;
    EXPECT_EQ(completion->status, 403) << host << ": " << completion->body;
    EXPECT_NE(completion->body.find("--allowed-host"), std::string::npos) << completion->body;
  }
  // The loopback names, with or without a port, and the operator's --allowed-host.
  for (const std::string& host : std::vector<std::string>{
           "127.0.0.1:" + port, "127.0.0.1", "localhost:" + port, "LocalHost", "[::1]:" + port,
           std::string(kAllowedHost), std::string(kAllowedHost) + ":" + port}) {
    const httplib::Result r = post({{"Host", host}}, "application/json");
    ASSERT_TRUE(r) << host;
    EXPECT_EQ(r->status, 200) << host << ": " << r->body;
  }
  // Two Host headers, whichever comes first.
  EXPECT_EQ(raw_status("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: evil.example\r\n\r\n"),
            403);
  EXPECT_EQ(raw_status("GET /health HTTP/1.1\r\nHost: evil.example\r\nHost: 127.0.0.1\r\n\r\n"),
            403);
  // No Host at all (HTTP/1.0): no browser sends that, so it is served.
  EXPECT_EQ(raw_status("GET /health HTTP/1.0\r\n\r\n"), 200);
  expect_still_serving();
}

TEST(HostileBrowser, ABodyThatIsNotDeclaredJsonGets415) {
  // What a cross-site form or fetch() can send without a CORS preflight.
  for (const char* type :
       {"text/plain", "text/plain;charset=UTF-8", "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x", "application/jsonp"}) {
    const httplib::Result r = post({}, type);
    ASSERT_TRUE(r) << type;
    EXPECT_EQ(r->status, 415) << type << ": " << r->body;
    EXPECT_NE(r->body.find("application/json"), std::string::npos) << r->body;
  }
  // No Content-Type at all (fetch() with an untyped Blob).
  EXPECT_EQ(raw_status("POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: " +
                       std::to_string(kCompletion.size()) + "\r\n\r\n" + kCompletion),
            415);
  for (const char* type : {"application/json; charset=utf-8", "Application/JSON"}) {
    const httplib::Result r = post({}, type);
    ASSERT_TRUE(r) << type;
    EXPECT_EQ(r->status, 200) << type << ": " << r->body;
  }
  expect_still_serving();
}

TEST(HostileBrowser, AnotherSitesOriginGets403AndNoCorsHeaders) {
  for (const char* origin : {"http://attacker.example", "null", "http://app.example:3001",
                             "https://app.example:3000", "http://127.0.0.1.attacker.example"}) {
    const httplib::Headers h = {{"Origin", origin}};
    const httplib::Result r = post(h, "application/json");
    ASSERT_TRUE(r) << origin;
    EXPECT_EQ(r->status, 403) << origin << ": " << r->body;
    EXPECT_FALSE(r->has_header("Access-Control-Allow-Origin")) << origin;
    const httplib::Result models = get("/v1/models", h);
    ASSERT_TRUE(models) << origin;
    EXPECT_EQ(models->status, 403) << origin;
    httplib::Client c = server().client();
    const httplib::Result preflight = c.Options("/v1/completions", h);
    ASSERT_TRUE(preflight) << origin;
    EXPECT_EQ(preflight->status, 403) << origin;
    EXPECT_FALSE(preflight->has_header("Access-Control-Allow-Origin")) << origin;
  }
  // The page's own origin (the web page at / POSTs with it): served, no CORS headers needed.
  const std::string own = "http://127.0.0.1:" + std::to_string(server().port());
  const httplib::Result r = post({{"Origin", own}}, "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << r->body;
  EXPECT_FALSE(r->has_header("Access-Control-Allow-Origin"));
  // Nor does any request without an Origin get them.
  const httplib::Result plain = post({}, "application/json");
  ASSERT_TRUE(plain);
  EXPECT_FALSE(plain->has_header("Access-Control-Allow-Origin"));
  expect_still_serving();
}

TEST(HostileBrowser, AListedOriginGetsItsCorsHeadersAndPreflight) {
  const httplib::Headers h = {{"Origin", kListedOrigin}};
  httplib::Client c = server().client();
  const httplib::Result preflight =
      c.Options("/v1/chat/completions", {{"Origin", kListedOrigin},
                                         {"Access-Control-Request-Method", "POST"},
                                         {"Access-Control-Request-Headers", "content-type"}});
  ASSERT_TRUE(preflight);
  EXPECT_EQ(preflight->status, 204);
  EXPECT_EQ(preflight->get_header_value("Access-Control-Allow-Origin"), kListedOrigin);
  EXPECT_NE(preflight->get_header_value("Access-Control-Allow-Methods").find("POST"),
            std::string::npos);
  EXPECT_NE(preflight->get_header_value("Access-Control-Allow-Headers").find("Content-Type"),
            std::string::npos);
  EXPECT_NE(preflight->get_header_value("Access-Control-Allow-Headers").find("Authorization"),
            std::string::npos);
  const httplib::Result r = post(h, "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(r->get_header_value("Access-Control-Allow-Origin"), kListedOrigin);
  EXPECT_EQ(r->get_header_value("Vary"), "Origin");
  // A refusal reaches the listed page too (it can read the error).
  const httplib::Result refused = post(h, "text/plain");
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 415);
  EXPECT_EQ(refused->get_header_value("Access-Control-Allow-Origin"), kListedOrigin);
  expect_still_serving();
}

}  // namespace
}  // namespace eagle2

// `eagle2 serve` against clients that hold connections (issue 43, "Connections"), over real
// loopback sockets to an in-process server: slowloris heads dribbled byte by byte and idle
// connections holding every one of --max-connections leave /health answering within 1 s (a
// generous bound that only catches the starvation, where a check waited for the slow clients)
// and get the next connection a 503 at once; both are cut at --read-timeout; keep-alive limits;
// an oversized head; a stuck scheduler makes /health 503. Bounded in time; 127.0.0.1 only.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "support/hostile_server.h"
#include "support/raw_connection.h"
#include "support/running_server.h"
#include "support/shared_data.h"

namespace eagle2 {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

constexpr int kMaxConnections = 4;
constexpr int kReadTimeout = 3;  // seconds

server::ServerOptions options(const std::string& model_cfg) {
  server::ServerOptions o;
  o.model_dir = model_cfg.substr(0, model_cfg.rfind('/'));
  o.port = 0;
  o.threads = 1;
  o.max_connections = kMaxConnections;
  o.read_timeout = kReadTimeout;
  o.keep_alive_timeout = 1;
  o.keep_alive_max = 3;
  return o;
}

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// GET /health on a fresh connection: its status and body, and how long the answer took.
struct Timed {
  int status = -1;
  std::string body;
  double seconds = 0;
};
Timed timed_get(int port, const std::string& path) {
  httplib::Client c("127.0.0.1", port);
  c.set_read_timeout(30);
  Timed t;
  const Clock::time_point start = Clock::now();
  const httplib::Result r = c.Get(path.c_str());
  t.seconds = seconds_since(start);
  if (r) {
    t.status = r->status;
    t.body = r->body;
  }
  return t;
}

// While every connection is held: /health answers at once with the scheduler's "ok", and any
// other request on a new connection gets 503 at once.
#define EXPECT_ANSWERED_WHILE_HELD(port)                                                          \
  do {                                                                                            \
    const Timed health = timed_get(port, "/health");                                              \
    EXPECT_EQ(health.status, 200) << health.body;                                                 \
    EXPECT_EQ(json::parse(health.body, nullptr, false), json({{"status", "ok"}})) << health.body; \
    EXPECT_LT(health.seconds, 1.0) << "/health waited behind the held connections";               \
    const Timed models = timed_get(port, "/v1/models");                                           \
    EXPECT_EQ(models.status, 503) << models.body;                                                 \
    EXPECT_NE(models.body.find("too_many_connections"), std::string::npos) << models.body;        \
    EXPECT_NE(models.body.find("--max-connections"), std::string::npos) << models.body;           \
  } while (0)

// A normal request afterwards gets a completion.
void expect_serving(int port) {
  httplib::Client c("127.0.0.1", port);
  c.set_read_timeout(60);
  const httplib::Result r = c.Post(
      "/v1/completions", R"({"prompt": "Once upon a time", "max_tokens": 8})", "application/json");
  ASSERT_TRUE(r) << "no answer to a normal request";
  EXPECT_EQ(r->status, 200) << r->body;
  EXPECT_FALSE(json::parse(r->body)["choices"][0]["text"].get<std::string>().empty());
}

TEST(ServeConnections, SlowlorisHeadsHoldingEveryConnectionLeaveHealthAnswering) {
  EAGLE2_SHARED_FILE(model_cfg, test::kHostileModel);
  test::RunningServer srv(options(model_cfg));
  // Each dribbles a head one byte every 100 ms, never finishing it, until the server closes.
  const std::string head =
      "GET /v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + std::string(200, 'a');
  std::vector<std::unique_ptr<test::RawConnection>> slow;
  std::vector<double> closed_after(kMaxConnections, -1);
  std::vector<std::thread> dribblers;
  const Clock::time_point start = Clock::now();
  for (int i = 0; i < kMaxConnections; ++i) {
    slow.push_back(std::make_unique<test::RawConnection>(srv.port()));
    ASSERT_TRUE(slow.back()->connected());
  }
  for (int i = 0; i < kMaxConnections; ++i)
    dribblers.emplace_back([&, i] {
      for (size_t b = 0; b < head.size() && seconds_since(start) < 15; ++b) {
        if (!slow[i]->send(head.substr(b, 1))) {
          closed_after[i] = seconds_since(start);
          return;
        }
        std::this_thread::sleep_for(milliseconds(100));
      }
    });
  // (accepted in the order they connected: the four hold the limit before the checks below)
  EXPECT_ANSWERED_WHILE_HELD(srv.port());
  for (std::thread& t : dribblers) t.join();
  // --read-timeout ends each, though bytes keep coming (the send after the close fails).
  for (int i = 0; i < kMaxConnections; ++i) {
    EXPECT_GT(closed_after[i], 0) << "slow connection " << i << " was never closed";
    EXPECT_LT(closed_after[i], kReadTimeout + 3.0) << "slow connection " << i;
  }
  expect_serving(srv.port());
}

TEST(ServeConnections, IdleConnectionsHoldingEveryConnectionLeaveHealthAnswering) {
  EAGLE2_SHARED_FILE(model_cfg, test::kHostileModel);
  test::RunningServer srv(options(model_cfg));
  std::vector<std::unique_ptr<test::RawConnection>> idle;
  const Clock::time_point start = Clock::now();
  for (int i = 0; i < kMaxConnections; ++i) {
    idle.push_back(std::make_unique<test::RawConnection>(srv.port()));
    ASSERT_TRUE(idle.back()->connected());
  }
  EXPECT_ANSWERED_WHILE_HELD(srv.port());
  // A POST beyond the limit too: 503 at once, its body unread.
  {
    httplib::Client c("127.0.0.1", srv.port());
    c.set_read_timeout(30);
    const httplib::Result r =
        c.Post("/v1/completions", R"({"prompt": "x", "max_tokens": 4})", "application/json");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 503) << r->body;
    EXPECT_EQ(r->get_header_value("Retry-After"), "1");
  }
  for (int i = 0; i < kMaxConnections; ++i)
    EXPECT_TRUE(idle[i]->closed_within(milliseconds(1000 * (kReadTimeout + 3))))
        << "idle connection " << i << " still open after " << seconds_since(start) << " s";
  EXPECT_LT(seconds_since(start), kReadTimeout + 3.0);
  expect_serving(srv.port());
  // The refusals were counted; the held connections are gone.
  EXPECT_TRUE(test::metric_reaches(srv.port(), "eagle2_connections_open", 1));  // /metrics' own
  EXPECT_GE(test::server_metric(srv.port(), "eagle2_connections_overflow_total").value_or(0), 3);
}

// Beyond the limit, slow clients hold no thread: ten more idle connections leave /health as fast,
// each gets its 503 after the lane's 1 s for a head, and the lane checks Host and Origin as the
// routes do.
TEST(ServeConnections, SlowClientsBeyondTheLimitDelayNothing) {
  EAGLE2_SHARED_FILE(model_cfg, test::kHostileModel);
  test::RunningServer srv(options(model_cfg));
  std::vector<std::unique_ptr<test::RawConnection>> held;
  for (int i = 0; i < kMaxConnections + 10; ++i) {
    held.push_back(std::make_unique<test::RawConnection>(srv.port()));
    ASSERT_TRUE(held.back()->connected());
  }
  std::this_thread::sleep_for(milliseconds(300));
  const Timed health = timed_get(srv.port(), "/health");
  EXPECT_EQ(health.status, 200) << health.body;
  EXPECT_LT(health.seconds, 1.0);
  {
    httplib::Client c("127.0.0.1", srv.port());
    c.set_read_timeout(30);
    const httplib::Result r = c.Get("/health", {{"Host", "rebound.example"}});
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 403) << r->body;
    const httplib::Result foreign = c.Get("/health", {{"Origin", "http://evil.example"}});
    ASSERT_TRUE(foreign);
    EXPECT_EQ(foreign->status, 403) << foreign->body;
    EXPECT_NE(foreign->body.find("Origin"), std::string::npos) << foreign->body;
    // The server's own page (http:// + its Host) may.
    const httplib::Result own =
        c.Get("/health", {{"Host", "127.0.0.1:" + std::to_string(srv.port())},
                          {"Origin", "http://127.0.0.1:" + std::to_string(srv.port())}});
    ASSERT_TRUE(own);
    EXPECT_EQ(own->status, 200) << own->body;
  }
  for (int i = kMaxConnections; i < kMaxConnections + 10; ++i) {
    bool closed = false;
    const std::string out = held[i]->read_until_close(milliseconds(30000), &closed);
    EXPECT_TRUE(out.starts_with("HTTP/1.1 503 ")) << "connection " << i << ": " << out;
    EXPECT_TRUE(closed) << "connection " << i;
  }
}

// A stopping server does not wait for an idle client's --read-timeout (here an hour).
TEST(ServeConnections, AStopDoesNotWaitForAnIdleConnection) {
  EAGLE2_SHARED_FILE(model_cfg, test::kHostileModel);
  server::ServerOptions o = options(model_cfg);
  o.read_timeout = 3600;
  auto srv = std::make_unique<test::RunningServer>(o);
  test::RawConnection idle(srv->port());
  ASSERT_TRUE(idle.connected());
  ASSERT_TRUE(test::metric_reaches(srv->port(), "eagle2_connections_open", 2));  // idle + /metrics
  std::atomic<bool> stopped{false};
  const Clock::time_point start = Clock::now();
  std::thread stopping([&] {
    srv.reset();  // stop() and wait for run() to return
    stopped = true;
  });
  while (!stopped && seconds_since(start) < 10) std::this_thread::sleep_for(milliseconds(20));
  EXPECT_TRUE(stopped) << "the stop waited for the idle connection";
  idle.close();  // (frees a server that waits, so that the test ends either way)
  stopping.join();
}

TEST(ServeConnections, KeepAliveServesAtMostItsCountAndClosesWhenIdle) {
  EAGLE2_SHARED_FILE(model_cfg, test::kHostileModel);
  test::RunningServer srv(options(model_cfg));
  const std::string get = "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
  {
    test::RawConnection c(srv.port());
    ASSERT_TRUE(c.send(get + get + get + get));  // four pipelined; --keep-alive-max is 3
    bool closed = false;
    const std::string out = c.read_until_close(milliseconds(30000), &closed);
    EXPECT_TRUE(closed);
    size_t answers = 0;
    for (size_t at = out.find("HTTP/1.1 200"); at != std::string::npos;
         at = out.find("HTTP/1.1 200", at + 1))
      ++answers;
    EXPECT_EQ(answers, 3u) << out;
    EXPECT_NE(out.find("Connection: close"), std::string::npos) << out;
  }
  {
    test::RawConnection c(srv.port());
    ASSERT_TRUE(c.send(get));
    bool closed = false;
    const Clock::time_point t = Clock::now();
    const std::string out = c.read_until_close(milliseconds(30000), &closed);
    EXPECT_NE(out.find("HTTP/1.1 200"), std::string::npos) << out;
    EXPECT_TRUE(closed) << "an idle keep-alive connection stayed open";
    EXPECT_LT(seconds_since(t), 1 + 2.0);  // --keep-alive-timeout 1
  }
}

TEST(ServeConnections, AHeadLargerThanTheLimitIsRefused) {
  EAGLE2_SHARED_FILE(model_cfg, test::kHostileModel);
  test::RunningServer srv(options(model_cfg));
  test::RawConnection c(srv.port());
  std::string head = "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n";
  // Lines under httplib's 8 KiB each, 80 KiB in all.
  for (int i = 0; i < 10; ++i)
    head += "X-Pad-" + std::to_string(i) + ": " + std::string(8000, 'a') + "\r\n";
  c.send(head + "\r\n");
  const std::string out = c.read_until_close(milliseconds(30000));
  EXPECT_EQ(out.find("HTTP/1.1 200"), std::string::npos) << out.substr(0, 200);
  EXPECT_NE(out.find("HTTP/1.1 431"), std::string::npos) << out.substr(0, 200);
  EXPECT_NE(out.find("Connection: close"), std::string::npos) << out.substr(0, 200);
  expect_serving(srv.port());
}

// A chunk-size line that never ends (httplib reads it into memory whole, where --max-body does
// not see it): the server stops reading at its byte budget for a request and closes, so the
// client cannot send 32 MB; a normal request afterwards gets its text.
TEST(ServeConnections, AnEndlessChunkSizeLineIsCutOff) {
  EAGLE2_SHARED_FILE(model_cfg, test::kHostileModel);
  test::RunningServer srv(options(model_cfg));
  {
    test::RawConnection c(srv.port());
    ASSERT_TRUE(
        c.send("POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: "
               "application/json\r\nTransfer-Encoding: chunked\r\n\r\n1;"));
    const std::string mib(size_t{1} << 20, 'x');
    bool all_sent = true;
    for (int i = 0; i < 32 && all_sent; ++i) all_sent = c.send(mib);
    EXPECT_FALSE(all_sent) << "the server read 32 MB of one chunk-size line";
    const std::string out = c.read_until_close(milliseconds(10000));
    EXPECT_EQ(out.find("HTTP/1.1 200"), std::string::npos) << out.substr(0, 200);
  }
  expect_serving(srv.port());
}

TEST(ServeConnections, AStuckSchedulerMakesHealthAnswer503) {
  EAGLE2_SHARED_FILE(model_cfg, test::kHostileModel);
  server::ServerOptions o = options(model_cfg);
  o.stall_timeout = 1;
  // One step blocks until the test has seen /health's 503 (at most 60 s).
  auto stall = std::make_shared<std::atomic<bool>>(false);
  auto release = std::make_shared<std::atomic<bool>>(false);
  o.before_step = [stall, release] {
    if (!stall->exchange(false)) return;
    for (int i = 0; i < 6000 && !*release; ++i) std::this_thread::sleep_for(milliseconds(10));
  };
  test::RunningServer srv(o);
  EXPECT_EQ(timed_get(srv.port(), "/health").status, 200);
  *stall = true;
  std::thread request([&] { expect_serving(srv.port()); });
  Timed health;
  for (int i = 0; i < 600 && health.status != 503; ++i) {
    std::this_thread::sleep_for(milliseconds(50));
    health = timed_get(srv.port(), "/health");
  }
  *release = true;
  request.join();
  EXPECT_EQ(health.status, 503) << health.body;
  const json body = json::parse(health.body, nullptr, false);
  EXPECT_EQ(body.value("status", ""), "unhealthy") << health.body;
  EXPECT_NE(body.value("reason", "").find("--stall-timeout 1"), std::string::npos) << health.body;
  EXPECT_LT(health.seconds, 1.0);
  EXPECT_EQ(timed_get(srv.port(), "/health").status, 200);  // the step ended: alive again
}

// A head or a body that does not arrive within --read-timeout gets 408 with Connection: close,
// then the close (the head's timer starts at the accept, the body's is the same request's).
TEST(ServeConnections, AHeadOrBodyPastTheReadTimeoutGets408) {
  EAGLE2_SHARED_FILE(model_cfg, test::kHostileModel);
  server::ServerOptions o = options(model_cfg);
  o.read_timeout = 1;
  test::RunningServer srv(o);
  test::RawConnection head(srv.port()), body(srv.port());
  ASSERT_TRUE(head.connected() && body.connected());
  EXPECT_TRUE(head.send("GET /v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\n"));
  EXPECT_TRUE(body.send(
      "POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
      "Content-Length: 100\r\n\r\n{\"prompt\": "));
  for (test::RawConnection* c : {&head, &body}) {
    bool closed = false;
    const std::string out = c->read_until_close(milliseconds(10000), &closed);
    EXPECT_TRUE(out.starts_with("HTTP/1.1 408 ")) << out;
    EXPECT_NE(out.find("Connection: close"), std::string::npos) << out;
    EXPECT_TRUE(closed);
  }
  expect_serving(srv.port());
}

// A body whose chunk framing outweighs it (one byte per chunk: 6 bytes on the wire for each) is
// cut at the bytes the server reads for one request (64 KiB + --max-body + max(64 KiB,
// --max-body / 2)) before its payload reaches --max-body: 413, not a 400 for malformed framing.
TEST(ServeConnections, ABodyOfTinyChunksIsCutAtTheRequestBudget) {
  EAGLE2_SHARED_FILE(model_cfg, test::kHostileModel);
  server::ServerOptions o = options(model_cfg);
  o.max_body = 65536;
  test::RunningServer srv(o);
  test::RawConnection c(srv.port());
  ASSERT_TRUE(c.connected());
  std::string body;
  for (int i = 0; i < 40000; ++i) body += "1\r\na\r\n";  // 40000 payload bytes, 240000 sent
  c.send(
      "POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
      "Transfer-Encoding: chunked\r\n\r\n" +
      body);
  bool closed = false;
  const std::string out = c.read_until_close(milliseconds(10000), &closed);
  EXPECT_TRUE(out.starts_with("HTTP/1.1 413 ")) << out.substr(0, 400);
  EXPECT_NE(out.find("larger than the server reads for one request"), std::string::npos) << out;
  EXPECT_TRUE(closed);
  expect_serving(srv.port());
}

}  // namespace
}  // namespace eagle2

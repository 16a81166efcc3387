// `eagle2 serve` when clients hang up before their answer (issue 43): a non-streaming request
// that is decoding and a request still queued behind it are cancelled as soon as their client
// closes the connection, so the slot, the queue place and the KV memory come back (the metrics
// show it) rather than after a decode nobody reads. Then a normal request gets generate's text.
// In-process server over real loopback sockets; bounded in time.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "support/cli.h"
#include "support/hostile_server.h"
#include "support/raw_connection.h"
#include "support/running_server.h"
#include "support/shared_data.h"

namespace eagle2 {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;

std::string completion_request(int max_tokens) {
  const std::string body =
      json({{"prompt", test::kHostilePrompt}, {"max_tokens", max_tokens}, {"speculative", "plain"}})
          .dump();
  return "POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: "
         "application/json\r\nContent-Length: " +
         std::to_string(body.size()) + "\r\n\r\n" + body;
}

const std::string kCancelled = R"(eagle2_requests_total{status="cancelled"})";

TEST(ServeHangUps, NonStreamingAndQueuedRequestsEndWhenTheirClientsLeave) {
  EAGLE2_SHARED_FILE(model_cfg, test::kHostileModel);
  const std::string model_dir = model_cfg.substr(0, model_cfg.rfind('/'));
  server::ServerOptions o;
  o.model_dir = model_dir;
  o.port = 0;
  o.threads = 1;
  o.parallel = 1;
  o.max_queue = 4;
  // Steps slowed to 20 ms while `slow`: the 400 tokens asked below would take 8 s (stories260K
  // does not reach its EOS within them after this prompt).
  auto slow = std::make_shared<std::atomic<bool>>(true);
  o.before_step = [slow] {
    if (*slow) std::this_thread::sleep_for(milliseconds(20));
  };
  test::RunningServer srv(o);
  const int port = srv.port();

  test::RawConnection decoding(port);
  ASSERT_TRUE(decoding.send(completion_request(400)));
  ASSERT_TRUE(test::metric_reaches(port, "eagle2_slots_busy", 1));
  test::RawConnection queued(port);
  ASSERT_TRUE(queued.send(completion_request(400)));
  ASSERT_TRUE(test::metric_reaches(port, "eagle2_queue_depth", 1));

  // The queued request leaves the queue while the slot is still busy.
  queued.close();
  EXPECT_TRUE(test::metric_reaches(port, "eagle2_queue_depth", 0));
  EXPECT_TRUE(test::metric_reaches(port, kCancelled, 1));
  EXPECT_EQ(test::server_metric(port, "eagle2_slots_busy"), 1);

  // The decoding one ends long before its 8 s: slot and KV memory free.
  decoding.close();
  EXPECT_TRUE(test::metric_reaches(port, kCancelled, 2, milliseconds(30000)));
  EXPECT_TRUE(test::metric_reaches(port, "eagle2_slots_busy", 0));
  EXPECT_TRUE(test::metric_reaches(port, "eagle2_kv_blocks_used", 0));
  EXPECT_EQ(test::server_metric(port, R"(eagle2_requests_total{status="ok"})").value_or(0), 0);

  *slow = false;
  const test::CliRun generate =
      test::run_cli_split("generate -m '" + model_dir + "' -p '" + test::kHostilePrompt + "' -n 8");
  ASSERT_EQ(generate.code, 0) << generate.err;
  httplib::Client c("127.0.0.1", port);
  c.set_read_timeout(60);
  const httplib::Result r =
      c.Post("/v1/completions", json({{"prompt", test::kHostilePrompt}, {"max_tokens", 8}}).dump(),
             "application/json");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(std::string(test::kHostilePrompt) +
                json::parse(r->body)["choices"][0]["text"].get<std::string>() + "\n",
            generate.out);
}

}  // namespace
}  // namespace eagle2

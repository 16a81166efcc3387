// The scheduler's fault branches end to end, over real loopback sockets against the real binary:
// `eagle2 serve` on stories260K with its EAGLE head (EAGLE-2 dynamic trees, drafted in lockstep
// under the server's batch cost model) and the test-only EAGLE2_TEST_FAULT marker (docs/SERVER.md
// "Faults stay local"). A request whose prompt asks for a fault in its drafting (inside the
// lockstep of the requests beside it) or in its verification gets a 500 that says nothing of what
// failed inside; the requests decoding beside it get exactly `eagle2 generate`'s text; the server
// serves on. A request whose admission throws something other than the engine's refusal gets a
// 500 as well.
#include <gtest/gtest.h>

#include <csignal>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "support/cli.h"
#include "support/hostile_server.h"
#include "support/serve_process.h"
#include "support/shared_data.h"

namespace eagle2 {
namespace {

using nlohmann::json;

constexpr const char* kMarker = "eagle2-test-fault-marker";
constexpr int kLongTokens = 120;

struct InjectedAnswer {
  int status = -1;  // -1: no answer
  std::string body;
};

InjectedAnswer complete(const test::ServeProcess& s, const std::string& prompt, int max_tokens) {
  // "dynamic": EAGLE-2 trees of a fixed size, drafted every cycle (the default, dynamic:auto,
  // may verify the root alone on this small model, and such a cycle drafts nothing to fail).
  const json body = {{"prompt", prompt}, {"max_tokens", max_tokens}, {"speculative", "dynamic"}};
  const httplib::Result r = s.client().Post("/v1/completions", body.dump(), "application/json");
  return r ? InjectedAnswer{r->status, r->body} : InjectedAnswer{};
}

// The server's log lines "eagle2 serve: F of N requests failed in their own step": the F of those
// whose N is above 1 (requests that failed beside others), summed.
int failed_beside_others(const std::string& log) {
  int sum = 0;
  const std::string tail = " requests failed in their own step";
  for (size_t at = log.find(tail); at != std::string::npos; at = log.find(tail, at + 1)) {
    const size_t line = log.rfind("eagle2 serve: ", at);
    int failed = 0, of = 0;
    if (line != std::string::npos &&
        std::sscanf(log.c_str() + line, "eagle2 serve: %d of %d", &failed, &of) == 2 && of > 1)
      sum += failed;
  }
  return sum;
}

void expect_internal_error(const InjectedAnswer& a) {
  EXPECT_EQ(a.status, 500) << a.body;
  EXPECT_NE(a.body.find("\"internal_error\""), std::string::npos) << a.body;
  EXPECT_EQ(a.body.find('/'), std::string::npos) << "a path in: " << a.body;
  EXPECT_EQ(a.body.find("injected"), std::string::npos) << "the exception's text in: " << a.body;
  EXPECT_EQ(a.body.find(kMarker), std::string::npos) << "the prompt in: " << a.body;
}

TEST(ServeInjectedFaults, AFaultyRequestFailsAloneBesideRequestsThatGetTheirText) {
  EAGLE2_SHARED_FILE(model_cfg, test::kHostileModel);
  EAGLE2_SHARED_FILE(head_cfg, test::kHostileHead);
  const std::string model_dir = model_cfg.substr(0, model_cfg.rfind('/'));
  const std::string head_dir = head_cfg.substr(0, head_cfg.rfind('/'));
  const std::string prompt = test::kHostilePrompt, other = "Lily and Tom";
  const std::string expected = test::generated_text(model_dir, prompt, kLongTokens);
  const std::string expected_other = test::generated_text(model_dir, other, kLongTokens);
  test::ServeProcess server("-m " + model_dir + " --draft " + head_dir + " --parallel 4",
                            std::string("EAGLE2_TEST_FAULT=") + kMarker);
  ASSERT_NE(server.port(), 0);
  const test::ServeProcess& s = server;

  // A long request decodes; then one more and the two faulty ones arrive beside it, so that the
  // faulty ones are drafted in lockstep with the others (the server's step log below says so).
  InjectedAnswer first, second, drafting, verification;
  std::thread a([&] { first = complete(s, prompt, kLongTokens); });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  std::thread b([&] { second = complete(s, other, kLongTokens); });
  std::thread c([&] { drafting = complete(s, prompt + " " + kMarker + ":drafting", 8); });
  std::thread d([&] { verification = complete(s, prompt + " " + kMarker + ":verification", 8); });
  for (std::thread* t : {&a, &b, &c, &d}) t->join();
  expect_internal_error(drafting);
  expect_internal_error(verification);
  ASSERT_EQ(first.status, 200) << first.body;
  EXPECT_EQ(json::parse(first.body)["choices"][0]["text"], expected);
  ASSERT_EQ(second.status, 200) << second.body;
  EXPECT_EQ(json::parse(second.body)["choices"][0]["text"], expected_other);

  // The server serves on: a faulty request alone fails, a normal one gets its text. An admission
  // that throws something other than the engine's refusal (eagle2::Error, a 400) is a 500.
  expect_internal_error(complete(s, std::string(kMarker) + ":drafting", 8));
  expect_internal_error(complete(s, std::string(kMarker) + ":admission", 8));
  ASSERT_TRUE(server.alive());
  const InjectedAnswer after = complete(s, prompt, kLongTokens);
  ASSERT_EQ(after.status, 200) << after.body;
  EXPECT_EQ(json::parse(after.body)["choices"][0]["text"], expected);
  // The failed requests gave back their KV memory and its reservation.
  const httplib::Result metrics = s.client().Get("/metrics");
  ASSERT_TRUE(metrics);
  for (const char* line :
       {"eagle2_kv_blocks_used 0", "eagle2_kv_blocks_reserved 0",
        "eagle2_kv_drafter_bytes_reserved 0", "eagle2_requests_total{status=\"error\"} 4"})
    EXPECT_NE(metrics->body.find(std::string("\n") + line + "\n"), std::string::npos)
        << line << " in " << metrics->body;

  server.signal(SIGTERM);
  EXPECT_EQ(server.wait(), 0);
  const std::string log = server.err();
  EXPECT_NE(log.find("EAGLE2_TEST_FAULT is set"), std::string::npos) << log;
  EXPECT_NE(log.find("a request failed to start: std::bad_alloc"), std::string::npos) << log;
  // Both faulty requests failed in their own steps beside other requests (the lone one after
  // them alone), and no step failed as a whole.
  EXPECT_EQ(failed_beside_others(log), 2) << log;
  // The one step that failed as a whole is the lone faulty request's (a step of one request).
  EXPECT_EQ(log.find("a step of "), log.find("a step of 1 requests failed")) << log;
  EXPECT_EQ(log.find("a step of "), log.rfind("a step of ")) << log;
}

// The marker is the operator's: without EAGLE2_TEST_FAULT a prompt holding it is a prompt.
TEST(ServeInjectedFaults, WithoutTheVariableTheMarkerIsText) {
  EAGLE2_SHARED_FILE(model_cfg, test::kHostileModel);
  EAGLE2_SHARED_FILE(head_cfg, test::kHostileHead);
  const std::string model_dir = model_cfg.substr(0, model_cfg.rfind('/'));
  const std::string prompt = std::string(kMarker) + ":drafting";
  test::ServeProcess server("-m " + model_dir + " --draft " +
                            head_cfg.substr(0, head_cfg.rfind('/')));
  ASSERT_NE(server.port(), 0);
  const InjectedAnswer a = complete(server, prompt, 4);
  ASSERT_EQ(a.status, 200) << a.body;
  EXPECT_EQ(json::parse(a.body)["choices"][0]["text"], test::generated_text(model_dir, prompt, 4));
}

// A marker short enough to turn up in real prompts is refused at start-up.
TEST(ServeInjectedFaults, AShortMarkerIsRefused) {
  EAGLE2_SHARED_FILE(model_cfg, test::kHostileModel);
  const test::CliRun run = test::run_shell(std::string("env EAGLE2_TEST_FAULT=short ") +
                                           EAGLE2_CLI_PATH + " serve --port 0 -m '" +
                                           model_cfg.substr(0, model_cfg.rfind('/')) + "' 2>&1");
  EXPECT_EQ(run.code, 1) << run.out;
  EXPECT_NE(run.out.find("at least 16 characters"), std::string::npos) << run.out;
}

}  // namespace
}  // namespace eagle2

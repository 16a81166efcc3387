// eagle2 serve as a process on the bundled model: its flags, the line it prints when listening,
// 503 when the queue is full, a hung-up client's request cancelled, and SIGTERM in the middle of
// a streaming request: the request finishes and the process exits 0.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "support/cli.h"
#include "support/serve_process.h"
#include "support/shared_data.h"
#include "support/sse_client.h"

namespace eagle2 {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;
using test::ServeProcess;

// A long plain-decoding request (about a second of work on the bundled model, more under ASan).
json long_request() {
  return {{"prompt", "def binary_search(items, target):\n"},
          {"max_tokens", 200},
          {"speculative", "plain"},
          {"stream", true}};
}

TEST(Serve, FlagErrorsAreOneLine) {
  const std::pair<const char*, const char*> flag_errors[] = {
      {"serve --port 70000", "--port"},
      {"serve --port -1", "--port"},
      {"serve --parallel 0", "--parallel"},
      {"serve --max-queue -1", "--max-queue"},
      {"serve --spec bogus", "--spec"},
      {"serve --api-key ''", "--api-key"},
      {"serve --max-body 10", "--max-body"},
      {"serve --chat-template /no/such", "--chat"},
      {"serve --host", "--host"},
      {"serve --bogus", "--bogus"},
      {"serve --spec chain:3 --depth 2", "--spec"},
      {"serve --tree bogus", "--tree"},
      {"serve --drafter bogus", "--drafter"},
      {"serve --drafter =chain:3", "--drafter"},
      {"serve --drafter x=", "--drafter"},
      {"serve --max-tokens -1", "--max-tokens"},
      {"serve --max-draft-tokens 0", "--max-draft-tokens"},
      {"serve --max-draft-depth 0", "--max-draft-depth"},
      {"serve --max-draft-top-k 0", "--max-draft-top-k"},
      {"serve --drain-timeout -1", "--drain-timeout"},
      {"serve --max-connections -1", "--max-connections"},
      {"serve --read-timeout 0", "--read-timeout"},
      {"serve --keep-alive-timeout 0", "--keep-alive-timeout"},
      {"serve --keep-alive-max 0", "--keep-alive-max"},
      {"serve --stall-timeout 0", "--stall-timeout"},
      {"serve --allowed-origins foo", "--allowed-origins"},
      {"serve --allowed-origins http://a.example/", "--allowed-origins"},
      {"serve --allowed-origins http://a.example,ftp://b", "--allowed-origins"},
      {"serve --allowed-host ''", "--allowed-host"},
  };
  for (const auto& [args, flag] : flag_errors) {
    const test::CliRun run = test::run_cli_split(args);
    EXPECT_EQ(run.code, 2) << args << ": " << run.err;
    EXPECT_TRUE(run.err.starts_with("error: ")) << args << ": " << run.err;
    EXPECT_NE(run.err.find(flag), std::string::npos) << args << ": " << run.err;
  }
  // Errors of what the flags name: exit 1, one line.
  for (const char* args :
       {"serve --port 0 -m /no/such/model", "serve --port 0 --draft /no/such",
        "serve --port 0 --draft none --spec chain:3", "serve --port 0 --drafter chain=chain:3",
        "serve --port 0 --drafter a=chain:3 --drafter a=lookup",
        "serve --port 0 --drafter a=bogus:1", "serve --port 0 --drafter a=sps:/no/such/draft"}) {
    const test::CliRun run = test::run_cli_split(args);
    std::string why;
    EXPECT_TRUE(test::is_one_clean_error(run, &why)) << args << ": " << why;
  }
}

// A file under the test's temporary folder holding `text`; its path.
std::string key_file(const std::string& name, const std::string& text) {
  const std::filesystem::path path = std::filesystem::temp_directory_path() /
                                     ("eagle2_serve_key_" + std::to_string(getpid()) + "_" + name);
  std::ofstream(path, std::ios::binary) << text;
  return path.string();
}

TEST(Serve, ApiKeySourcesThatCannotBeUsedAreOneLineErrors) {
  const std::string empty = key_file("empty", "");
  const std::string blank_line = key_file("blank", "\nsecond-line-key\n");
  const std::string good = key_file("good", "k\n");
  const std::string dir = std::filesystem::temp_directory_path().string();
  // The key is resolved before anything loads: with a model that does not exist, a key source
  // that is wrongly accepted shows as the model's error instead of hanging in a started server.
  const std::string no_model = "serve --port 0 -m /no/such/model ";
  const std::pair<std::string, std::string> cases[] = {
      {no_model + "--api-key-file /no/such/key", "cannot open"},
      {no_model + "--api-key-file " + dir, "not a regular file"},
      {no_model + "--api-key-file /dev/null", "not a regular file"},
      {no_model + "--api-key-file " + empty, "empty"},
      {no_model + "--api-key-file " + blank_line, "empty"},
      {no_model + "--api-key k --api-key-file " + good, "one way only"},
      {no_model + "--api-key k", "one way only"},  // with EAGLE2_API_KEY set below
      {no_model + "--api-key-file " + good, "one way only"},
  };
  for (size_t i = 0; i < std::size(cases); ++i) {
    const auto& [args, says] = cases[i];
    if (i == 6) setenv("EAGLE2_API_KEY", "from-env", 1);
    const test::CliRun run = test::run_cli_split(args);
    std::string why;
    EXPECT_TRUE(test::is_one_clean_error(run, &why)) << args << ": " << why;
    EXPECT_NE(run.err.find(says), std::string::npos) << args << ": " << run.err;
  }
  setenv("EAGLE2_API_KEY", "", 1);
  const test::CliRun run = test::run_cli_split(no_model);
  std::string why;
  EXPECT_TRUE(test::is_one_clean_error(run, &why)) << "EAGLE2_API_KEY='': " << why;
  EXPECT_NE(run.err.find("EAGLE2_API_KEY"), std::string::npos) << run.err;
  unsetenv("EAGLE2_API_KEY");
  for (const std::string& f : {empty, blank_line, good}) std::filesystem::remove(f);
}

// The key from --api-key-file (its first line, the line ending stripped) or EAGLE2_API_KEY is
// the one /v1/ asks for.
TEST(Serve, ApiKeyFromAFileOrTheEnvironment) {
  auto status = [](const ServeProcess& srv, const std::string& key) {
    httplib::Client c = srv.client();
    httplib::Headers h;
    if (!key.empty()) h.emplace("Authorization", "Bearer " + key);
    const httplib::Result r = c.Get("/v1/models", h);
    return r ? r->status : 0;
  };
  const std::string file = key_file("crlf", "file-key\r\nnot-the-key\n");
  {
    ServeProcess srv("--api-key-file " + file);
    EXPECT_EQ(status(srv, ""), 401);
    EXPECT_EQ(status(srv, "not-the-key"), 401);
    EXPECT_EQ(status(srv, "file-key\r"), 401);
    EXPECT_EQ(status(srv, "file-key"), 200);
  }
  std::filesystem::remove(file);
  setenv("EAGLE2_API_KEY", "env-key", 1);
  {
    ServeProcess srv("");
    EXPECT_EQ(status(srv, ""), 401);
    EXPECT_EQ(status(srv, "env-ke"), 401);
    EXPECT_EQ(status(srv, "env-key"), 200);
  }
  unsetenv("EAGLE2_API_KEY");
}

TEST(Serve, ListensOnThePortItPrintsAndRefusesATakenOne) {
  ServeProcess srv("");
  ASSERT_GT(srv.port(), 0);
  httplib::Client c = srv.client();
  const httplib::Result r = c.Get("/health");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  const test::CliRun taken = test::run_cli_split("serve -t 1 --port " + std::to_string(srv.port()));
  std::string why;
  EXPECT_TRUE(test::is_one_clean_error(taken, &why)) << why;
  EXPECT_NE(taken.err.find("cannot listen"), std::string::npos) << taken.err;
  // The port is checked before anything is loaded or measured (which takes minutes on a slow
  // machine): with a folder that holds no model, the error is still the port's.
  const test::CliRun before_load = test::run_cli_split("serve -t 1 -m " + testing::TempDir() +
                                                       " --port " + std::to_string(srv.port()));
  EXPECT_TRUE(test::is_one_clean_error(before_load, &why)) << why;
  EXPECT_NE(before_load.err.find("cannot listen"), std::string::npos) << before_load.err;
  srv.signal(SIGINT);
  EXPECT_EQ(srv.wait(), 0);
  const std::string err = srv.err();
  EXPECT_NE(err.find("(model code-lm, head code-lm-eagle, spec dynamic:auto:8:1:cal, "
                     "parallel 4)"),
            std::string::npos)
      << err;
}

// generate's drafter shorthands name the default drafter as --spec would.
TEST(Serve, GenerateDrafterFlagsNameTheDefaultSpec) {
  ServeProcess srv("--tree chain --depth 3");
  srv.signal(SIGINT);
  EXPECT_EQ(srv.wait(), 0);
  EXPECT_NE(srv.err().find(", spec chain:3, "), std::string::npos) << srv.err();
}

// The server serves EAGLE-3 heads too (--draft detects the kind): a request drafted with the
// reference head returns plain decoding's text in fewer target forwards.
TEST(Serve, AnEagle3HeadServesARequest) {
  EAGLE2_SHARED_FILE(cfg, "data/models/code-lm-eagle3-ref/config.json");
  ServeProcess srv("--draft " + cfg.substr(0, cfg.rfind('/')));
  httplib::Client c = srv.client();
  auto complete = [&](const std::string& spec) {
    const json body = {{"prompt", "def fibonacci(n):\n"},
                       {"max_tokens", 24},
                       {"temperature", 0},
                       {"speculative", spec}};
    const httplib::Result r = c.Post("/v1/completions", body.dump(), "application/json");
    EXPECT_TRUE(r);
    if (!r) return json();
    EXPECT_EQ(r->status, 200) << r->body;
    return json::parse(r->body);
  };
  const json drafted = complete("dynamic:16:3:4"), plain = complete("plain");
  ASSERT_TRUE(drafted.contains("choices") && plain.contains("choices"));
  EXPECT_EQ(drafted["choices"][0]["text"], plain["choices"][0]["text"]);
  EXPECT_EQ(drafted["usage"]["completion_tokens"], 24);
  EXPECT_LT(drafted["usage"]["target_forwards"].get<int64_t>(), 24) << drafted.dump();
  srv.signal(SIGTERM);
  EXPECT_EQ(srv.wait(), 0);
}

TEST(Serve, ChatTemplateFlag) {
  // The bundled model has no template of its own.
  EAGLE2_SHARED_FILE(tmpl, "data/chat_templates/meta-llama-Llama-3.1-8B-Instruct.jinja");
  ServeProcess srv("--chat-template " + tmpl);
  httplib::Client c = srv.client();
  const json body = {{"messages", {{{"role", "user"}, {"content", "Write a loop."}}}},
                     {"max_tokens", 8}};
  const httplib::Result r = c.Post("/v1/chat/completions", body.dump(), "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << r->body;
  const json j = json::parse(r->body);
  EXPECT_EQ(j["object"], "chat.completion");
  EXPECT_EQ(j["usage"]["completion_tokens"], 8);
  srv.signal(SIGTERM);
  EXPECT_EQ(srv.wait(), 0);
}

TEST(Serve, QueueFullGets503AndAHungUpClientIsCancelled) {
  ServeProcess srv("--parallel 1 --max-queue 1");
  constexpr int kClients = 4;
  std::vector<test::SseResult> results(kClients);
  std::vector<std::thread> clients;
  for (int i = 0; i < kClients; ++i) {
    clients.emplace_back([&srv, &results, i] {
      httplib::Client c = srv.client();
      // Hang up at the first chunk: the request's tokens are not wanted any more.
      results[static_cast<size_t>(i)] = test::post_sse(c, "/v1/completions", long_request(), {},
                                                       [](const json&) { return false; });
    });
  }
  for (std::thread& t : clients) t.join();
  int ok = 0, refused = 0;
  for (const test::SseResult& r : results) {
    if (r.status == 200) {
      ++ok;
    } else {
      ++refused;
      EXPECT_EQ(r.status, 503) << r.raw;
      EXPECT_EQ(r.retry_after, "1");
      const json e = json::parse(r.raw);
      EXPECT_NE(e["error"]["message"].get<std::string>().find("queue is full"), std::string::npos)
          << r.raw;
    }
  }
  // One slot and one queue place: 4 requests at once cannot all be taken.
  EXPECT_GE(ok, 1);
  EXPECT_GE(refused, 1);
  httplib::Client c = srv.client();
  // Each hung-up request leaves at the scheduler's next step: they end cancelled, not after 200
  // tokens, and /metrics says so.
  std::string metrics;
  for (int i = 0; i < 100; ++i) {
    const httplib::Result r = c.Get("/metrics");
    ASSERT_TRUE(r);
    metrics = r->body;
    if (metrics.find("eagle2_requests_total{status=\"cancelled\"} " + std::to_string(ok)) !=
        std::string::npos)
      break;
    std::this_thread::sleep_for(100ms);
  }
  EXPECT_NE(metrics.find("eagle2_requests_total{status=\"cancelled\"} " + std::to_string(ok)),
            std::string::npos)
      << metrics;
  EXPECT_NE(metrics.find("eagle2_requests_total{status=\"503\"} " + std::to_string(refused)),
            std::string::npos)
      << metrics;
  srv.signal(SIGTERM);
  EXPECT_EQ(srv.wait(), 0);
}

TEST(Serve, SigtermDuringAStreamLetsItFinishThenExitsZero) {
  ServeProcess srv("");
  std::atomic<bool> signalled{false};
  test::SseResult s;
  int events = 0, health = -1, refused = -1;
  {
    // Scoped: the client's keep-alive connection closes before the server is waited for.
    httplib::Client c = srv.client();
    s = test::post_sse(c, "/v1/completions", long_request(), {}, [&](const json&) {
      if (!signalled.exchange(true)) srv.signal(SIGTERM);
      // While the stream drains: /health says so (a load balancer stops sending) and a new
      // request is refused rather than queued behind the shutdown.
      if (++events == 20) {
        httplib::Client other = srv.client();
        const httplib::Result h = other.Get("/health");
        health = h ? h->status : 0;
        const httplib::Result r = other.Post(
            "/v1/completions", R"({"prompt": "x", "max_tokens": 4})", "application/json");
        refused = r ? r->status : 0;
      }
      return true;
    });
  }
  EXPECT_TRUE(signalled);
  if (events >= 20) {
    EXPECT_EQ(health, 503);
    EXPECT_EQ(refused, 503);
  }
  EXPECT_EQ(s.status, 200);
  EXPECT_TRUE(s.done) << s.raw;
  const std::string reason = test::finish_reason(s);
  EXPECT_TRUE(reason == "length" || reason == "stop") << s.raw;
  int tokens = 0;
  for (const json& e : s.events)
    if (e.contains("x_eagle2")) tokens += static_cast<int>(e["x_eagle2"]["tokens"].size());
  if (reason == "length") {
    EXPECT_EQ(tokens, 200);
  }
  EXPECT_EQ(srv.wait(), 0);
  EXPECT_NE(srv.err().find("eagle2 serve: stopped"), std::string::npos);
}

// A request still decoding at --drain-timeout (here 0: at once) ends with its text so far and a
// shutting-down error event, and the process exits 0.
TEST(Serve, SigtermEndsRequestsAtTheDrainDeadline) {
  ServeProcess srv("--drain-timeout 0");
  json body = long_request();
  body["max_tokens"] = 1000;  // the bundled model's context is 1024
  std::atomic<bool> signalled{false};
  test::SseResult s;
  {
    httplib::Client c = srv.client();
    s = test::post_sse(c, "/v1/completions", body, {}, [&](const json&) {
      if (!signalled.exchange(true)) srv.signal(SIGTERM);
      return true;
    });
  }
  ASSERT_TRUE(signalled) << "no event came";  // (unsignalled, wait() would never return)
  EXPECT_EQ(s.status, 200);
  EXPECT_TRUE(s.done) << s.raw;
  EXPECT_NE(s.raw.find("the server is shutting down"), std::string::npos) << s.raw;
  int tokens = 0;
  for (const json& e : s.events)
    if (e.contains("x_eagle2")) tokens += static_cast<int>(e["x_eagle2"]["tokens"].size());
  EXPECT_GT(tokens, 0);
  EXPECT_LT(tokens, 1000);
  EXPECT_EQ(srv.wait(), 0);
  EXPECT_NE(srv.err().find("eagle2 serve: stopped"), std::string::npos);
}

// A second signal does not wait for the drain (here 600 s): the process exits at once, 128 +
// SIGTERM as a shell reports it.
TEST(Serve, ASecondSignalExitsAtOnce) {
  ServeProcess srv("--drain-timeout 600");
  json body = long_request();
  body["max_tokens"] = 1000;  // the bundled model's context is 1024
  std::atomic<bool> signalled{false};
  {
    httplib::Client c = srv.client();
    test::post_sse(c, "/v1/completions", body, {}, [&](const json&) {
      if (!signalled.exchange(true)) {
        srv.signal(SIGTERM);
        std::this_thread::sleep_for(200ms);  // the first is taken before the second comes
        srv.signal(SIGTERM);
      }
      return true;
    });
  }
  ASSERT_TRUE(signalled) << "no event came";  // (unsignalled, wait() would never return)
  EXPECT_EQ(srv.wait(), 128 + SIGTERM);
}

}  // namespace
}  // namespace eagle2

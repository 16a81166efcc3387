// `eagle2 serve` under a bounded fuzz of request bodies (issue 43), over real loopback sockets to
// the real binary: 1000 mutated valid requests (fixed seed; bytes flipped, inserted, cut, and
// splices of deep JSON, bad UTF-8, huge numbers, hostile specs), then the heaviest valid requests
// four at a time. Every body gets an answer or a closed connection, the process never dies, its
// resident memory returns near where it was at rest, and a normal request afterwards still gets
// generate's text. Labelled "hostile"; bounded in count and time; 127.0.0.1 only.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "support/cli.h"
#include "support/serve_process.h"
#include "support/shared_data.h"

namespace eagle2 {
namespace {

using nlohmann::json;

constexpr const char* kModel = "data/models/stories260K-hf/config.json";
constexpr const char* kHead = "data/models/stories260K-eagle-head/config.json";
constexpr const char* kPrompt = "Once upon a time";
constexpr int kTokens = 8;

std::string dir_of(const std::string& file) {
  return file.substr(0, file.rfind('/'));
}

// stories260K with its EAGLE head and two drafters offered by name (one with its own head
// folder, one a draft model), a small --max-body, as test_serve_hostile.cpp's server.
struct Fixture {
  std::string model_dir, head_dir, expected;
  std::unique_ptr<test::ServeProcess> server;
};

httplib::Result post(const Fixture& f, const std::string& path, const std::string& body) {
  httplib::Client c("127.0.0.1", f.server->port());
  c.set_read_timeout(60);
  c.set_write_timeout(10);
  return c.Post(path.c_str(), body, "application/json");
}

// The server is alive and a normal request gets generate's text.
void expect_still_serving(Fixture& f) {
  ASSERT_TRUE(f.server->alive()) << "the server died: wait status " << f.server->exit_status();
  const json body = {{"prompt", kPrompt}, {"max_tokens", kTokens}};
  const httplib::Result r = post(f, "/v1/completions", body.dump());
  ASSERT_TRUE(r) << "no answer to a normal request";
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(json::parse(r->body)["choices"][0]["text"], f.expected);
}

// The body for a failure message: bytes outside printable ASCII as \xNN, at most 300.
std::string printable(const std::string& body) {
  std::string out;
  for (const char c : body.substr(0, 300)) {
    if (c >= 0x20 && c < 0x7f) {
      out += c;
    } else {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", static_cast<unsigned char>(c));
      out += hex;
    }
  }
  return out;
}

TEST(HostileFuzz, FuzzedBodiesNeverCrashTheServerAndMemoryReturns) {
  EAGLE2_SHARED_FILE(model_cfg, kModel);
  EAGLE2_SHARED_FILE(head_cfg, kHead);
  Fixture f;
  f.model_dir = dir_of(model_cfg);
  f.head_dir = dir_of(head_cfg);
  f.server = std::make_unique<test::ServeProcess>(
      "-m " + f.model_dir + " --draft " + f.head_dir + " --max-body 65536" +
      " --drafter wide=dynamic:8:3:2@" + f.head_dir + " --drafter self=sps:" + f.model_dir + ":2");
  ASSERT_GT(f.server->port(), 0) << "the server did not start";
  const test::CliRun run = test::run_cli_split("generate -m " + f.model_dir + " -p '" + kPrompt +
                                               "' -n " + std::to_string(kTokens));
  ASSERT_EQ(run.code, 0) << run.err;
  f.expected =
      run.out.substr(std::string(kPrompt).size(), run.out.size() - std::string(kPrompt).size() - 1);
  // The resident memory at rest, after normal requests have warmed the allocator's arenas and
  // the engine's scratch buffers (each first use grows them once).
  for (int i = 0; i < 8; ++i) expect_still_serving(f);
  const int64_t rss_before = f.server->rss_bytes();
  const std::vector<std::pair<std::string, std::string>> seeds = {
      {"/v1/completions",
       R"({"prompt": "Once upon a time", "max_tokens": 4, "temperature": 0.5, "seed": 7,)"
       R"( "stop": ["\n", "end"], "speculative": "dynamic:20:4:4", "top_p": 0.9})"},
      {"/v1/completions", R"({"prompt": [1, 400, 23], "max_tokens": 4, "speculative": "chain:3"})"},
      {"/v1/chat/completions",
       R"({"messages": [{"role": "user", "content": [{"type": "text", "text": "Hi"}]}],)"
       R"( "max_tokens": 4, "stream": true, "stream_options": {"include_usage": true}})"},
  };
  const std::vector<std::string> splices = {std::string(300, '['),
                                            std::string(300, '{'),
                                            "\xff\xfe\xc3(",
                                            "\xed\xa0\x80",
                                            "1e999999",
                                            "-1e-999999",
                                            "18446744073709551616",
                                            "-9223372036854775809",
                                            "123456789012345678901234567890",
                                            "\"\\ud800\"",
                                            "\\u0000",
                                            "null",
                                            "[]",
                                            "{}",
                                            std::string(4000, 'x'),
                                            "\"speculative\": \"chain:99999\",",
                                            "\"speculative\": \"sps:/etc\",",
                                            "\"max_tokens\": 99999999999,"};
  std::mt19937 rng(43);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  int answered = 0, closed = 0, count = 0;
  for (; count < 1000 && std::chrono::steady_clock::now() < deadline; ++count) {
    const auto& [path, seed] = seeds[rng() % seeds.size()];
    std::string body = seed;
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits && !body.empty(); ++e) {
      const size_t at = rng() % body.size();
      switch (rng() % 5) {
        case 0:
          body[at] = static_cast<char>(rng() % 256);
          break;
        case 1:
          body.insert(at, 1, static_cast<char>(rng() % 256));
          break;
        case 2:
          body.erase(at, 1 + rng() % 8);
          break;
        case 3:
          body.resize(at);
          break;
        default:
          body.insert(at, splices[rng() % splices.size()]);
          break;
      }
    }
    const httplib::Result r = post(f, path, body);
    if (r) {
      ++answered;
      EXPECT_TRUE(r->status == 200 || (r->status >= 400 && r->status < 600))
          << r->status << " for " << printable(body);
    } else {
      ++closed;
    }
    ASSERT_TRUE(f.server->alive())
        << "the server died on " << printable(body) << " (" << path << ")";
  }
  EXPECT_GE(count, 50) << "too few fuzzed requests in the time";
  std::printf("fuzz: %d bodies, %d answered, %d connections closed\n", count, answered, closed);
  expect_still_serving(f);
  // Then the heaviest valid requests, four clients at once: the largest trees the limits allow,
  // the drafters with caches of their own, lookahead's pools, log-probs, streamed and not.
  const char* heavy[] = {"dynamic:128:32:16", "wide", "self", "lookahead:15:5:15"};
  std::vector<std::thread> clients;
  std::atomic<int> heavy_ok{0};
  for (int t = 0; t < 4; ++t)
    clients.emplace_back([&, t] {
      for (int i = 0; i < 40 && std::chrono::steady_clock::now() < deadline; ++i) {
        const json body = {{"prompt", kPrompt},
                           {"max_tokens", 16},
                           {"speculative", heavy[(t + i) % 4]},
                           {"logprobs", 5},
                           {"stream", i % 2 == 0}};
        const httplib::Result r = post(f, "/v1/completions", body.dump());
        if (r && r->status == 200) ++heavy_ok;
      }
    });
  for (std::thread& c : clients) c.join();
  EXPECT_GE(heavy_ok.load(), 40) << "the heavy requests should be served";
  expect_still_serving(f);
  // Memory returns near idle: every request's KV blocks, drafter caches and buffers are released
  // when it ends. The bound (half as much again plus 16 MiB; measured: 21.7 -> 31.3 MiB on the
  // 2-core Intel Xeon of session 30) is generous on purpose: freed memory the allocator keeps for
  // reuse (glibc's per-thread arenas: four clients, dozens of HTTP threads) still counts in RSS.
  // What it catches is growth with the requests served: a quarter MiB kept per request (about a
  // deep tree's head cache here) over the 160 heavy requests is 40 MiB.
  const int64_t rss_after = f.server->rss_bytes();
  ASSERT_GT(rss_before, 0) << "cannot read VmRSS of the server";
  std::printf("server RSS: %.1f MiB before the fuzz, %.1f MiB after\n",
              static_cast<double>(rss_before) / (1 << 20),
              static_cast<double>(rss_after) / (1 << 20));
#ifdef __SANITIZE_ADDRESS__
  std::printf("RSS bound not checked: ASan's quarantine holds freed memory on purpose\n");
#else
  EXPECT_LE(rss_after, rss_before + rss_before / 2 + (int64_t{16} << 20))
      << "the server's memory grew with the load: a leak per request?";
#endif
}

}  // namespace
}  // namespace eagle2

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
#include "support/hostile_server.h"
#include "support/serve_process.h"
#include "support/shared_data.h"

namespace eagle2 {
namespace {

using nlohmann::json;

using test::expect_still_serving;
using test::printable;

httplib::Result fuzz_post(const test::HostileServer& f, const std::string& path,
                          const std::string& body) {
  return test::post_json(f, path, body);
}

TEST(HostileFuzz, FuzzedBodiesNeverCrashTheServerAndMemoryReturns) {
  EAGLE2_SHARED_FILE(model_cfg, test::kHostileModel);
  EAGLE2_SHARED_FILE(head_cfg, test::kHostileHead);
  // test_serve_hostile.cpp's server, a fresh one: its resident memory is measured.
  const std::unique_ptr<test::HostileServer> server = test::start_hostile_server(65536);
  test::HostileServer& f = *server;
  ASSERT_GT(f.server->port(), 0) << "the server did not start";
  ASSERT_TRUE(f.generate_error.empty()) << f.generate_error;
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
    const httplib::Result r = fuzz_post(f, path, body);
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
        const json body = {{"prompt", test::kHostilePrompt},
                           {"max_tokens", 16},
                           {"speculative", heavy[(t + i) % 4]},
                           {"logprobs", 5},
                           {"stream", i % 2 == 0}};
        const httplib::Result r = fuzz_post(f, "/v1/completions", body.dump());
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

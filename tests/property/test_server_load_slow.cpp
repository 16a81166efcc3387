// The server under load, on loopback: 16 clients send hundreds of completions (plain and every
// kind of drafter, greedy and seeded sampling, streaming and not, slow readers), and about one in
// eight hangs up mid-stream. Every completed text must equal the request decoded alone (plain
// decoding in this process, detokenized as `eagle2 generate` prints it); every hang-up must be
// counted as cancelled; afterwards every KV block is back and memory has not grown with the
// requests. stories260K with its shared head (300 requests, scaled by EAGLE2_TEST_SCALE), and the
// bundled model once.
#include <gtest/gtest.h>

#include <atomic>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "eagle2/generate.h"
#include "eagle2/model.h"
#include "eagle2/runtime.h"
#include "eagle2/tokenizer.h"
#include "server/http_server.h"
#include "server/load_client.h"
#include "support/running_server.h"
#include "support/shared_data.h"

namespace eagle2 {
namespace {

using Json = nlohmann::json;

struct Case {
  std::string prompt, spec;
  int64_t max_tokens = 16;
  float temperature = 0;
  uint64_t seed = 0;
  bool stream = false, hang_up = false, slow = false;
  std::string want;  // the solo text
};

// What `eagle2 generate -p` prints after the prompt: plain decoding alone, detokenized.
std::string solo_text(api::Model& model, const api::Tokenizer& tok, api::Threads& threads,
                      const Case& c, int64_t ctx) {
  const std::vector<int32_t> prompt = tok.encode(c.prompt, tok.adds_bos());
  api::GenerateOptions g;
  g.max_new_tokens = c.max_tokens;
  g.sampling.temperature = c.temperature;
  g.sampling.seed = c.seed;
  api::KvCache kv(model, ctx);
  api::TextStream stream(tok, prompt);
  std::string text;
  api::generate_plain(model, kv, prompt, g, threads, [&](int32_t t) {
    text += stream.push(t);
    return true;
  });
  return text + stream.finish();
}

int64_t resident_kib() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("VmRSS:", 0) == 0) return std::stoll(line.substr(6));
  return -1;
}

void run_load(const std::string& model_dir, const std::string& head_dir,
              const std::vector<std::string>& prompts, int n_requests, int64_t ctx) {
  server::ServerOptions so;
  so.model_dir = model_dir;
  so.head_dir = head_dir;
  so.port = 0;
  so.parallel = 4;
  so.max_queue = 64;
  so.ctx = ctx;
  so.threads = 2;
  test::RunningServer srv(so);  // stopped and joined however run_load returns

  api::Model model = api::Model::load(model_dir);
  const api::Tokenizer tok = api::Tokenizer::open(model_dir);
  api::Threads threads(1);
  const char* specs[] = {"plain",          "none",  "lookup", "chain:4", "dynamic:auto:6:4:cal",
                         "dynamic:16:3:4", "static"};
  std::vector<Case> cases(static_cast<size_t>(n_requests));
  std::map<std::tuple<size_t, int64_t, float, uint64_t>, std::string> solo;
  for (size_t i = 0; i < cases.size(); ++i) {
    Case& c = cases[i];
    const size_t p = i % prompts.size();
    c.prompt = prompts[p];
    c.spec = specs[i % 7];
    c.max_tokens = 8 + 12 * static_cast<int64_t>(i % 3);
    c.temperature = i % 5 == 4 ? 0.8f : 0.0f;
    c.seed = c.temperature > 0 ? 1000 + i % 3 : 0;
    c.stream = i % 2 == 1;
    c.hang_up = c.stream && i % 8 == 1;  // 1 in 8 hangs up mid-stream
    c.slow = c.stream && i % 31 == 3;
    const auto key = std::make_tuple(p, c.max_tokens, c.temperature, c.seed);
    auto it = solo.find(key);
    if (it == solo.end()) it = solo.emplace(key, solo_text(model, tok, threads, c, ctx)).first;
    c.want = it->second;
  }
  const int64_t rss_start = resident_kib();
  std::vector<server::LoadResult> results(cases.size());
  auto run_half = [&](size_t begin, size_t end) {
    std::atomic<size_t> next{begin};
    std::vector<std::thread> clients;
    for (int k = 0; k < 16; ++k)
      clients.emplace_back([&] {
        for (size_t i; (i = next++) < end;) {
          const Case& c = cases[i];
          Json body = {{"prompt", c.prompt},           {"max_tokens", c.max_tokens},
                       {"temperature", c.temperature}, {"seed", c.seed},
                       {"stream", c.stream},           {"speculative", c.spec}};
          server::LoadRequest req;
          req.body = body.dump();
          req.stream = c.stream;
          req.hang_up_after_chunks = c.hang_up ? 2 : -1;
          req.chunk_delay_ms = c.slow ? 30 : 0;
          results[i] = server::send_request("127.0.0.1", srv.port(), req, 300);
        }
      });
    for (auto& t : clients) t.join();
  };
  run_half(0, cases.size() / 2);
  const int64_t rss_half = resident_kib();
  run_half(cases.size() / 2, cases.size());

  int64_t completed = 0, hung_up = 0, drafted = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    const server::LoadResult& r = results[i];
    if (c.hang_up && r.hung_up) {
      ++hung_up;
      continue;
    }
    ASSERT_EQ(r.status, 200) << "request " << i << " (" << c.spec << ", stream " << c.stream
                             << ") after " << r.seconds << " s: " << r.error << r.body;
    EXPECT_EQ(r.text, c.want) << "request " << i << " (" << c.spec << ", T " << c.temperature
                              << ", stream " << c.stream << ")";
    if (c.stream) {
      EXPECT_TRUE(r.done_marker) << "request " << i;
    }
    drafted += r.drafted_tokens;
    ++completed;
  }
  EXPECT_GE(hung_up * 10, n_requests) << "at least 10 % cancelled mid-stream";
  EXPECT_GT(drafted, 0) << "no streamed token was an accepted draft";
  // The server notices a hang-up at its next write: wait (bounded) until every request is
  // accounted for, then nothing may be held.
  std::string metrics;
  for (int i = 0; i < 600; ++i) {
    metrics = server::http_get("127.0.0.1", srv.port(), "/metrics").second;
    const double ok = server::metric_value(metrics, "eagle2_requests_total{status=\"ok\"}");
    const double cancelled =
        server::metric_value(metrics, "eagle2_requests_total{status=\"cancelled\"}");
    if (ok + std::max(0.0, cancelled) >= n_requests) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(server::metric_value(metrics, "eagle2_requests_total{status=\"ok\"}") +
                std::max(0.0, server::metric_value(metrics,
                                                   "eagle2_requests_total{status=\"cancelled\"}")),
            n_requests)
      << metrics;
  EXPECT_GE(server::metric_value(metrics, "eagle2_requests_total{status=\"ok\"}"), completed);
  EXPECT_EQ(server::metric_value(metrics, "eagle2_kv_blocks_used"), 0) << metrics;
  EXPECT_EQ(server::metric_value(metrics, "eagle2_queue_depth"), 0) << metrics;
  // The second half of the requests must not have grown memory the way a per-request leak would
  // (generous: allocator caches and thread stacks come and go).
  EXPECT_LT(resident_kib() - rss_half, 64 * 1024 + (rss_half - rss_start))
      << "RSS " << rss_start << " -> " << rss_half << " -> " << resident_kib() << " KiB";
}

std::vector<std::string> story_prompts(const std::string& corpus, size_t n) {
  std::ifstream in(corpus);
  std::vector<std::string> out;
  for (std::string line; out.size() < n && std::getline(in, line);) {
    if (line.size() < 40) continue;
    out.push_back(line.substr(0, line.find(' ', 30)));
  }
  return out;
}

TEST(ServerLoad, StoriesModelSixteenClients) {
  EAGLE2_SHARED_FILE(model_cfg, "data/models/stories260K-hf/config.json");
  EAGLE2_SHARED_FILE(head_cfg, "data/models/stories260K-eagle-head/config.json");
  EAGLE2_SHARED_FILE(corpus, "data/corpora/tinystories_valid_head.txt");
  const auto dir = [](const std::string& f) { return f.substr(0, f.rfind('/')); };
  run_load(dir(model_cfg), dir(head_cfg), story_prompts(corpus, 12),
           std::max(32, test::scaled(300)), 256);
}

TEST(ServerLoad, BundledModelSixteenClients) {
  const std::string root = EAGLE2_SOURCE_DIR;
  const std::vector<std::string> prompts = {
      "def fibonacci(n):\n", "import os\n\ndef list_files(path):\n",
      "class Stack:\n",      "def quicksort(arr):\n",
      "def is_prime(n):\n",  "import json\n\ndef load(path):\n"};
  run_load(root + "/models/code-lm", root + "/models/code-lm-eagle", prompts,
           std::max(32, test::scaled(300)), 512);
}

}  // namespace
}  // namespace eagle2

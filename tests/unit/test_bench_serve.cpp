// eagle2 bench-serve's replay of a stream with repeats (--in-order) and its suffix-scope
// comparison (--compare-suffix-scope): who sends what, and, on stories260K, that the server-wide
// index drafts a repeated request's answer from its first time's output where the request's own
// index cannot (greedy texts equal across systems: the bench fails otherwise).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "server/bench_serve.h"
#include "support/cli.h"
#include "support/shared_data.h"

namespace eagle2 {
namespace {

constexpr const char* kBenchServeModel = "data/models/stories260K-hf/config.json";

TEST(BenchServePlan, InOrderSendsTheStreamOnceDealtToClients) {
  using V = std::vector<size_t>;
  EXPECT_EQ(server::client_prompts(5, 1, true, 2), (std::vector<V>{{0, 1, 2, 3, 4}}));
  EXPECT_EQ(server::client_prompts(5, 2, true, 2), (std::vector<V>{{0, 2, 4}, {1, 3}}));
  // More clients than requests: the idle ones send nothing.
  EXPECT_EQ(server::client_prompts(2, 3, true, 2), (std::vector<V>{{0}, {1}, {}}));
  // Not in order: at least 8 requests, c * requests_per_client, cycling through the prompts.
  EXPECT_EQ(server::client_prompts(3, 2, false, 2), (std::vector<V>{{0, 2, 1, 0}, {1, 0, 2, 1}}));
  EXPECT_EQ(server::client_prompts(3, 4, false, 3).front(), (V{0, 1, 2}));
}

TEST(BenchServeStream, ServerScopeDraftsTheRepeatsFromEarlierOutputs) {
  EAGLE2_SHARED_FILE(model_cfg, kBenchServeModel);
  server::BenchServeOptions o;
  o.server.model_dir = test::dir_of(model_cfg);
  o.server.threads = 1;
  o.server.ctx = 256;
  o.eagle_spec = "suffix";
  // Two distinct prompts, each sent again after the other: a repeat's 48 tokens are its first
  // time's (greedy), which only the server-wide index has seen.
  o.prompts = {"Once upon a time, there was a little dog", "The sun was hot and the girl",
               "Once upon a time, there was a little dog", "The sun was hot and the girl"};
  o.concurrency = {1};
  o.in_order = true;
  o.compare_suffix_scope = true;
  o.max_tokens = 48;
  o.reps = 1;
  const server::BenchServeResult r = server::run_bench_serve(o);
  ASSERT_EQ(r.systems.size(), 3u);
  EXPECT_EQ(r.systems[2], "EAGLE-2 (suffix), --suffix-scope server");
  const auto& request_scope = r.cells.at({r.systems[1], 1});
  const auto& server_scope = r.cells.at({r.systems[2], 1});
  ASSERT_EQ(request_scope.tau.size(), 1u);
  ASSERT_EQ(server_scope.tau.size(), 1u);
  // Half the requests are repeats drafted whole from the index: tau well above the request
  // scope's (measured: 2.0 against 1.2).
  EXPECT_GT(server_scope.tau[0], request_scope.tau[0] + 0.5)
      << "request scope " << request_scope.tau[0] << ", server scope " << server_scope.tau[0];
  EXPECT_NE(r.table.find("The server-wide suffix index against the request's own"),
            std::string::npos);
}

// A comparison of suffix scopes with a spec that never reads the suffix index would print a third
// row that is the second under another name: one clear error instead.
TEST(BenchServeStream, ScopeComparisonNeedsASpecThatDraftsFromTheIndex) {
  EAGLE2_SHARED_FILE(model_cfg, kBenchServeModel);
  server::BenchServeOptions o;
  o.server.model_dir = test::dir_of(model_cfg);
  o.server.threads = 1;
  o.server.ctx = 256;
  o.eagle_spec = "lookup";
  o.prompts = {"Once upon a time"};
  o.concurrency = {1};
  o.compare_suffix_scope = true;
  o.max_tokens = 4;
  o.reps = 1;
  try {
    server::run_bench_serve(o);
    ADD_FAILURE() << "a lookup spec was compared across suffix scopes";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("drafts from the suffix index"), std::string::npos)
        << e.what();
  }
}

// The shipped stream is what its script builds from the shipped edits and HumanEval.
TEST(BenchServeStream, ShippedStreamIsTheScriptsOutput) {
  if (!test::have_python()) GTEST_SKIP() << "python3 is absent";
  EAGLE2_SHARED_FILE(humaneval, "data/prompts/HumanEval.jsonl.gz");
  const std::string root = EAGLE2_SOURCE_DIR;
  const std::string out = (std::filesystem::temp_directory_path() /
                           ("eagle2_repeat_stream_" + std::to_string(getpid()) + ".jsonl"))
                              .string();
  const test::CliRun r =
      test::run_shell("python3 " + test::kScriptsDir + "make_repeat_stream.py '" + out + "' '" +
                      root + "/bench/prompts/code_edits.jsonl' '" + humaneval + "'");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("32 requests (16 distinct x 2)"), std::string::npos) << r.out;
  auto read = [](const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  };
  EXPECT_EQ(read(out), read(root + "/bench/prompts/repeated_requests.jsonl"));
  std::filesystem::remove(out);
}

}  // namespace
}  // namespace eagle2

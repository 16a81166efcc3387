// --max-kv-memory over HTTP (in-process, stories260K): each request's worst-case KV memory (the
// target's blocks for prompt + max_tokens + a tree, and its drafter's cache) is accounted before
// it is admitted. A request that could never fit gets one clear 400; requests that fit all
// complete with `eagle2 generate`'s text, waiting for memory when the budget is short; a budget
// below one request is a one-line start-up error.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "server/http_server.h"
#include "server/served_model.h"
#include "support/cli.h"
#include "support/running_server.h"
#include "support/shared_data.h"

namespace eagle2 {
namespace {

using nlohmann::json;

constexpr const char* kModel = "data/models/stories260K-hf/config.json";
constexpr const char* kHead = "data/models/stories260K-eagle-head/config.json";

json post(httplib::Client& c, const json& body, int* status) {
  const httplib::Result r = c.Post("/v1/completions", body.dump(), "application/json");
  if (!r) {
    ADD_FAILURE() << "no response";
    *status = 0;
    return {};
  }
  *status = r->status;
  return json::parse(r->body);
}

TEST(ServeKvBudget, RequestsThatFitCompleteOneThatNeverCouldGetsAClearError) {
  EAGLE2_SHARED_FILE(model_cfg, kModel);
  EAGLE2_SHARED_FILE(head_cfg, kHead);
  server::ServerOptions o;
  o.model_dir = test::dir_of(model_cfg);
  o.head_dir = test::dir_of(head_cfg);
  o.port = 0;
  o.threads = 1;
  o.parallel = 4;
  // The budget: one whole context with the default drafter's cache, and a quarter of such a cache
  // more. The pool then holds one whole context where 4 would be the default, shared by
  // reservation, and the drafters' part one default drafter's cache (requests with it run one at
  // a time; plain ones share the pool).
  server::KvCosts costs;
  server::SchedulerOptions so;
  {
    const server::ServedModel probe(o);
    costs = probe.kv_costs();
    so = probe.scheduler_options(o);
  }
  const int64_t context_blocks = (costs.context + costs.block_tokens - 1) / costs.block_tokens;
  const int64_t drafter =
      server::kv_need(costs, 0, 0, api::parse_drafter_spec(server::kDefaultSpec)).drafter_bytes;
  ASSERT_GT(drafter, 0);
  EXPECT_EQ(so.kv_pool_blocks, 4 * context_blocks) << "the default: every slot a whole context";
  o.max_kv_memory = context_blocks * costs.block_bytes + drafter + drafter / 4;
  test::RunningServer srv(o);
  httplib::Client c = srv.client();

  // A tree whose head cache is larger than the default drafter's: it could never be admitted.
  int status = 0;
  const json refused = post(
      c, {{"prompt", "Once upon a time"}, {"max_tokens", 8}, {"speculative", "dynamic:60:32:16"}},
      &status);
  EXPECT_EQ(status, 400) << refused;
  const std::string message = refused.value("error", json::object()).value("message", "");
  EXPECT_NE(message.find("--max-kv-memory"), std::string::npos) << message;
  EXPECT_NE(message.find("MiB"), std::string::npos) << message;

  // Requests that fit: four at once with the default drafter (they take turns for the drafters'
  // memory), four plain ones (no drafter memory: they share the pool), and one that needs a whole
  // context. Each gets generate's text.
  const test::CliRun gen =
      test::run_cli_split("generate -m '" + o.model_dir + "' -p 'Once upon a time' -n 40");
  ASSERT_EQ(gen.code, 0) << gen.err;
  const std::string expected = gen.out.substr(16, gen.out.size() - 17);
  std::vector<std::thread> clients;
  std::vector<json> answers(9);
  std::vector<int> statuses(9);
  for (int i = 0; i < 9; ++i)
    clients.emplace_back([&, i] {
      httplib::Client own = srv.client();
      json body = {{"prompt", "Once upon a time"}, {"max_tokens", i == 8 ? 500 : 40}};
      if (i >= 4 && i < 8) body["speculative"] = "plain";
      answers[i] = post(own, body, &statuses[i]);
    });
  for (std::thread& t : clients) t.join();
  for (int i = 0; i < 9; ++i) {
    SCOPED_TRACE(i);
    ASSERT_EQ(statuses[i], 200) << answers[i];
    const std::string text = answers[i]["choices"][0]["text"];
    EXPECT_EQ(text.substr(0, expected.size()), expected);
  }
  const httplib::Result m = c.Get("/metrics");
  ASSERT_TRUE(m);
  EXPECT_NE(m->body.find("eagle2_kv_blocks_total " + std::to_string(context_blocks)),
            std::string::npos)
      << m->body;
  EXPECT_NE(m->body.find("eagle2_kv_blocks_used 0"), std::string::npos) << m->body;
}

// Without --max-kv-memory the budget holds every slot's whole context and the largest drafter
// cache a request may ask (the deepest tree within --max-draft-depth and --max-draft-top-k): no
// valid request is refused for memory, as before the budget existed.
TEST(ServeKvBudget, TheDefaultBudgetAdmitsEveryValidRequest) {
  EAGLE2_SHARED_FILE(model_cfg, kModel);
  EAGLE2_SHARED_FILE(head_cfg, kHead);
  server::ServerOptions o;
  o.model_dir = test::dir_of(model_cfg);
  o.head_dir = test::dir_of(head_cfg);
  o.port = 0;
  o.threads = 1;
  o.parallel = 1;  // one default drafter's cache would not hold the deepest tree's
  test::RunningServer srv(o);
  httplib::Client c = srv.client();
  int status = 0;
  const json r = post(
      c, {{"prompt", "Once upon a time"}, {"max_tokens", 8}, {"speculative", "dynamic:128:32:16"}},
      &status);
  EXPECT_EQ(status, 200) << r;
}

TEST(ServeKvBudget, ABudgetBelowOneRequestIsAStartUpError) {
  const test::CliRun run = test::run_cli_split("serve --port 0 --max-kv-memory 64K");
  std::string why;
  EXPECT_TRUE(test::is_one_clean_error(run, &why)) << why;
  EXPECT_NE(run.err.find("--max-kv-memory 65536"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("MiB"), std::string::npos) << run.err;
}

}  // namespace
}  // namespace eagle2

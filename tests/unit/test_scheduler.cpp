// The server's scheduler (src/server/scheduler.h): requests from many threads, admitted into at
// most `parallel` slots and decoded together, each producing exactly its solo tokens; a full
// queue refuses; cancellation and shutdown free every KV block; requests that can never run are
// refused at once.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "eagle2/cost.h"
#include "eagle2/drafter.h"
#include "eagle2/generate.h"
#include "eagle2/head.h"
#include "eagle2/model.h"
#include "server/scheduler.h"
#include "support/equality_runs.h"
#include "support/errors.h"
#include "support/random_models.h"

namespace eagle2 {
namespace {

using namespace std::chrono_literals;
using server::FinishReason;
using server::TokenPiece;

struct Fixture {
  std::string model_dir, head_dir;
  std::vector<std::vector<int32_t>> prompts;
  Fixture() {
    auto target = test::load_random_model("scheduler", test::tiny_config(), DType::BF16, 21, 0.3f);
    model_dir = target->dir();
    head_dir = test::write_random_head("scheduler", *target);
    prompts = test::random_prompts(5, 6, target->config().vocab_size);
  }
};

std::vector<int32_t> solo(api::Model& model, const std::vector<int32_t>& prompt,
                          const api::GenerateOptions& opt, api::Threads& threads, int64_t ctx) {
  api::KvCache kv(model, ctx);
  std::vector<int32_t> out;
  api::generate_plain(model, kv, prompt, opt, threads, [&](int32_t t) {
    out.push_back(t);
    return true;
  });
  return out;
}

// Reads a stream to its end.
std::vector<TokenPiece> drain(server::RequestStream& s) {
  std::vector<TokenPiece> got;
  for (int i = 0; i < 100000 && !s.take(got, 50ms); ++i) {
  }
  return got;
}

std::vector<int32_t> ids_of(const std::vector<TokenPiece>& pieces) {
  std::vector<int32_t> ids;
  for (const auto& p : pieces) ids.push_back(p.token);
  return ids;
}

int64_t metric(const std::string& text, const std::string& name) {
  const size_t at = text.find("\n" + name + " ");
  if (at == std::string::npos) return -1;
  return std::stoll(text.substr(at + name.size() + 2));
}

double metric_sum(const std::string& text, const std::string& name) {
  const size_t at = text.find("\n" + name + " ");
  if (at == std::string::npos) return -1;
  return std::stod(text.substr(at + name.size() + 2));
}

TEST(Scheduler, ConcurrentRequestsGetTheirSoloTokens) {
  const Fixture fx;
  api::Model model = api::Model::load(fx.model_dir);
  api::Head head = api::Head::load(fx.head_dir, model);
  api::Threads threads(2);
  const int64_t ctx = 128;
  const api::VerifyCost cost = api::VerifyCost::measure(model, ctx, threads, 4);
  server::Metrics metrics;
  server::Scheduler scheduler(model, &head, threads, &cost, {3, 64, ctx}, metrics);
  const char* specs[] = {"plain", "dynamic:auto:3:4:cal", "chain:3", "lookup", "dynamic:12:3:4",
                         "none",  "dynamic:auto:3:4"};
  struct Case {
    server::GenerationRequest request;
    std::vector<int32_t> want;
  };
  std::vector<Case> cases;
  for (int i = 0; i < 14; ++i) {
    Case c;
    c.request.prompt = fx.prompts[static_cast<size_t>(i) % fx.prompts.size()];
    c.request.options.max_new_tokens = 6 + 5 * (i % 4);
    c.request.options.sampling.temperature = i % 3 == 2 ? 0.8f : 0.0f;
    c.request.options.sampling.seed = 100 + static_cast<uint64_t>(i);
    c.request.spec = api::parse_drafter_spec(specs[i % 7]);
    c.want = solo(model, c.request.prompt, c.request.options, threads, ctx);
    cases.push_back(std::move(c));
  }
  // Every client thread submits and reads its own request, all at once: more than the slots.
  std::vector<std::vector<TokenPiece>> got(cases.size());
  std::vector<FinishReason> reasons(cases.size());
  std::vector<std::thread> clients;
  for (size_t i = 0; i < cases.size(); ++i)
    clients.emplace_back([&, i] {
      auto stream = scheduler.submit(cases[i].request);
      ASSERT_TRUE(stream);
      got[i] = drain(*stream);
      reasons[i] = stream->finish_reason();
    });
  for (auto& t : clients) t.join();
  for (size_t i = 0; i < cases.size(); ++i) {
    EXPECT_EQ(ids_of(got[i]), cases[i].want) << "request " << i << " (" << specs[i % 7] << ")";
    EXPECT_NE(reasons[i], FinishReason::Error);
    EXPECT_NE(reasons[i], FinishReason::Running);
    if (cases[i].request.spec.kind == "plain") {
      for (const auto& p : got[i]) EXPECT_FALSE(p.drafted);
    }
  }
  const std::string text = metrics.render();
  EXPECT_EQ(metric(text, "eagle2_kv_blocks_used"), 0) << text;
  EXPECT_NE(text.find("eagle2_requests_total{status=\"ok\"} 14"), std::string::npos) << text;
  EXPECT_EQ(scheduler.active(), 0);
}

TEST(Scheduler, FullQueueRefusesAndCancelFreesEverything) {
  const Fixture fx;
  api::Model model = api::Model::load(fx.model_dir);
  api::Threads threads(1);
  server::Metrics metrics;
  server::Scheduler scheduler(model, nullptr, threads, nullptr, {1, 2, 512}, metrics);
  server::GenerationRequest long_one;
  long_one.prompt = fx.prompts[0];
  long_one.options.max_new_tokens = 400;
  long_one.options.stop_at_eos = false;
  long_one.spec = api::parse_drafter_spec("plain");
  auto running = scheduler.submit(long_one);
  ASSERT_TRUE(running);
  std::vector<TokenPiece> first;
  for (int i = 0; i < 1200 && first.empty(); ++i) running->take(first, 50ms);  // admitted, decoding
  ASSERT_FALSE(first.empty()) << "no token in 60 s";
  auto queued1 = scheduler.submit(long_one), queued2 = scheduler.submit(long_one);
  ASSERT_TRUE(queued1 && queued2);
  EXPECT_FALSE(scheduler.submit(long_one)) << "the queue holds 2";
  queued2->cancel();  // cancelled while queued: it never runs
  running->cancel();
  drain(*running);
  EXPECT_EQ(running->finish_reason(), FinishReason::Cancelled);
  EXPECT_LT(running->stats().new_tokens, 400);
  const auto rest = drain(*queued1);
  EXPECT_EQ(queued1->finish_reason(), FinishReason::Length);
  EXPECT_EQ(rest.size(), 400u);
  drain(*queued2);
  EXPECT_EQ(queued2->finish_reason(), FinishReason::Cancelled);
  const std::string text = metrics.render();
  EXPECT_EQ(metric(text, "eagle2_kv_blocks_used"), 0) << text;
  EXPECT_NE(text.find("eagle2_requests_total{status=\"cancelled\"} 2"), std::string::npos) << text;
}

// --max-queue 0: no request waits, but one that a free slot takes is served (a request passes
// through the queue on its way to a slot; that is not waiting).
TEST(Scheduler, NoQueueStillServesFreeSlots) {
  const Fixture fx;
  api::Model model = api::Model::load(fx.model_dir);
  api::Threads threads(1);
  server::Metrics metrics;
  server::Scheduler scheduler(model, nullptr, threads, nullptr, {1, 0, 512}, metrics);
  server::GenerationRequest request;
  request.prompt = fx.prompts[0];
  request.options.max_new_tokens = 400;
  request.options.stop_at_eos = false;
  request.spec = api::parse_drafter_spec("plain");
  auto running = scheduler.submit(request);
  ASSERT_TRUE(running) << "a free slot, no queue: served";
  EXPECT_FALSE(scheduler.submit(request)) << "the one slot is taken and nothing may wait";
  std::vector<TokenPiece> first;
  while (first.empty()) running->take(first, 50ms);  // admitted and decoding
  EXPECT_FALSE(scheduler.submit(request));
  running->cancel();
  drain(*running);
  request.options.max_new_tokens = 3;
  auto next = scheduler.submit(request);
  ASSERT_TRUE(next) << "the slot is free again";
  EXPECT_EQ(drain(*next).size(), 3u);
}

// KV memory accounted at admission (--max-kv-memory): a request is admitted only when its worst
// case (GenerationRequest::kv) fits beside the admitted ones', in the pool's blocks and in the
// budget's bytes; in order (the front waits rather than being overtaken); one that could never
// fit is refused at submit. Every admitted request completes with its solo tokens.
TEST(Scheduler, KvBudgetAdmitsWhatFitsQueuesTheRestRefusesTheImpossible) {
  const Fixture fx;
  LlamaConfig long_config = test::tiny_config();
  long_config.max_position_embeddings = 4096;
  auto target = test::load_random_model("scheduler-long", long_config, DType::BF16, 21, 0.3f);
  api::Model model = api::Model::load(target->dir());
  api::Threads threads(1);
  server::Metrics metrics;
  // A context of 4096 tokens is 256 blocks; `big` runs until it is cancelled (4000 tokens take
  // far longer than the checks), so what is admitted beside it does not depend on timing.
  server::SchedulerOptions so{3, 8, 4096};
  so.kv_pool_blocks = 300;
  so.kv_block_bytes = 100;
  so.kv_budget_bytes = 300 * 100 + 50;  // 50 bytes for drafters
  // /metrics' reservation as each step sees it: `small`'s 20 drafter bytes while it decodes.
  std::atomic<int64_t> most_drafter_bytes{0};
  so.before_step = [&] {
    const int64_t now = metric(metrics.render(), "eagle2_kv_drafter_bytes_reserved");
    if (now > most_drafter_bytes) most_drafter_bytes = now;
  };
  server::Scheduler scheduler(model, nullptr, threads, nullptr, so, metrics);
  EXPECT_EQ(scheduler.kv_pool_blocks(), 300);
  auto request = [&](int64_t max_new, server::KvNeed kv) {
    server::GenerationRequest r;
    r.prompt = fx.prompts[0];
    r.options.max_new_tokens = max_new;
    r.options.stop_at_eos = false;
    r.spec = api::parse_drafter_spec("plain");
    r.kv = kv;
    return r;
  };
  EXPECT_THROW(scheduler.submit(request(4, {301, 0})), Error) << "more blocks than the pool";
  EXPECT_THROW(scheduler.submit(request(4, {1, 51})), Error) << "more bytes than the budget";

  auto big = scheduler.submit(request(4000, {256, 0}));
  auto small = scheduler.submit(request(4, {44, 20}));  // fits beside it: 300 blocks, 20 bytes
  auto waits = scheduler.submit(request(5, {256, 0}));  // does not, until `big` ends
  auto behind = scheduler.submit(request(3, {1, 40}));  // would fit, but queues behind it
  ASSERT_TRUE(big && small && waits && behind);
  EXPECT_EQ(drain(*small).size(), 4u) << "admitted beside `big`";
  EXPECT_EQ(most_drafter_bytes, 20) << "small's reservation, shown while it decoded";
  // Steps after `small` left, each with an admission pass: `behind` would fit now, `waits` not.
  std::vector<TokenPiece> got;
  while (got.size() < 20) big->take(got, 50ms);
  EXPECT_FALSE(waits->admitted()) << "256 + 256 blocks do not fit a pool of 300";
  EXPECT_FALSE(behind->admitted()) << "requests are admitted in order";
  const std::string during = metrics.render();
  EXPECT_EQ(metric(during, "eagle2_kv_blocks_reserved"), 256) << "big's alone: " << during;
  EXPECT_EQ(metric(during, "eagle2_kv_drafter_bytes_reserved"), 0) << during;
  big->cancel();
  drain(*big);
  EXPECT_EQ(big->finish_reason(), FinishReason::Cancelled);
  EXPECT_LT(big->stats().new_tokens, 4000);
  const std::vector<TokenPiece> w = drain(*waits), b = drain(*behind);
  EXPECT_EQ(waits->finish_reason(), FinishReason::Length);
  EXPECT_EQ(ids_of(w), solo(model, fx.prompts[0], request(5, {}).options, threads, 4096));
  EXPECT_EQ(b.size(), 3u);
  // Every end released its reservation: the whole pool is admissible again.
  auto last = scheduler.submit(request(2, {300, 50}));
  ASSERT_TRUE(last);
  EXPECT_EQ(drain(*last).size(), 2u);
  const std::string text = metrics.render();
  EXPECT_EQ(metric(text, "eagle2_kv_blocks_used"), 0) << text;
  EXPECT_EQ(metric(text, "eagle2_kv_blocks_reserved"), 0) << text;
  EXPECT_EQ(metric(text, "eagle2_kv_drafter_bytes_reserved"), 0) << text;
  EXPECT_NE(text.find("eagle2_requests_total{status=\"ok\"} 4"), std::string::npos) << text;
}

// The reservation kv_need makes is what the engine can use at most: two requests whose worst
// cases exactly fill the pool together decode side by side to their last token, for every
// drafter kind (one block more than reserved would fail the step: the pool is exhausted).
// --suffix-scope server: a request repeated after the first one ended drafts the first one's output
// (published when its drafter went) and accepts more drafted tokens (seen in /metrics' aggregate);
// with the request scope the repeat drafts exactly as the first did. Both give the solo tokens.
// Under the server scope a suffix request's own drafted flags and acceptance are reported as plain
// decoding's: they would tell a client what other requests wrote.
TEST(Scheduler, ServerWideSuffixIndexDraftsRepeatedRequests) {
  const Fixture fx;
  api::Model model = api::Model::load(fx.model_dir);
  api::Threads threads(1);
  const int64_t ctx = 128;
  server::GenerationRequest r;
  r.prompt = fx.prompts[1];
  r.options.max_new_tokens = 40;
  r.options.stop_at_eos = false;
  r.spec = api::parse_drafter_spec("suffix");
  const std::vector<int32_t> want = solo(model, r.prompt, r.options, threads, ctx);
  double accepted[2] = {0, 0};  // request scope, server scope
  for (const bool server_scope : {false, true}) {
    SCOPED_TRACE(server_scope ? "server scope" : "request scope");
    server::Metrics metrics;
    server::SchedulerOptions so{1, 4, ctx};
    so.suffix_index_bytes = server_scope ? int64_t{1} << 20 : 0;
    server::Scheduler scheduler(model, nullptr, threads, nullptr, so, metrics);
    int64_t drafted[2] = {0, 0};
    for (int64_t& d : drafted) {
      auto stream = scheduler.submit(r);
      ASSERT_TRUE(stream);
      const auto got = drain(*stream);
      EXPECT_EQ(ids_of(got), want);
      for (const auto& p : got) d += p.drafted ? 1 : 0;
      if (server_scope) {
        EXPECT_EQ(stream->stats().target_forwards, stream->stats().new_tokens);
      }
    }
    accepted[server_scope] = metric_sum(metrics.render(), "eagle2_accepted_length_sum");
    if (server_scope) {
      EXPECT_EQ(drafted[0] + drafted[1], 0) << "masked under the server scope";
    } else {
      EXPECT_EQ(drafted[1], drafted[0]);
      EXPECT_GT(drafted[0], 0);
    }
  }
  // The repeat accepted most of the first output: well over what the request scope accepted.
  EXPECT_GE(accepted[1], accepted[0] + 25) << accepted[0] << " vs " << accepted[1];
}

// A hybrid tree (dynamic+suffix) in the server's batch decoder: the solo tokens, the response's
// per-source counts (head and suffix both drafted and had nodes accepted) and /metrics' per-source
// counters; under the server scope the request's own counts are masked like a suffix request's,
// /metrics (the operator's) counts it all the same.
TEST(Scheduler, HybridTreesReportDraftsPerSource) {
  const Fixture fx;
  api::Model model = api::Model::load(fx.model_dir);
  api::Head head = api::Head::load(fx.head_dir, model);
  api::Threads threads(1);
  const int64_t ctx = 128;
  server::GenerationRequest r;
  r.prompt = fx.prompts[1];
  r.options.max_new_tokens = 40;
  r.options.stop_at_eos = false;
  r.spec = api::parse_drafter_spec("dynamic:8:3:2+suffix:8:7:1");
  const std::vector<int32_t> want = solo(model, r.prompt, r.options, threads, ctx);
  for (const bool server_scope : {false, true}) {
    SCOPED_TRACE(server_scope ? "server scope" : "request scope");
    server::Metrics metrics;
    server::SchedulerOptions so{1, 4, ctx};
    so.suffix_index_bytes = server_scope ? int64_t{1} << 20 : 0;
    server::Scheduler scheduler(model, &head, threads, nullptr, so, metrics);
    auto stream = scheduler.submit(r);
    ASSERT_TRUE(stream);
    const std::vector<TokenPiece> pieces = drain(*stream);
    EXPECT_EQ(ids_of(pieces), want);
    const api::Stats st = stream->stats();
    const std::string text = metrics.render();
    // Each drafted token names its source (x_eagle2.tokens[].source); a masked one none.
    int64_t by_head = 0, by_suffix = 0;
    for (const TokenPiece& p : pieces) {
      const std::string source = p.source;
      EXPECT_EQ(p.drafted, !source.empty()) << source;
      by_head += source == "head" || source == "both";
      by_suffix += source == "suffix" || source == "both";
    }
    const int64_t head_total =
        metric(text, "eagle2_drafted_tokens_by_source_total{source=\"head\"}");
    const int64_t suffix_total =
        metric(text, "eagle2_drafted_tokens_by_source_total{source=\"suffix\"}");
    const int64_t suffix_accepted =
        metric(text, "eagle2_accepted_tokens_by_source_total{source=\"suffix\"}");
    const int64_t depth1_drafted =
        metric(text, "eagle2_drafted_node_depth_bucket{source=\"all\",le=\"1\"}");
    const int64_t all_accepted = metric(text, "eagle2_accepted_node_depth_count{source=\"all\"}");
    EXPECT_GT(metric(text, "eagle2_accepted_length_count"), 0) << text;  // per step: unmasked
    if (server_scope) {
      // Masked in the response; counted in /metrics (the operator's view, as the per-step
      // series always were).
      EXPECT_EQ(st.head_drafted + st.suffix_drafted + st.head_accepted + st.suffix_accepted, 0);
      EXPECT_EQ(st.drafted_by_depth, decltype(st.drafted_by_depth){});
      EXPECT_EQ(by_head + by_suffix, 0);
      EXPECT_GT(head_total, 0) << text;
      EXPECT_GT(suffix_total, 0) << text;
      EXPECT_GT(suffix_accepted, 0) << text;
      EXPECT_GT(depth1_drafted, 0) << text;
      EXPECT_GT(all_accepted, 0) << text;
    } else {
      EXPECT_GT(head_total, 0) << text;
      EXPECT_GT(suffix_total, 0) << text;
      EXPECT_GT(suffix_accepted, 0) << text;
      EXPECT_EQ(st.head_drafted, head_total);
      EXPECT_EQ(st.suffix_drafted, suffix_total);
      EXPECT_GT(st.head_accepted, 0);
      EXPECT_GT(st.suffix_accepted, 0);
      // The emitted tokens among the accepted nodes (a last path may pass max_tokens).
      EXPECT_GT(by_head, 0);
      EXPECT_GT(by_suffix, 0);
      EXPECT_LE(by_head, st.head_accepted);
      EXPECT_LE(by_suffix, st.suffix_accepted);
      // Per depth: every node once (all), the accepted ones as the acceptance histogram says.
      int64_t drafted = 0, accepted = 0, head_accepted = 0, from_hist = 0;
      for (int b = 0; b < api::Stats::kDepthBins; ++b) {
        drafted += st.drafted_by_depth[0][b];
        accepted += st.accepted_by_depth[0][b];
        head_accepted += st.accepted_by_depth[1][b];
      }
      for (size_t a = 0; a < st.accept_histogram.size(); ++a)
        from_hist += static_cast<int64_t>(a) * st.accept_histogram[a];
      EXPECT_EQ(drafted, st.drafted_tokens);
      EXPECT_EQ(accepted, from_hist);
      EXPECT_EQ(head_accepted, st.head_accepted);
      EXPECT_EQ(st.accepted_by_depth[0][0], st.cycles - st.accept_histogram[0]);
      EXPECT_EQ(depth1_drafted, st.drafted_by_depth[0][0]);
      EXPECT_EQ(all_accepted, accepted);
    }
  }
}

TEST(Scheduler, KvNeedCoversWhatEveryDrafterUses) {
  const Fixture fx;
  api::Model model = api::Model::load(fx.model_dir);
  api::Head head = api::Head::load(fx.head_dir, model);
  api::Threads threads(1);
  const int64_t ctx = 512;
  const api::VerifyCost cost = api::VerifyCost::measure(model, ctx, threads, 2);
  server::KvCosts costs;
  costs.context = ctx;
  for (const char* text :
       {"plain", "none", "lookup", "chain:3", "dynamic:12:3:4", "dynamic:auto:3:4:cal", "static:8",
        "lookahead:2:3:2", "suffix", "dynamic:12:3:4+suffix", "dynamic:auto:3:4:cal+suffix:32:7",
        "sampled:12:3:4"}) {
    SCOPED_TRACE(text);
    const api::DrafterSpec spec = api::parse_drafter_spec(text);
    // 256 tokens (16 blocks) each: the prompt, max_new_tokens and one cycle's tree.
    const int64_t max_new =
        256 - static_cast<int64_t>(fx.prompts[0].size()) - server::tree_rows_bound(spec);
    const server::KvNeed need =
        server::kv_need(costs, static_cast<int64_t>(fx.prompts[0].size()), max_new, spec);
    ASSERT_EQ(need.target_blocks, 16);
    server::Metrics metrics;
    server::SchedulerOptions so{2, 4, ctx};
    so.kv_pool_blocks = 32;  // exactly the two reservations
    server::Scheduler scheduler(model, &head, threads, &cost, so, metrics);
    std::vector<std::shared_ptr<server::RequestStream>> streams;
    for (int i = 0; i < 2; ++i) {
      server::GenerationRequest r;
      r.prompt = fx.prompts[0];
      r.options.max_new_tokens = max_new;
      r.options.stop_at_eos = false;
      r.spec = spec;
      r.kv = need;
      streams.push_back(scheduler.submit(r));
      ASSERT_TRUE(streams.back());
    }
    for (auto& st : streams) {
      const auto got = drain(*st);
      EXPECT_EQ(st->finish_reason(), FinishReason::Length) << st->error();
      EXPECT_EQ(static_cast<int64_t>(got.size()), max_new);
    }
  }
}

TEST(Scheduler, RequestsThatCanNeverRunAreRefusedAtOnce) {
  const Fixture fx;
  api::Model model = api::Model::load(fx.model_dir);
  api::Threads threads(1);
  server::Metrics metrics;
  server::Scheduler scheduler(model, nullptr, threads, nullptr, {2, 4, 32}, metrics);
  server::GenerationRequest r;
  r.spec = api::parse_drafter_spec("plain");
  EXPECT_EQ(test::error_of([&] { scheduler.submit(r); }), "the prompt is empty");
  r.prompt.assign(32, 1);
  EXPECT_EQ(test::error_of([&] { scheduler.submit(r); }),
            "the prompt has 32 tokens but the context is 32: shorten the prompt");
  r.prompt.assign(3, 1);
  r.spec = api::parse_drafter_spec("chain:3");
  EXPECT_EQ(test::error_of([&] { scheduler.submit(r); }),
            "speculative \"chain:3\" needs an EAGLE head and this server has none");
  r.spec = api::parse_drafter_spec("plain");
  r.options.sampling.top_p = 0;
  EXPECT_NE(test::error_of([&] { scheduler.submit(r); }), "");
}

TEST(Scheduler, ShutdownFinishesAdmittedAndCancelsQueued) {
  const Fixture fx;
  api::Model model = api::Model::load(fx.model_dir);
  api::Threads threads(1);
  server::Metrics metrics;
  auto scheduler = std::make_unique<server::Scheduler>(
      model, nullptr, threads, nullptr, server::SchedulerOptions{1, 4, 512}, metrics);
  server::GenerationRequest r;
  r.prompt = fx.prompts[1];
  // Long enough that the queued request is still queued at shutdown, even on a fast machine.
  r.options.max_new_tokens = 400;
  r.options.stop_at_eos = false;
  r.spec = api::parse_drafter_spec("plain");
  auto admitted = scheduler->submit(r);
  std::vector<TokenPiece> got;
  for (int i = 0; i < 1200 && got.empty(); ++i) admitted->take(got, 50ms);
  ASSERT_FALSE(got.empty()) << "no token in 60 s";
  auto queued = scheduler->submit(r);
  scheduler->shutdown();
  EXPECT_FALSE(scheduler->submit(r)) << "no admission after shutdown";
  drain(*admitted);
  EXPECT_EQ(admitted->finish_reason(), FinishReason::Length);
  EXPECT_EQ(admitted->stats().new_tokens, 400);
  drain(*queued);
  EXPECT_EQ(queued->finish_reason(), FinishReason::Cancelled);
  scheduler.reset();
}

}  // namespace
}  // namespace eagle2

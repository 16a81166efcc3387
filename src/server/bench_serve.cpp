#include "server/bench_serve.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>

#include "eagle2/cost.h"
#include "eagle2/drafter.h"
#include "eagle2/error.h"
#include "eagle2/generate.h"
#include "eagle2/head.h"
#include "eagle2/model.h"
#include "eagle2/runtime.h"
#include "eagle2/tokenizer.h"
#include "server/child_process.h"
#include "server/http_server.h"
#include "server/load_client.h"

namespace eagle2::server {

namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;
using Clock = std::chrono::steady_clock;

// A server to drive: host, port, and whether it speaks our extensions.
struct Target {
  std::string system;  // row label
  int port = 0;
  std::string spec;    // "speculative" field; empty: none sent (llama-server)
  bool eagle2 = true;  // has /metrics in our names
  // A server with --suffix-scope server started for each level and repetition (port set then):
  // its index starts empty each time, and its /metrics count only that run.
  bool fresh_server_scope = false;
};

std::string completion_body(const std::string& prompt, int64_t max_tokens,
                            const std::string& spec) {
  // Streamed, so that each request's decoding time (after its first token) can be told from its
  // prompt processing: the figure to compare with decoding alone.
  Json j = {{"prompt", prompt},
            {"max_tokens", max_tokens},
            {"temperature", 0},
            {"stream", true},
            {"stream_options", {{"include_usage", true}}}};
  if (!spec.empty()) j["speculative"] = spec;
  return j.dump();
}

struct Level {
  double aggregate_tps = 0, request_tps = 0, sequences_per_step = 0, rows_per_step = 0, tau = 0;
  int64_t requests = 0, differing = 0;  // greedy texts unlike the first run's (others only)
};

// c clients, each sending its share of the prompts one after another. Texts are checked against
// (and, the first time, recorded into) `reference`, per prompt.
Level run_level(const Target& t, int c, const BenchServeOptions& o,
                std::map<size_t, std::string>& reference) {
  const std::vector<std::vector<size_t>> plan =
      client_prompts(o.prompts.size(), c, o.in_order, o.requests_per_client);
  std::vector<std::vector<std::pair<size_t, LoadResult>>> per_client(plan.size());
  auto metrics_now = [&] {
    return t.eagle2 ? http_get("127.0.0.1", t.port, "/metrics").second : "";
  };
  const std::string before = metrics_now();
  const auto t0 = Clock::now();
  std::vector<std::thread> clients;
  for (size_t k = 0; k < plan.size(); ++k)
    clients.emplace_back([&, k] {
      for (const size_t p : plan[k]) {
        LoadRequest req;
        req.body = completion_body(o.prompts[p], o.max_tokens, t.spec);
        req.stream = true;
        per_client[k].emplace_back(p, send_request("127.0.0.1", t.port, req));
      }
    });
  for (auto& th : clients) th.join();
  const double wall = std::chrono::duration<double>(Clock::now() - t0).count();
  const std::string after = metrics_now();
  std::vector<std::pair<size_t, LoadResult>> results;
  for (auto& client : per_client)
    for (auto& r : client) results.push_back(std::move(r));
  Level l;
  int64_t tokens = 0, forwards = 0;
  double request_tps = 0;
  for (const auto& [p, r] : results) {
    if (r.status != 200 || !r.error.empty())
      throw Error(t.system + ": a request failed (HTTP " + std::to_string(r.status) +
                  "): " + r.error + r.body.substr(0, 300));
    auto [it, fresh] = reference.emplace(p, r.text);
    ++l.requests;
    if (!fresh && it->second != r.text) {
      // Ours must be batch-invariant (a difference is a bug); another server's kernels may not
      // be, and how often its greedy text changes with the company is worth reporting.
      if (t.eagle2)
        throw Error(t.system + " at " + std::to_string(c) + " clients: the greedy text of prompt " +
                    std::to_string(p) + " differs from the first run's (lossless decoding broken)");
      ++l.differing;
    }
    const int64_t n = r.completion_tokens > 0 ? r.completion_tokens : 0;
    tokens += n;
    if (r.target_forwards > 0) forwards += r.target_forwards;
    // Decoding only: the tokens after the first over the time after it.
    const double decode_seconds = r.seconds - std::max(0.0, r.first_token_seconds);
    if (n > 1 && decode_seconds > 0) request_tps += static_cast<double>(n - 1) / decode_seconds;
  }
  l.aggregate_tps = static_cast<double>(tokens) / wall;
  l.request_tps = request_tps / static_cast<double>(results.size());
  l.tau = forwards > 0 ? static_cast<double>(tokens) / static_cast<double>(forwards) : 0;
  if (t.eagle2) {
    auto delta = [&](const char* name) {
      return metric_value(after, name) - metric_value(before, name);
    };
    const double steps = delta("eagle2_batch_rows_count");
    if (steps > 0) {
      l.rows_per_step = delta("eagle2_batch_rows_sum") / steps;
      l.sequences_per_step = delta("eagle2_batch_sequences_sum") / steps;
    }
    // A speculative target's tau comes from /metrics over the level (verifications only, the
    // prefill's first token not counted), the same definition for every eagle2 row: under the
    // server scope the responses report their drafting as plain decoding's (masked).
    const double verifications = delta("eagle2_sequence_forwards_total");
    if (t.spec != "plain" && verifications > 0)
      l.tau = delta("eagle2_committed_tokens_total") / verifications;
  }
  return l;
}

// Tokens/s of decoding alone (no server), plain and speculative over the prompts, once per
// repetition; the model, head and cost curve are loaded and measured once for all of them.
void solo_rates(const BenchServeOptions& o, const api::DrafterSpec& spec,
                std::vector<double>& plain_tps, std::vector<double>& eagle_tps) {
  api::Model model = api::Model::load(o.server.model_dir);
  const api::Tokenizer tok = api::Tokenizer::open(o.server.model_dir);
  api::Threads threads(o.server.threads > 0 ? o.server.threads : api::default_thread_count());
  std::optional<api::Head> head;
  if (!o.server.head_dir.empty()) {
    head.emplace(api::Head::load(o.server.head_dir, model));
    const int64_t n = head->default_draft_vocab(o.server.head_dir, o.server.draft_vocab);
    if (n > 0) head->restrict_vocab(o.server.head_dir + "/draft_vocab.tsv", n);
  }
  const int64_t ctx = o.server.ctx > 0
                          ? o.server.ctx
                          : std::min<int64_t>(2048, model.config().max_position_embeddings);
  const api::VerifyCost cost = api::VerifyCost::measure(model, ctx, threads);
  api::GenerateOptions g;
  g.max_new_tokens = o.max_tokens;
  for (int rep = 0; rep < o.reps; ++rep) {
    // A fresh drafter each repetition: each starts from what nothing has taught it.
    api::Drafter drafter =
        api::Drafter::make(spec, head ? &*head : nullptr, threads, ctx, 0.0f, &cost);
    int64_t plain_tokens = 0, spec_tokens = 0;
    double plain_s = 0, spec_s = 0;
    for (const std::string& text : o.prompts) {
      const std::vector<int32_t> prompt = tok.encode(text, tok.adds_bos());
      api::KvCache kv(model, ctx);
      const api::Stats p =
          api::generate_plain(model, kv, prompt, g, threads, [](int32_t) { return true; });
      plain_tokens += p.new_tokens;
      plain_s += p.decode_seconds;
      if (!drafter) continue;
      api::KvCache skv(model, ctx);
      const api::Stats st = api::generate_speculative(model, skv, drafter, prompt, g, threads,
                                                      [](int32_t) { return true; });
      spec_tokens += st.new_tokens;
      spec_s += st.decode_seconds;
    }
    plain_tps.push_back(plain_s > 0 ? static_cast<double>(plain_tokens) / plain_s : 0);
    eagle_tps.push_back(spec_s > 0 ? static_cast<double>(spec_tokens) / spec_s : 0);
  }
}

// Stops a server started on a thread and joins it, however the scope is left (null: none).
struct StopServer {
  Server* s;
  std::thread& t;
  ~StopServer() {
    if (s) s->stop();
    if (t.joinable()) t.join();
  }
};

std::string range(const std::vector<double>& v, int decimals) {
  if (v.empty()) return "-";
  const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  char buf[96];
  if (*hi - *lo < 0.5 * std::pow(10.0, -decimals))
    std::snprintf(buf, sizeof buf, "%.*f", decimals, *lo);
  else
    std::snprintf(buf, sizeof buf, "%.*f-%.*f", decimals, *lo, decimals, *hi);
  return buf;
}

std::vector<double> ratios(const std::vector<double>& a, const std::vector<double>& b) {
  std::vector<double> r;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i)
    if (b[i] > 0) r.push_back(a[i] / b[i]);
  return r;
}

}  // namespace

std::vector<std::vector<size_t>> client_prompts(size_t n, int c, bool in_order,
                                                int requests_per_client) {
  std::vector<std::vector<size_t>> plan(static_cast<size_t>(std::max(1, c)));
  if (n == 0) return plan;
  const size_t requests = in_order ? n : static_cast<size_t>(std::max(8, c * requests_per_client));
  for (size_t i = 0; i < requests; ++i) plan[i % plan.size()].push_back(i % n);
  return plan;
}

BenchServeResult run_bench_serve(const BenchServeOptions& o) {
  if (o.prompts.empty()) throw Error("bench-serve: no prompts");
  if (o.concurrency.empty()) throw Error("bench-serve: no concurrency levels");
  if (o.reps < 1) throw Error("bench-serve: --reps must be >= 1");
  BenchServeResult result;
  ServerOptions so = o.server;
  so.port = 0;
  so.host = "127.0.0.1";
  so.parallel =
      std::max(so.parallel, *std::max_element(o.concurrency.begin(), o.concurrency.end()));
  so.max_queue = std::max(so.max_queue, so.parallel);
  Server server(so);
  std::thread serving([&] { server.run(); });
  const StopServer stop_server{&server, serving};

  const std::string eagle_spec = o.eagle_spec.empty() ? server.default_spec() : o.eagle_spec;
  std::vector<Target> targets = {{"plain", server.port(), "plain", true},
                                 {"EAGLE-2 (" + eagle_spec + ")", server.port(), eagle_spec, true}};
  ServerOptions server_scope = so;
  if (o.compare_suffix_scope) {
    if (so.suffix_scope == "server")
      throw Error("bench-serve: the suffix-scope comparison needs the request scope as its base");
    const api::DrafterSpec compared = api::parse_drafter_spec(eagle_spec);
    if (compared.kind != "suffix" && !compared.with_suffix)
      throw Error(
          "bench-serve: --compare-suffix-scope needs a spec that drafts from the suffix "
          "index (suffix... or dynamic...+suffix), not " +
          eagle_spec);
    server_scope.suffix_scope = "server";
    targets.push_back(
        {"EAGLE-2 (" + eagle_spec + "), --suffix-scope server", 0, eagle_spec, true, true});
  }
  std::unique_ptr<ChildProcess> llama;
  if (!o.llama_server.empty()) {
    // llama-server on the same model: its own slots, plain decoding, our clients.
    const int port = 18000 + static_cast<int>(getpid() % 2000);
    const int64_t ctx = 1024;
    const std::string log_dir = o.out_dir.empty() ? fs::temp_directory_path().string() : o.out_dir;
    fs::create_directories(log_dir);
    const std::string log = log_dir + "/llama-server.log";
    llama = std::make_unique<ChildProcess>(
        o.llama_server,
        std::vector<std::string>{
            "-m", o.llama_model, "--host", "127.0.0.1", "--port", std::to_string(port), "-np",
            std::to_string(so.parallel), "-c", std::to_string(ctx * so.parallel), "-t",
            std::to_string(so.threads > 0 ? so.threads : 2), "--no-webui", "--metrics"},
        log);
    bool up = false;
    for (int i = 0; i < 600 && !up; ++i) {
      up = http_get("127.0.0.1", port, "/health").first == 200;
      if (!up) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    if (!up) throw Error("llama-server did not come up (see " + log + ")");
    targets.push_back({"llama-server", port, "", false});
  }
  for (const Target& t : targets) result.systems.push_back(t.system);

  // Warm-up (unmeasured): one pass at the smallest level each, which also fills the references.
  std::map<size_t, std::string> reference, llama_reference;
  for (const Target& t : targets)
    if (!t.fresh_server_scope) run_level(t, 1, o, t.eagle2 ? reference : llama_reference);
  for (int rep = 0; rep < o.reps; ++rep) {
    for (int c : o.concurrency)
      for (Target t : targets) {
        std::unique_ptr<Server> fresh;
        std::thread fresh_thread;
        if (t.fresh_server_scope) {
          fresh = std::make_unique<Server>(server_scope);
          fresh_thread = std::thread([&] { fresh->run(); });
          t.port = fresh->port();
        }
        const StopServer stop_fresh_server{fresh.get(), fresh_thread};
        if (fresh) {
          // Warm the fresh server as the others were (first-touch KV, arenas, thread wake) with
          // plain requests, which do not feed the suffix index; its tau is taken over the level.
          std::map<size_t, std::string> unused;
          Target warm = t;
          warm.spec = "plain";
          BenchServeOptions two = o;
          two.prompts.resize(std::min<size_t>(2, two.prompts.size()));
          two.in_order = true;
          run_level(warm, 1, two, unused);
        }
        const Level l = run_level(t, c, o, t.eagle2 ? reference : llama_reference);
        BenchServeCell& cell = result.cells[{t.system, c}];
        cell.aggregate_tps.push_back(l.aggregate_tps);
        cell.request_tps.push_back(l.request_tps);
        cell.sequences_per_step.push_back(l.sequences_per_step);
        cell.rows_per_step.push_back(l.rows_per_step);
        cell.tau.push_back(l.tau);
        if (!t.eagle2) {
          result.other_requests += l.requests;
          result.other_differing += l.differing;
        }
      }
  }
  if (llama) llama->stop();
  // Decoding alone, after the server is idle (it would compete for the cores otherwise).
  const api::DrafterSpec spec = api::parse_drafter_spec(eagle_spec);
  solo_rates(o, spec, result.solo_plain_tps, result.solo_eagle_tps);

  // The table: per concurrency, each system's aggregate and per-request tokens/s, EAGLE-2 over
  // plain as ratios per repetition, and the step shapes.
  const std::string& plain = targets[0].system;
  const std::string& eagle = targets[1].system;
  std::string& md = result.table;
  md +=
      "| clients | system | aggregate tokens/s | per-request decode tokens/s | vs plain "
      "(aggregate) | "
      "sequences/step | rows/step | tau |\n|---|---|---|---|---|---|---|---|\n";
  for (int c : o.concurrency)
    for (const std::string& system : result.systems) {
      const BenchServeCell& cell = result.cells[{system, c}];
      const BenchServeCell& base = result.cells[{plain, c}];
      const bool ours = system != "llama-server";
      md +=
          "| " + std::to_string(c) + " | " + system + " | " + range(cell.aggregate_tps, 0) + " | " +
          range(cell.request_tps, 0) + " | " +
          (system == plain ? "1" : range(ratios(cell.aggregate_tps, base.aggregate_tps), 2) + "x") +
          " | " + (ours ? range(cell.sequences_per_step, 2) : "-") + " | " +
          (ours ? range(cell.rows_per_step, 1) : "-") + " | " + (ours ? range(cell.tau, 2) : "-") +
          " |\n";
    }
  if (llama)
    md += "\nllama-server's greedy texts differed from its own first run for " +
          std::to_string(result.other_differing) + " of " + std::to_string(result.other_requests) +
          " requests (its results depend on the batch; ours may not, and the bench fails if "
          "they do).\n";
  if (o.compare_suffix_scope) {
    const std::string& shared = targets[2].system;
    md +=
        "\nThe server-wide suffix index against the request's own, aggregate tokens/s per "
        "repetition:";
    for (int c : o.concurrency)
      md += " " + std::to_string(c) + " client(s) " +
            range(ratios(result.cells[{shared, c}].aggregate_tps,
                         result.cells[{eagle, c}].aggregate_tps),
                  2) +
            "x;";
    md +=
        " the --suffix-scope server rows come from a server started for each level and "
        "repetition (an empty index each time); their tau is its /metrics' eagle2_tau "
        "(responses report such requests as plain decoding's).\n";
  }
  md += "\nDecoding alone (no server, the same prompts): plain " + range(result.solo_plain_tps, 0) +
        " tokens/s, " + eagle + " " + range(result.solo_eagle_tps, 0) + " tokens/s, speedup " +
        range(ratios(result.solo_eagle_tps, result.solo_plain_tps), 2) + "x.\n";
  const int c1 = o.concurrency.front();
  md += "Through the server at " + std::to_string(c1) +
        " client(s), per-request decoding: " + "speedup " +
        range(ratios(result.cells[{eagle, c1}].request_tps, result.cells[{plain, c1}].request_tps),
              2) +
        "x. Aggregate tokens/s count every token over the wall time (prompt processing "
        "included); per-request decode tokens/s count the tokens after the first over the time "
        "after it. Ranges over " +
        std::to_string(o.reps) + " repetitions.\n";

  if (!o.out_dir.empty()) {
    fs::create_directories(o.out_dir);
    std::ofstream(o.out_dir + "/table.md") << md;
    Json j;
    j["systems"] = result.systems;
    j["solo_plain_tps"] = result.solo_plain_tps;
    j["solo_eagle_tps"] = result.solo_eagle_tps;
    for (const auto& [key, cell] : result.cells)
      j["cells"].push_back({{"system", key.first},
                            {"clients", key.second},
                            {"aggregate_tps", cell.aggregate_tps},
                            {"request_tps", cell.request_tps},
                            {"sequences_per_step", cell.sequences_per_step},
                            {"rows_per_step", cell.rows_per_step},
                            {"tau", cell.tau}});
    std::ofstream(o.out_dir + "/results.json") << j.dump(1) << "\n";
    for (const auto& [name, svg] : bench_serve_charts(result, o.concurrency))
      std::ofstream(o.out_dir + "/" + name) << svg;
  }
  return result;
}

}  // namespace eagle2::server

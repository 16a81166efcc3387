// eagle2 bench-serve: the server under load, measured. An in-process `eagle2 serve` (loopback,
// ephemeral port) is driven by 1, 2, 4, 8, 16 concurrent clients, each sending completions of the
// prompt set one after another; per system (plain decoding, EAGLE-2, and optionally llama-server
// on the same model as a reference) and concurrency: aggregate tokens/s, per-request tokens/s,
// mean sequences and rows per engine step, tau. Repetitions interleave the systems, so that each
// ratio compares runs made side by side, and every figure is reported as the range over them.
// Greedy texts must be equal across systems and concurrencies (the bench fails otherwise).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "server/server_options.h"

namespace eagle2::server {

struct BenchServeOptions {
  ServerOptions server;  // the server to start (its parallel is raised to the largest concurrency)
  std::vector<int> concurrency = {1, 2, 4, 8, 16};
  std::string eagle_spec;            // empty: the server's default spec
  std::vector<std::string> prompts;  // prompt texts (completions)
  int requests_per_client = 2;       // each client sends this many (at least 8 per level)
  // Each level sends the prompt set once, in its order (request i by client i mod c), rather than
  // requests_per_client each: a stream with repeats (bench/prompts/repeated_requests.jsonl) is
  // replayed in its order (with one client each repeat comes after its first time; with more, a
  // repeat may run while its original still decodes).
  bool in_order = false;
  // A third system: the same spec on a server with --suffix-scope server (one fresh per level and
  // repetition, so that each starts with an empty index), beside the request-scope one.
  bool compare_suffix_scope = false;
  int64_t max_tokens = 128;
  int reps = 3;
  std::string llama_server;  // path of llama-server for a reference row ("" = none)
  std::string llama_model;   // its GGUF of the same model
  std::string out_dir;       // table.md, results.json and the charts (empty: stdout only)
};

// One (system, concurrency) cell: a value per repetition.
struct BenchServeCell {
  std::vector<double> aggregate_tps, request_tps, sequences_per_step, rows_per_step, tau;
};

struct BenchServeResult {
  std::vector<std::string> systems;  // "plain", "EAGLE-2 (<spec>)", "llama-server"
  std::map<std::pair<std::string, int>, BenchServeCell> cells;  // (system, concurrency)
  // Decoding alone in this process (no server), tokens/s per repetition: plain and EAGLE-2.
  std::vector<double> solo_plain_tps, solo_eagle_tps;
  // Requests to the reference server, and how many greedy texts differed from its first run's.
  int64_t other_requests = 0, other_differing = 0;
  std::string table;  // markdown
};

// What each client sends at one level: client k's prompt indices, in order (n prompts, c
// clients). in_order: every prompt once, request i by client i mod c; otherwise max(8, c *
// requests_per_client) requests cycling through the prompts, dealt the same way.
std::vector<std::vector<size_t>> client_prompts(size_t n, int c, bool in_order,
                                                int requests_per_client);

// Runs it all; Error when a request fails or a greedy text differs between runs.
BenchServeResult run_bench_serve(const BenchServeOptions& options);

// The SVG charts of a result: file name -> SVG text.
std::vector<std::pair<std::string, std::string>> bench_serve_charts(const BenchServeResult& r,
                                                                    const std::vector<int>& levels);

}  // namespace eagle2::server

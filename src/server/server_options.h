// What `eagle2 serve` is started with: the CLI fills it from its flags, tests fill it directly.
// Only standard types, so that the CLI can include it with nothing of the server's internals.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace eagle2::server {

inline constexpr const char* kDefaultSpec = "dynamic:auto:8:1:cal";

struct ServerOptions {
  std::string model_dir;  // config.json + safetensors + tokenizer.json or tokenizer.model
  std::string head_dir;   // EAGLE head folder; empty: none (only head-less specs are served)
  // Draft only the N most frequent tokens of HEAD/draft_vocab.tsv (as demo does): -1 = 1024 when
  // the file exists, else the full vocabulary; 0 = the full vocabulary.
  int64_t draft_vocab = -1;
  std::string host = "127.0.0.1";
  int port = 8080;  // 0: an ephemeral port (Server::port() says which)
  int parallel = 4;
  int max_queue = 64;
  int64_t ctx = 0;  // each sequence's context; 0 = min(2048, max_position_embeddings)
  int threads = 0;  // 0 = api::default_thread_count()
  // The drafter of requests without "speculative". Empty: kDefaultSpec with a head (demo's: the
  // budget sweep's winner on the bundled model), "plain" without one.
  std::string spec;
  std::string api_key;        // empty: no authentication
  std::string chat_template;  // a template file; empty: the model folder's, if it has one
  // Request bodies above this get 413: the bytes as received for Content-Length and chunked
  // bodies, the inflated bytes for gzip, deflate and br bodies.
  size_t max_body = size_t{1} << 20;
  // On SIGTERM/SIGINT (or stop()), admitted requests decode to their end for at most this long;
  // then they end with what they have and a shutting-down error. A second signal exits at once.
  int drain_timeout = 30;  // seconds

  // Connections (docs/SERVER.md "Limits and threat model"). A request's head and body must
  // arrive within read_timeout (the first request's counted from the connection's accept);
  // a connection idles at most keep_alive_timeout between requests and serves at most
  // keep_alive_max of them. At most max_connections are served at once (0: parallel + max_queue +
  // 4, a place for every slot and queue place and a few more); one more gets 503 at once, or its
  // /health answer. /health answers 503 when the scheduler, with requests to run, has not come
  // round its loop for stall_timeout.
  int read_timeout = 10;       // seconds
  int keep_alive_timeout = 5;  // seconds
  int keep_alive_max = 100;    // requests per connection
  int max_connections = 0;     // 0: parallel + max_queue + 4
  int stall_timeout = 60;      // seconds
  // Tests only: called on the scheduler's thread before each engine step (to stall or fail one).
  std::function<void()> before_step;
  // Tests only (`eagle2 serve` takes it from the environment variable EAGLE2_TEST_FAULT, never
  // from a request; docs/SERVER.md "Faults stay local"): a request whose prompt text contains
  // MARKER + ":drafting" or MARKER + ":verification" has its drafting or verification throw at its
  // first cycle, one with MARKER + ":admission" its admission to the engine (std::bad_alloc)
  // (api::GenerateOptions::test_fault). Empty: off.
  std::string test_fault_marker;

  // Drafters the operator offers by name (--drafter NAME=SPEC, in order): a request's
  // "speculative" names one of them, or gives a spec that loads nothing from disk. Drafters with
  // weights of their own (sps:DIR, medusa:DIR, hydra:DIR, ...@HEAD_DIR) are only served this way.
  std::vector<std::pair<std::string, std::string>> drafters;
  // Server limits on what one request may ask (docs/SERVER.md "Limits and threat model").
  int64_t max_tokens = 0;      // largest max_tokens; 0 = the context (--ctx)
  int max_draft_tokens = 128;  // draft tokens per cycle (tree size, chain or lookup length + 1,
                               // lookahead rows (W + G) * (N - 1), suffix T)
  int max_draft_depth = 32;    // draft levels (chain, lookup, suffix and dynamic D, static path)
  int max_draft_top_k = 16;    // dynamic K
  // Suffix drafters index their own request ("request") or also every request's recent output
  // ("server": one index of at most suffix_memory bytes, oldest outputs evicted first;
  // docs/SPECULATIVE.md "Suffix decoding" says what it exposes through timing).
  std::string suffix_scope = "request";
  int64_t suffix_memory = int64_t{64} << 20;
  // Bytes of KV memory all requests together may use: the target's shared pool and the admitted
  // requests' drafter caches (docs/SERVER.md "Memory"). 0: --parallel whole contexts and as many
  // caches of the default drafter.
  int64_t max_kv_memory = 0;

  // Browser safety (docs/SERVER.md "Browser safety"). Host names accepted besides the bound
  // address (and the loopback names for a loopback bind); "*": any.
  std::vector<std::string> allowed_hosts;
  // Origins (scheme://host[:port]) a cross-origin page may call from; they get CORS headers.
  // Empty: no CORS, and a request with any other Origin than the page's own gets 403.
  std::vector<std::string> allowed_origins;
};

}  // namespace eagle2::server

// What `eagle2 serve` is started with: the CLI fills it from its flags, tests fill it directly.
// Only standard types, so that the CLI can include it with nothing of the server's internals.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

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
  size_t max_body = size_t{1} << 20;  // request bodies above this get 413
};

}  // namespace eagle2::server

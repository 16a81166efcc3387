// eagle2 serve: the OpenAI-compatible HTTP server (src/server/) on the command line. Thin: the
// flags become ServerOptions; the server itself is a library class that tests run in-process.
#include <sys/stat.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "bundled.h"
#include "commands.h"
#include "drafter_flags.h"
#include "eagle2/error.h"
#include "flag_checks.h"
#include "server/http_server.h"

namespace eagle2::cli {

namespace {

struct ServeFlags {
  RunFlags run;
  std::string head_dir;
  DrafterFlags drafter;  // --spec or generate's shorthands: the default drafter
  server::ServerOptions options;
  std::string api_key_file;
};

// The longest first line read from --api-key-file: a key, not a file's worth of memory.
constexpr size_t kMaxServeKeyBytes = 4096;

// --api-key-file PATH: the first line of a regular file (a FIFO or device could block or never
// end), its line ending stripped; an empty one is an error, not "no key".
std::string serve_key_from_file(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) fail("--api-key-file ", path, ": cannot open");
  if (!S_ISREG(st.st_mode)) fail("--api-key-file ", path, ": not a regular file");
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("--api-key-file ", path, ": cannot open");
  std::string line;
  char c = 0;
  while (line.size() <= kMaxServeKeyBytes && in.get(c) && c != '\n') line += c;
  if (line.size() > kMaxServeKeyBytes)
    fail("--api-key-file ", path, ": the first line is longer than ", kMaxServeKeyBytes, " bytes");
  if (!line.empty() && line.back() == '\r') line.pop_back();
  if (line.empty()) fail("--api-key-file ", path, ": the first line is empty");
  return line;
}

// The key from --api-key, --api-key-file or $EAGLE2_API_KEY: at most one of them, so that
// which key is in force is never a question of precedence.
std::string resolve_serve_key(const ServeFlags& f) {
  const char* env = std::getenv("EAGLE2_API_KEY");
  const int given = !f.options.api_key.empty() + !f.api_key_file.empty() + (env != nullptr);
  if (given > 1)
    fail("give the API key one way only: --api-key, --api-key-file or EAGLE2_API_KEY (", given,
         " are set)");
  if (!f.api_key_file.empty()) return serve_key_from_file(f.api_key_file);
  if (env != nullptr) {
    if (*env == '\0') fail("EAGLE2_API_KEY is set but empty");
    return env;
  }
  return f.options.api_key;
}

int run_serve(ServeFlags& f) {
  server::ServerOptions o = f.options;
  o.api_key = resolve_serve_key(f);
  // Tests of the server's fault handling only (docs/SERVER.md "Faults stay local"): never a flag,
  // so that `--help` does not offer it to an operator; a short marker could match real prompts.
  if (const char* marker = std::getenv("EAGLE2_TEST_FAULT")) {
    if (std::strlen(marker) < 16)
      fail("EAGLE2_TEST_FAULT (tests only) must be a marker of at least 16 characters");
    o.test_fault_marker = marker;
    std::fprintf(stderr,
                 "eagle2 serve: EAGLE2_TEST_FAULT is set: requests with its marker fail "
                 "(tests only)\n");
  }
  const ModelAndHead dirs = model_and_head(f.run.model_dir, f.head_dir);
  o.model_dir = dirs.model_dir;
  o.head_dir = dirs.head_dir;
  // The default drafter: --spec as given, or what generate's shorthands spell (with a head,
  // --tree defaults to dynamic as in generate); neither: the server's own default.
  if (f.drafter.spec_given) {
    o.spec = f.drafter.spec;
  } else if (shorthands_given(f.drafter)) {
    DrafterFlags d = f.drafter;
    d.head_dir = o.head_dir;
    o.spec = drafter_spec_from_flags(d).to_string();
  }
  o.threads = resolve_threads(f.run);
  o.ctx = f.run.ctx;  // 0: the server applies generate's default, min(2048, the model's)

  server::Server srv(o);
  srv.stop_on_signals();  // before the line below: a client may signal as soon as it reads it
  // One line that says where to connect; tests read the port from it (--port 0).
  std::fprintf(stderr, "eagle2 serve: listening on http://%s:%d (%s)\n", o.host.c_str(), srv.port(),
               srv.summary().c_str());
  std::fflush(stderr);
  srv.run_until_signal();
  std::fprintf(stderr, "eagle2 serve: stopped\n");
  return 0;
}

}  // namespace

Command add_serve(CLI::App& app) {
  auto f = std::make_shared<ServeFlags>();
  server::ServerOptions& o = f->options;
  CLI::App* cmd = app.add_subcommand(
      "serve",
      "Serve the model over HTTP: the OpenAI API (/v1/completions, /v1/chat/completions, "
      "/v1/models), /health, /metrics and a web page at /");
  add_served_model_flags(*cmd, f->run.model_dir, f->head_dir, o.draft_vocab);
  cmd->add_option("--spec", f->drafter.spec,
                  std::string("Default drafter for requests without \"speculative\" (default: ") +
                      server::kDefaultSpec +
                      " with a head, plain without); or generate's "
                      "--tree, --total-tokens, --depth, --draft-top-k, --choices, --calibrate")
      ->check(drafter_spec_check())
      ->each([f](const std::string&) { f->drafter.spec_given = true; });
  add_drafter_shorthands(*cmd, f->drafter);
  cmd->add_option("--host", o.host, "Address to listen on (default: 127.0.0.1)");
  cmd->add_option("--port", o.port, "Port (default: 8080; 0 = any free port, printed at start)")
      ->check(integer_in(0, 65535));
  cmd->add_option("--parallel", o.parallel, "Requests decoded at once (default: 4)")
      ->check(integer_in(1, 256));
  cmd->add_option("--max-queue", o.max_queue,
                  "Requests waiting for a slot; more get 503 (default: 64)")
      ->check(integer_in(0, 4096));
  add_threads_flag(*cmd, f->run.threads);
  cmd->add_option("--ctx", f->run.ctx,
                  "Context per request in tokens (default: min(2048, max_position_embeddings))")
      ->check(integer_in(1, int64_t{1} << 30));
  cmd->add_option("--api-key", o.api_key,
                  "Require 'Authorization: Bearer KEY' on /v1/ (not on /, /health, /metrics)")
      ->check(CLI::Validator(
          [](std::string& v) { return v.empty() ? std::string("the key is empty") : ""; }, "KEY"));
  cmd->add_option("--api-key-file", f->api_key_file,
                  "As --api-key, the key being the first line of this file (kept out of ps); "
                  "or set EAGLE2_API_KEY. Only one of the three");
  cmd->add_option("--allowed-host", o.allowed_hosts,
                  "A Host name the server answers besides its own address (repeatable; '*': "
                  "any). Others get 403 (DNS-rebinding defence)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->check(CLI::Validator(
          [](std::string& v) {
            return v.empty() || v.find_first_of(" \t/") != std::string::npos
                       ? std::string("expected a host name such as example.com")
                       : std::string();
          },
          "NAME"));
  cmd->add_option("--allowed-origins", o.allowed_origins,
                  "Comma-separated origins (http://host:port) whose pages may call the API "
                  "cross-origin (CORS). Default: none; another site's Origin gets 403")
      ->delimiter(',')
      ->check(CLI::Validator(
          [](std::string& v) {
            const size_t scheme = v.find("://");
            return (v.starts_with("http://") || v.starts_with("https://")) &&
                           scheme + 3 < v.size() && v.find('/', scheme + 3) == std::string::npos
                       ? std::string()
                       : std::string("expected an origin such as http://example.com:3000");
          },
          "ORIGIN"));
  cmd->add_option("--chat-template", o.chat_template,
                  "Chat template file (Jinja) for /v1/chat/completions (default: the model "
                  "folder's tokenizer_config.json template, if any)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--max-body", o.max_body,
                  "Largest request body in bytes; larger gets 413 (default: 1048576)")
      ->check(integer_in(1024, int64_t{1} << 30));
  cmd->add_option("--drain-timeout", o.drain_timeout,
                  "On SIGTERM or Ctrl-C, seconds admitted requests may still decode; then they "
                  "end with their text so far. A second signal exits at once (default: 30)")
      ->check(integer_in(0, 86400));
  cmd->add_option("--max-connections", o.max_connections,
                  "Connections served at once; one more gets 503 at once (its /health is "
                  "answered) (default: 0 = --parallel + --max-queue + 4)")
      ->check(integer_in(0, 65536));
  cmd->add_option("--read-timeout", o.read_timeout,
                  "Seconds a request's head and body may take to arrive; then the connection "
                  "closes (default: 10)")
      ->check(integer_in(1, 3600));
  cmd->add_option("--keep-alive-timeout", o.keep_alive_timeout,
                  "Seconds a connection may idle between requests (default: 5)")
      ->check(integer_in(1, 3600));
  cmd->add_option("--keep-alive-max", o.keep_alive_max,
                  "Requests served on one connection before it closes (default: 100)")
      ->check(integer_in(1, 1000000));
  cmd->add_option("--stall-timeout", o.stall_timeout,
                  "/health answers 503 when the scheduler has work and has made no step for this "
                  "many seconds (default: 60)")
      ->check(integer_in(1, 86400));
  cmd->add_option_function<std::vector<std::string>>(
         "--drafter",
         [f](const std::vector<std::string>& all) {
           for (const std::string& v : all)
             f->options.drafters.emplace_back(v.substr(0, v.find('=')), v.substr(v.find('=') + 1));
         },
         "A drafter requests may name (repeatable): NAME=SPEC, e.g. draft=sps:models/draft:4; "
         "requests send \"speculative\": \"NAME\". Drafters that load weights (sps:, medusa:, "
         "hydra:, ...@HEAD_DIR) are served only this way")
      ->check(CLI::Validator(
          [](std::string& v) {
            const size_t eq = v.find('=');
            return eq == std::string::npos || eq == 0 || eq + 1 == v.size()
                       ? std::string("expected NAME=SPEC")
                       : std::string();
          },
          "NAME=SPEC"));
  cmd->add_option("--max-tokens", o.max_tokens,
                  "Largest max_tokens a request may ask; more gets 400 (default: 0 = --ctx)")
      ->check(integer_in(0, int64_t{1} << 30));
  cmd->add_option("--max-kv-memory", o.max_kv_memory,
                  "KV memory all requests together may use, in bytes (suffixes K, M, G: 1024s): "
                  "the target's KV pool plus the drafters' caches. A request is admitted only "
                  "when its worst case fits (else it waits; one that never could gets 400). "
                  "Default: --parallel whole contexts and their default drafters")
      ->transform(CLI::AsSizeValue(false))
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 50));
  cmd->add_option("--max-draft-tokens", o.max_draft_tokens,
                  "Largest draft a request's \"speculative\" may ask, in tokens per cycle "
                  "(default: 128)")
      ->check(integer_in(1, 4096));
  cmd->add_option("--max-draft-depth", o.max_draft_depth,
                  "Most draft levels a request's \"speculative\" may ask (default: 32)")
      ->check(integer_in(1, 1024));
  cmd->add_option("--max-draft-top-k", o.max_draft_top_k,
                  "Largest dynamic-tree top-k a request's \"speculative\" may ask (default: 16)")
      ->check(integer_in(1, 1024));
  cmd->add_option("--suffix-scope", o.suffix_scope,
                  "What suffix drafters draft from: request (its own prompt and output) or server "
                  "(also the recent outputs of all requests: faster on repeated work, and the "
                  "timing of a response then depends on what others generated; default: request)")
      ->check(CLI::IsMember({"request", "server"}));
  cmd->add_option("--suffix-memory", o.suffix_memory,
                  "Bytes of the server-wide suffix index (suffixes K, M, G: 1024s); the oldest "
                  "outputs are evicted first (default: 64M)")
      ->transform(CLI::AsSizeValue(false))
      ->check(CLI::Range(int64_t{1} << 20, int64_t{1} << 36));
  return {cmd, [f] { return run_serve(*f); }};
}

}  // namespace eagle2::cli

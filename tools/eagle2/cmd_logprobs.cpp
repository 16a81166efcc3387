// eagle2 logprobs: the model's top-k next-token log-probabilities after each prefix of a token
// path, one JSON line per position, for comparing with another implementation (llama.cpp's
// n_probs: scripts/llama-logprob-parity.py) along the same path. --greedy N first extends the
// path with N tokens of plain greedy decoding (what `generate --temp 0` emits).
#include <cmath>
#include <cstdio>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "commands.h"
#include "eagle2/error.h"
#include "eagle2/generate.h"
#include "eagle2/logprobs.h"
#include "eagle2/model.h"
#include "eagle2/parse_number.h"
#include "eagle2/runtime.h"
#include "eagle2/tokenizer.h"
#include "flag_checks.h"

namespace eagle2::cli {

using namespace eagle2::api;

namespace {

struct LogprobsFlags {
  std::string model, prompt, tokens;
  bool prompt_given = false, tokens_given = false, no_bos = false;
  int32_t top = 5;
  int64_t greedy = 0;
  int threads = 0;
};

std::vector<int32_t> parse_tokens(const std::string& text) {
  std::vector<int32_t> ids;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    const std::optional<int32_t> id = parse_number<int32_t>(item);
    if (!id || *id < 0) fail("--tokens: '", item, "' is not a token id");
    ids.push_back(*id);
  }
  if (ids.empty()) fail("--tokens: no token ids given");
  return ids;
}

// Shortest text that reads back to the same double: the comparison is not limited by printing.
std::string number(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", x);
  return buf;
}

int run_logprobs(const LogprobsFlags& f) {
  if (f.prompt_given == f.tokens_given)
    fail("logprobs: give exactly one of -p TEXT and --tokens IDS");
  Model model = Model::load(f.model);
  std::vector<int32_t> path;
  if (f.tokens_given) {
    path = parse_tokens(f.tokens);
  } else {
    const Tokenizer tok = Tokenizer::open(f.model);
    path = tok.encode(f.prompt, !f.no_bos && tok.adds_bos());
    if (path.empty()) fail("-p: the prompt has no tokens");
  }
  Threads threads(resolve_threads(f.threads));
  if (f.greedy > 0) {
    const auto prompt_tokens = static_cast<int64_t>(path.size());
    if (prompt_tokens + f.greedy > model.config().max_position_embeddings)
      fail("--greedy: the path would have ", prompt_tokens + f.greedy,
           " tokens but the model's context is ", model.config().max_position_embeddings);
    KvCache kv(model, prompt_tokens + f.greedy);
    GenerateOptions options;
    options.max_new_tokens = f.greedy;
    options.stop_at_eos = false;  // the path is compared position by position: it runs on
    const std::vector<int32_t> prompt = path;
    generate_plain(model, kv, prompt, options, threads, [&](int32_t t) {
      path.push_back(t);
      return true;
    });
  }
  const std::vector<PositionLogprobs> rows = path_logprobs(model, path, f.top, threads);
  for (size_t i = 0; i < rows.size(); ++i) {
    std::string line =
        "{\"position\":" + std::to_string(i) + ",\"token\":" + std::to_string(path[i]);
    if (i + 1 < path.size())
      line += ",\"next\":" + std::to_string(path[i + 1]) +
              ",\"next_logprob\":" + number(rows[i].next_logprob);
    line += ",\"top\":[";
    for (size_t k = 0; k < rows[i].top.size(); ++k)
      line += (k ? ",[" : "[") + std::to_string(rows[i].top[k].token) + "," +
              number(rows[i].top[k].logprob) + "]";
    line += "]}\n";
    std::fputs(line.c_str(), stdout);
  }
  return 0;
}

}  // namespace

Command add_logprobs(CLI::App& app) {
  auto f = std::make_shared<LogprobsFlags>();
  CLI::App* cmd = app.add_subcommand(
      "logprobs",
      "Print the top-k next-token log-probabilities at each position of a token path (JSON lines)");
  cmd->add_option("-m,--model", f->model, "Model folder or FILE.gguf")->required();
  cmd->add_option_function<std::string>(
      "-p,--prompt", [f](const std::string& s) { f->prompt = s, f->prompt_given = true; },
      "Text whose tokens start the path (BOS as the tokenizer asks)");
  cmd->add_option_function<std::string>(
      "--tokens", [f](const std::string& s) { f->tokens = s, f->tokens_given = true; },
      "Comma-separated token ids of the path (used as given: no BOS is added)");
  cmd->add_flag("--no-bos", f->no_bos, "With -p: do not add the BOS token the tokenizer asks for");
  cmd->add_option("--top", f->top, "Log-probabilities per position, most likely first (default 5)")
      ->check(integer_in(1, 1000));
  cmd->add_option("--greedy", f->greedy,
                  "First extend the path with N tokens of greedy decoding (EOS does not stop it)")
      ->check(integer_in(0, int64_t{1} << 20));
  add_threads_flag(*cmd, f->threads);
  return {cmd, [f] { return run_logprobs(*f); }};
}

}  // namespace eagle2::cli

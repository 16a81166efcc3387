// eagle2 tokenize: text -> token ids (comma-separated) with a model's tokenizer, or ids -> text
// with --decode; for checking what a prompt becomes and comparing with other implementations.
#include <cstdio>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "commands.h"
#include "eagle2/error.h"
#include "eagle2/parse_number.h"
#include "eagle2/tokenizer.h"

namespace eagle2::cli {

using namespace eagle2::api;

namespace {

struct TokenizeFlags {
  std::string model, prompt, decode;
  bool prompt_given = false, decode_given = false, no_bos = false;
};

std::vector<int32_t> parse_ids(const std::string& text, int32_t vocab) {
  std::vector<int32_t> ids;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    const std::optional<int32_t> id = parse_number<int32_t>(item);
    if (!id || *id < 0 || *id >= vocab)
      fail("--decode: '", item, "' is not a token id in [0, ", vocab, ")");
    ids.push_back(*id);
  }
  return ids;
}

int run_tokenize(const TokenizeFlags& f) {
  if (f.prompt_given == f.decode_given)
    fail("tokenize: give exactly one of -p TEXT and --decode IDS");
  const Tokenizer tok = Tokenizer::open(f.model);
  if (f.decode_given) {
    // The text exactly, without a newline: what generate would print for these ids.
    const std::string text = tok.decode(parse_ids(f.decode, tok.vocab_size()));
    std::fwrite(text.data(), 1, text.size(), stdout);
    return 0;
  }
  const std::vector<int32_t> ids = tok.encode(f.prompt, !f.no_bos && tok.adds_bos());
  std::string line;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i) line += ',';
    line += std::to_string(ids[i]);
  }
  std::printf("%s\n", line.c_str());
  return 0;
}

}  // namespace

Command add_tokenize(CLI::App& app) {
  auto f = std::make_shared<TokenizeFlags>();
  CLI::App* cmd = app.add_subcommand(
      "tokenize", "Print the token ids of a text (or the text of ids) with a model's tokenizer");
  cmd->add_option("-m,--model", f->model,
                  "Model folder (tokenizer.json wins over tokenizer.model), FILE.gguf, "
                  "tokenizer.json or tokenizer.model")
      ->required();
  cmd->add_option_function<std::string>(
      "-p,--prompt", [f](const std::string& s) { f->prompt = s, f->prompt_given = true; },
      "Text to tokenize (UTF-8)");
  cmd->add_option_function<std::string>(
      "--decode", [f](const std::string& s) { f->decode = s, f->decode_given = true; },
      "Comma-separated token ids to turn back into text (printed without a newline)");
  cmd->add_flag("--no-bos", f->no_bos, "Do not add the BOS token the tokenizer config asks for");
  return {cmd, [f] { return run_tokenize(*f); }};
}

}  // namespace eagle2::cli

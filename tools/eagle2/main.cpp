// eagle2: command-line entry point. Every user error ends as exactly one "error: ..." line on
// stderr: exit code 2 for flag syntax (unknown flag, missing or malformed value, value out of a
// flag's range, missing required flag, unknown command), 1 for everything else; nothing aborts.
#include <cstdio>
#include <cstring>
#include <exception>
#include <new>
#include <string>
#include <vector>

#include "commands.h"
#include "eagle2/error.h"

namespace {

using eagle2::cli::Command;

// Prints "error: <message>" as one line: a message that carries a newline (a library's text, a
// quoted file line) must not break the one-line contract.
void print_error(const std::string& message) {
  std::string line = message;
  for (char& c : line)
    if (c == '\n' || c == '\r') c = ' ';
  std::fflush(stdout);
  std::fprintf(stderr, "error: %s\n", line.c_str());
}

std::string command_names(const std::vector<Command>& commands) {
  std::string names;
  for (const Command& c : commands) names += (names.empty() ? "" : ", ") + c.app->get_name();
  return names;
}

// CLI11's message for a flag error, rewritten as "<flag>: <reason>". CLI11 already words most of
// them that way ("--threads: ...", "--prompt: 1 required TEXT missing"); the rest name the flag
// elsewhere in the sentence.
std::string flag_error_text(const CLI::ParseError& e, const std::vector<Command>& commands) {
  // By type: get_name() is not the class for every error (ExtrasError puts the command there).
  const std::string msg = e.what();
  std::string help = "eagle2 --help";
  for (const Command& c : commands)
    if (c.app->parsed()) help = "eagle2 " + c.app->get_name() + " --help";

  if (dynamic_cast<const CLI::ExtrasError*>(&e)) {
    // "The following argument(s) was/were not expected: ARG [ARG...]"
    const size_t colon = msg.find(": ");
    std::string arg = colon == std::string::npos ? msg : msg.substr(colon + 2);
    arg = arg.substr(0, arg.find(' '));
    if (!arg.empty() && arg[0] == '-') return arg + ": unknown flag (" + help + " lists them)";
    return arg + ": unexpected argument (" + help + " lists the flags)";
  }
  if (dynamic_cast<const CLI::RequiredError*>(&e)) {
    if (msg == "A subcommand is required")
      return "COMMAND: missing; give one of " + command_names(commands);
    const std::string suffix = " is required";
    if (msg.size() > suffix.size() && msg.ends_with(suffix))
      return msg.substr(0, msg.size() - suffix.size()) + ": is required";
  }
  if (dynamic_cast<const CLI::ConversionError*>(&e)) {
    // "Could not convert: --seed = abc"
    const std::string prefix = "Could not convert: ";
    const size_t eq = msg.find(" = ");
    if (msg.starts_with(prefix) && eq != std::string::npos)
      return msg.substr(prefix.size(), eq - prefix.size()) + ": '" + msg.substr(eq + 3) +
             "' is not a valid value";
  }
  return msg;
}

// An unknown first word is a mistyped command: CLI11 would only say that a subcommand is required.
bool is_unknown_command(int argc, char** argv, const std::vector<Command>& commands) {
  if (argc < 2 || argv[1][0] == '-') return false;
  for (const Command& c : commands)
    if (c.app->check_name(argv[1])) return false;
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"eagle2: LLaMA-family inference with EAGLE-2 speculative decoding", "eagle2"};
  app.require_subcommand(1);
  using namespace eagle2::cli;
  const std::vector<Command> commands = {
      add_demo(app),       add_generate(app),    add_info(app),          add_make_random(app),
      add_quantize(app),   add_cost_curve(app),  add_bench(app),         add_train_lm(app),
      add_train_head(app), add_draft_vocab(app), add_chat_template(app), add_tokenize(app),
      add_serve(app),      add_bench_serve(app), add_perplexity(app),    add_logprobs(app),
      add_acceptance(app)};

  if (is_unknown_command(argc, argv, commands)) {
    print_error(std::string(argv[1]) + ": unknown command; give one of " + command_names(commands));
    return 2;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);  // --help: the help text on stdout, exit 0
  } catch (const CLI::ParseError& e) {
    print_error(flag_error_text(e, commands));
    return 2;
  }
  try {
    for (const Command& c : commands)
      if (c.app->parsed()) return c.run();
    return 2;
  } catch (const eagle2::Error& e) {
    print_error(e.what());
  } catch (const std::bad_alloc&) {
    print_error("out of memory (try a smaller --ctx)");
  } catch (const std::exception& e) {
    print_error(e.what());
  }
  return 1;
}

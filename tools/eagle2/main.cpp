// eagle2: command-line entry point. Every user error ends as one "error: ..." line and exit code 1
// (2 for bad flags); nothing aborts.
#include <cstdio>
#include <exception>
#include <vector>
#include <new>

#include "commands.h"
#include "core/error.h"

int main(int argc, char** argv) {
  CLI::App app{"eagle2: LLaMA-family inference with EAGLE-2 speculative decoding", "eagle2"};
  app.require_subcommand(1);
  using namespace eagle2::cli;
  const std::vector<Command> commands = {add_demo(app), add_generate(app), add_info(app),
                                         add_make_random(app),
                                         add_cost_curve(app), add_bench(app), add_train_lm(app),
                                         add_train_head(app), add_draft_vocab(app)};

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  try {
    for (const Command& c : commands)
      if (c.app->parsed()) return c.run();
    return 2;
  } catch (const eagle2::Error& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "error: %s\n", e.what());
  } catch (const std::bad_alloc&) {
    std::fflush(stdout);
    std::fprintf(stderr, "error: out of memory (try a smaller --ctx)\n");
  } catch (const std::exception& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "error: %s\n", e.what());
  }
  return 1;
}

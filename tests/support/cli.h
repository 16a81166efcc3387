// Runs the eagle2 executable as a user would (through the shell), for the command-line tests.
#pragma once

#include <string>

namespace eagle2::test {

struct CliRun {
  int code = -1;    // the exit code; -1 if the process did not exit normally
  std::string out;  // stdout and stderr together
};

// `EAGLE2_CLI_PATH args 2>&1`; args are shell words (quote them yourself).
CliRun run_cli(const std::string& args);

}  // namespace eagle2::test

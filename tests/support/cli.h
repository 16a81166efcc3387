// Runs the eagle2 executable as a user would (through the shell), for the command-line tests.
// Every run is bounded by a generous timeout so that a hang fails the test instead of stalling the
// suite (a hang detector, not a speed claim).
#pragma once

#include <string>

namespace eagle2::test {

struct CliRun {
  int code = -1;           // the exit code; -1 if the process did not exit normally
  std::string out;         // stdout and stderr together (run_cli), or stdout alone (run_cli_split)
  std::string err;         // stderr alone (run_cli_split only)
  bool timed_out = false;  // killed after the timeout
};

constexpr int kCliTimeoutSeconds = 120;
// For the few runs that do a minute or more of real work (training a head on a real corpus): on a
// 2-core AVX2 machine with the other test job beside it they came within reach of 120 s.
constexpr int kLongCliTimeoutSeconds = 900;

// The bundled model and head (models/, see models/README.md): every checkout has them.
inline const std::string kBundledModel = std::string(EAGLE2_SOURCE_DIR) + "/models/code-lm";
inline const std::string kBundledHead = std::string(EAGLE2_SOURCE_DIR) + "/models/code-lm-eagle";

// The repository's scripts/ folder, with its final slash.
inline const std::string kScriptsDir = std::string(EAGLE2_SOURCE_DIR) + "/scripts/";

// True where `python3` runs (the tests of the Python scripts skip without it).
bool have_python();

// Any shell command line (quote its words yourself), under the same timeout; stdout only.
CliRun run_shell(const std::string& command_line, int timeout_seconds = kCliTimeoutSeconds);

// `EAGLE2_CLI_PATH args 2>&1`; args are shell words (quote them yourself).
CliRun run_cli(const std::string& args, int timeout_seconds = kCliTimeoutSeconds);

// As run_cli, with stdout in `out` and stderr in `err`.
CliRun run_cli_split(const std::string& args, int timeout_seconds = kCliTimeoutSeconds);

// True when `run` ended as the hostile-input contract asks: exit code 1 and exactly one stderr
// line, which starts with "error: " (for run_cli_split runs). Explains itself on failure.
bool is_one_clean_error(const CliRun& run, std::string* why);

// What `eagle2 generate -m model_dir -p prompt -n n` prints after the prompt (without the final
// newline): plain greedy decoding, the text a server's answer is compared with. A failed run fails
// the calling test and returns "<none>".
std::string generated_text(const std::string& model_dir, const std::string& prompt, int n);

}  // namespace eagle2::test

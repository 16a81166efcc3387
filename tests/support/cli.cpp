#include "support/cli.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>

namespace eagle2::test {

CliRun run_shell(const std::string& command_line, int timeout_seconds) {
  // timeout(1) sends TERM after the limit and KILL 5 s later; it exits 124 (or 137) then.
  const std::string cmd = "timeout -k 5 " + std::to_string(timeout_seconds) + " " + command_line;
  CliRun r;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) {
    r.out = "popen failed";
    return r;
  }
  std::array<char, 4096> buf{};
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  const int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.timed_out = r.code == 124 || r.code == 137;
  // timeout(1) reports a child killed by a signal as 128 + signal; keep -1 for "did not exit".
  if (r.code > 128 && !r.timed_out) r.code = -1;
  return r;
}

CliRun run_cli(const std::string& args, int timeout_seconds) {
  return run_shell(std::string(EAGLE2_CLI_PATH) + " " + args + " 2>&1", timeout_seconds);
}

CliRun run_cli_split(const std::string& args, int timeout_seconds) {
  char path[] = "/tmp/eagle2-cli-stderr-XXXXXX";
  const int fd = mkstemp(path);
  if (fd < 0) {
    CliRun r;
    r.out = "mkstemp failed";
    return r;
  }
  close(fd);
  CliRun r = run_shell(std::string(EAGLE2_CLI_PATH) + " " + args + " 2>" + path, timeout_seconds);
  std::ifstream in(path, std::ios::binary);
  r.err.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  std::remove(path);
  return r;
}

bool is_one_clean_error(const CliRun& run, std::string* why) {
  std::string reason;
  if (run.timed_out)
    reason = "timed out (a hang)";
  else if (run.code != 1)
    reason = "exit code " + std::to_string(run.code) + ", expected 1";
  else if (run.err.rfind("error: ", 0) != 0)
    reason = "stderr does not start with 'error: '";
  else if (run.err.find('\n') + 1 != run.err.size())
    reason = "stderr is not exactly one line";
  if (why) *why = reason + "\nstderr: " + run.err;
  return reason.empty();
}

std::string generated_text(const std::string& model_dir, const std::string& prompt, int n) {
  const CliRun run =
      run_cli_split("generate -m '" + model_dir + "' -p '" + prompt + "' -n " + std::to_string(n));
  EXPECT_EQ(run.code, 0) << run.err;
  if (!run.out.starts_with(prompt) || run.out.size() < prompt.size() + 1) return "<none>";
  return run.out.substr(prompt.size(), run.out.size() - prompt.size() - 1);
}

bool have_python() {
  return run_shell("python3 -c pass >/dev/null 2>&1").code == 0;
}

}  // namespace eagle2::test

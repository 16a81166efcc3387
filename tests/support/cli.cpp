#include "support/cli.h"

#include <array>
#include <cstdio>
#include <sys/wait.h>

namespace eagle2::test {

CliRun run_cli(const std::string& args) {
  const std::string cmd = std::string(EAGLE2_CLI_PATH) + " " + args + " 2>&1";
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
  return r;
}

}  // namespace eagle2::test

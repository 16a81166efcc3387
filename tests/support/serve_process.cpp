#include "support/serve_process.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <spawn.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <stdexcept>
#include <string>

extern char** environ;

namespace eagle2::test {

using namespace std::chrono_literals;

ServeProcess::ServeProcess(const std::string& args, const std::string& env) {
  int fds[2];
  if (pipe(fds) != 0) throw std::runtime_error("pipe");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 2);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addclose(&actions, fds[0]);
  // exec: the pid is the server's own, so that signals reach it and not a shell.
  // (env execs the binary in turn: the pid stays the server's.)
  const std::string command = std::string("exec ") + (env.empty() ? "" : "env " + env + " ") +
                              EAGLE2_CLI_PATH + " serve --port 0 -t 1 " + args;
  const char* argv[] = {"/bin/sh", "-c", command.c_str(), nullptr};
  const int rc =
      posix_spawn(&pid_, "/bin/sh", &actions, nullptr, const_cast<char**>(argv), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  if (rc != 0) throw std::runtime_error("posix_spawn");
  reader_ = std::thread([this, fd = fds[0]] {
    char buf[4096];
    for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;) {
      std::lock_guard<std::mutex> lock(mutex_);
      err_.append(buf, static_cast<size_t>(n));
      changed_.notify_all();
    }
    close(fd);
    std::lock_guard<std::mutex> lock(mutex_);
    eof_ = true;
    changed_.notify_all();
  });
  std::unique_lock<std::mutex> lock(mutex_);
  const std::string marker = "listening on http://127.0.0.1:";
  // Only a hang detector: the server measures its verify cost before it listens, which under
  // the sanitizers on a CPU without AVX-512 took 163 s (2 cores, another test running).
  changed_.wait_for(lock, 600s, [&] { return eof_ || err_.find(marker) != std::string::npos; });
  const size_t at = err_.find(marker);
  if (at == std::string::npos) {
    ADD_FAILURE() << "the server did not start: " << err_;
    return;
  }
  port_ = std::stoi(err_.substr(at + marker.size()));
}

int64_t ServeProcess::rss_bytes() const {
  std::ifstream in("/proc/" + std::to_string(pid_) + "/status");
  for (std::string line; std::getline(in, line);)
    if (line.starts_with("VmRSS:")) return std::stoll(line.substr(6)) * 1024;  // "... kB"
  return -1;
}

}  // namespace eagle2::test

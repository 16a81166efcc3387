// A program run beside us (bench-serve's llama-server reference): started with its arguments,
// its output sent to a file, stopped with SIGTERM (then SIGKILL if it lingers). Never a shell.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace eagle2::server {

class ChildProcess {
 public:
  // Error when the program cannot be started. stdout and stderr go to log_path (appended).
  ChildProcess(const std::string& program, const std::vector<std::string>& args,
               const std::string& log_path);
  ~ChildProcess();  // stop()
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  bool running();
  // SIGTERM, up to `grace_seconds` to exit, then SIGKILL; returns the exit status (-1: killed).
  int stop(double grace_seconds = 10);

 private:
  pid_t pid_ = -1;
  int status_ = -1;
};

}  // namespace eagle2::server

// `eagle2 serve` as a process for a test (the real binary, so that a crash is the process's and
// the test sees it as an exit). Shared by tests/cli/test_serve.cpp and the hostile suite.
#pragma once

#include <httplib.h>
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

namespace eagle2::test {

// `eagle2 serve ARGS` on an ephemeral port, its stderr collected; the constructor returns once the
// server printed the line with its port (or failed the test). env: `NAME=VALUE ...` added to its
// environment (words for the shell, quoted as needed).
class ServeProcess {
 public:
  explicit ServeProcess(const std::string& args, const std::string& env = "");
  ~ServeProcess() {
    if (!exited_) {
      kill(pid_, SIGKILL);
      wait();
    }
    reader_.join();
  }
  int port() const { return port_; }
  pid_t pid() const { return pid_; }
  // The process's resident memory (VmRSS of /proc/PID/status) in bytes; -1 if unreadable.
  int64_t rss_bytes() const;
  void signal(int sig) const { kill(pid_, sig); }
  // Whether the process still runs (it has not exited or died of a signal), without waiting.
  bool alive() {
    if (exited_) return false;
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) != pid_) return true;
    exited_ = true;
    exit_status_ = status;
    return false;
  }
  // The raw wait status once alive() saw the process end (WIFSIGNALED: a crash).
  int exit_status() const { return exit_status_; }
  int wait() {
    if (!exited_) {
      waitpid(pid_, &exit_status_, 0);
      exited_ = true;
    }
    return WIFEXITED(exit_status_) ? WEXITSTATUS(exit_status_) : -1;
  }
  std::string err() {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait_for(lock, std::chrono::seconds(30), [&] { return eof_; });
    return err_;
  }
  httplib::Client client() const {
    httplib::Client c("127.0.0.1", port_);
    c.set_read_timeout(120);
    return c;
  }

 private:
  pid_t pid_ = -1;
  int port_ = 0;
  bool exited_ = false;
  int exit_status_ = 0;
  std::thread reader_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::string err_;
  bool eof_ = false;
};

}  // namespace eagle2::test

// How a server is told to stop: a self-pipe. Anything may write to it (Server::stop from any
// thread, or a SIGINT/SIGTERM handler: write(2) is async-signal-safe, where the shutdown itself,
// which takes locks and joins threads, is not), and one watcher thread blocks reading it.
#pragma once

namespace eagle2::server {

class StopPipe {
 public:
  StopPipe();  // Error if the system refuses a pipe
  ~StopPipe();
  StopPipe(const StopPipe&) = delete;
  StopPipe& operator=(const StopPipe&) = delete;

  void notify() const noexcept;  // async-signal-safe; never blocks (the write end is non-blocking)
  void wait() const;             // returns once notify() has been called (before or since)
  int write_fd() const { return fds_[1]; }

 private:
  int fds_[2] = {-1, -1};
};

// While alive, SIGINT and SIGTERM notify `pipe`, and SIGPIPE is ignored (a client that hangs up
// must not kill the server); the previous dispositions return at destruction. One at a time.
// A second SIGINT or SIGTERM ends the process at once (_exit(128 + the signal)), drain or not.
class SignalStop {
 public:
  explicit SignalStop(const StopPipe& pipe);
  ~SignalStop();
  SignalStop(const SignalStop&) = delete;
  SignalStop& operator=(const SignalStop&) = delete;
};

}  // namespace eagle2::server

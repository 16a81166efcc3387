#include "server/stop_signal.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>

#include "eagle2/error.h"

namespace eagle2::server {

namespace {

// The pipe the handler writes to: a lock-free atomic, which a signal handler may read.
std::atomic<int> g_signal_fd{-1};
static_assert(std::atomic<int>::is_always_lock_free);

struct sigaction g_old_int, g_old_term, g_old_pipe;

// Signals received since SignalStop began: the first stops the server gracefully, a second
// (an operator who will not wait for the drain) ends the process at once.
std::atomic<int> g_signals{0};
static_assert(std::atomic<int>::is_always_lock_free);

extern "C" void on_stop_signal(int sig) {
  if (g_signals.fetch_add(1) >= 1) _exit(128 + sig);  // async-signal-safe, as the shell reports
  const int saved = errno;  // the interrupted code may be about to read errno
  const int fd = g_signal_fd.load();
  if (fd >= 0) {
    const char byte = 1;
    [[maybe_unused]] const ssize_t n = write(fd, &byte, 1);
  }
  errno = saved;
}

}  // namespace

StopPipe::StopPipe() {
  if (pipe2(fds_, O_CLOEXEC) != 0) fail("cannot create a pipe: ", std::strerror(errno));
  fcntl(fds_[1], F_SETFL, fcntl(fds_[1], F_GETFL) | O_NONBLOCK);
}

StopPipe::~StopPipe() {
  close(fds_[0]);
  close(fds_[1]);
}

void StopPipe::notify() const noexcept {
  const char byte = 1;
  // A full pipe (EAGAIN) already holds a wake-up: nothing is lost by dropping this one.
  [[maybe_unused]] const ssize_t n = write(fds_[1], &byte, 1);
}

void StopPipe::wait() const {
  char byte;
  while (read(fds_[0], &byte, 1) < 0 && errno == EINTR) {
  }
}

SignalStop::SignalStop(const StopPipe& pipe) {
  g_signals = 0;
  g_signal_fd = pipe.write_fd();
  struct sigaction sa;
  std::memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction(SIGINT, &sa, &g_old_int);
  sigaction(SIGTERM, &sa, &g_old_term);
  struct sigaction ignore;
  std::memset(&ignore, 0, sizeof ignore);
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  sigaction(SIGPIPE, &ignore, &g_old_pipe);
}

SignalStop::~SignalStop() {
  sigaction(SIGINT, &g_old_int, nullptr);
  sigaction(SIGTERM, &g_old_term, nullptr);
  sigaction(SIGPIPE, &g_old_pipe, nullptr);
  g_signal_fd = -1;
}

}  // namespace eagle2::server

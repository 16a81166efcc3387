// What the HTTP handlers share: the served model, the scheduler that runs it, the metrics, and
// whether the server is shutting down. Built once by Server; the handlers only read it (the
// scheduler and the metrics are thread-safe).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>

#include "server/metrics.h"
#include "server/scheduler.h"
#include "server/served_model.h"
#include "server/server_options.h"

namespace eagle2::server {

struct ServerState {
  explicit ServerState(const ServerOptions& o)
      : options(o),
        model(o),
        scheduler(model.model(), model.head(), model.threads(), model.cost(),
                  model.scheduler_options(o), metrics) {}

  const ServerOptions options;
  ServedModel model;
  Metrics metrics;  // before the scheduler, which records into it
  Scheduler scheduler;
  std::atomic<bool> stopping{false};  // /health answers 503 from the first signal on
  int64_t created = 0;                // Unix seconds of the start: /v1/models' "created"

  // Completion responses not yet completely sent. A shutdown waits for them before it closes
  // the listening socket, because httplib stops calling a streaming response's provider once the
  // socket is closed: the last chunks of a request that decoded to its end would be lost.
  // Held from a handler's start until its response object is destroyed.
  std::shared_ptr<void> response_started() {
    std::lock_guard<std::mutex> lock(responses_mutex_);
    ++responses_;
    return std::shared_ptr<void>(static_cast<void*>(this), [this](void*) {
      std::lock_guard<std::mutex> l(responses_mutex_);
      if (--responses_ == 0) responses_done_.notify_all();
    });
  }
  // Returns once no response is in flight, or after `limit` (a client that stopped reading is
  // dropped by httplib's write timeout well before).
  void wait_for_responses(std::chrono::seconds limit) {
    std::unique_lock<std::mutex> lock(responses_mutex_);
    responses_done_.wait_for(lock, limit, [this] { return responses_ == 0; });
  }

 private:
  std::mutex responses_mutex_;
  std::condition_variable responses_done_;
  int64_t responses_ = 0;
};

}  // namespace eagle2::server

// The server's scheduler: one thread owns the engine (api::Engine) and runs its step loop; HTTP
// threads hand it requests and read each request's tokens from a RequestStream as they are
// committed. Continuous batching: a queued request is admitted at the first step after a slot
// frees (at most `parallel` sequences decode at once), and a cancelled one leaves at the next
// step. Data flows one way: the HTTP side pushes requests and cancellations in and pulls tokens
// out; the scheduler never calls back into it.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "eagle2/drafter.h"
#include "eagle2/engine.h"
#include "eagle2/generate.h"
#include "eagle2/head.h"
#include "eagle2/model.h"
#include "eagle2/runtime.h"
#include "server/kv_budget.h"
#include "server/metrics.h"

namespace eagle2::server {

struct GenerationRequest {
  std::vector<int32_t> prompt;  // tokenized (BOS included when the tokenizer adds one)
  api::GenerateOptions options;
  api::DrafterSpec spec;  // parse_drafter_spec of the request's "speculative" or the default
  // The most KV memory it can use (kv_budget.h). Zero: not accounted (a whole context's blocks
  // are then assumed, and no drafter bytes).
  KvNeed kv;
};

// One committed token and whether it was an accepted draft token (false: the target's own token,
// i.e. a cycle's bonus or a plain-decoding token).
struct TokenPiece {
  int32_t token = 0;
  bool drafted = false;
  // Where an accepted draft token came from, where that is known: "suffix" (a suffix drafter's,
  // or a hybrid tree's suffix node), "head" (a hybrid tree's head node), "both" (a hybrid node
  // both drafted); empty otherwise (the target's own token, other drafters, a masked request).
  const char* source = "";
  // With GenerateOptions::logprobs >= 0: the token's log-prob under the target and the most
  // likely tokens where it was chosen (Engine::logprobs).
  api::TokenLogprobs logprobs;
};

enum class FinishReason {
  Running,
  Length,     // max_tokens or the end of the context
  Eos,        // the model's end-of-sequence token
  Cancelled,  // cancel(): a stop string, a disconnected client, shutdown before admission
  Error,      // the engine refused or failed the request: error() says why
};

// A request's side of the scheduler: the HTTP thread reads tokens as they come and may cancel.
// Thread-safe.
class RequestStream {
 public:
  // Waits until there are tokens not yet taken or the request has ended, at most `timeout`;
  // appends the new tokens to `out`. Returns true once the request has ended and every token has
  // been taken (finish_reason() is then final).
  bool take(std::vector<TokenPiece>& out, std::chrono::milliseconds timeout);
  // Asks the scheduler to drop the request (idempotent; a no-op once it has ended). Its KV memory
  // returns to the pool at the scheduler's next step; it ends with FinishReason::Cancelled.
  // complete: the client has what it asked for (a stop string was reached), so the request counts
  // as "ok" in the metrics rather than "cancelled".
  void cancel(bool complete = false);
  bool cancelled() const;
  // Whether the request has left the queue (its prefill has started or it has ended).
  bool admitted() const;

  FinishReason finish_reason() const;
  std::string error() const;  // FinishReason::Error: the engine's message
  // FinishReason::Error from a failed step (a server fault, HTTP 500) rather than a request the
  // engine refused (400); error() is then a fixed message.
  bool internal_error() const;
  api::Stats stats() const;  // final once ended (prompt/new tokens, tau, target forwards, ...)

 private:
  friend class Scheduler;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<TokenPiece> pending_;
  FinishReason reason_ = FinishReason::Running;
  std::string error_;
  api::Stats stats_;
  bool cancel_requested_ = false, cancel_complete_ = false, admitted_ = false;
  bool internal_error_ = false;
};

struct SchedulerOptions {
  int parallel = 4;        // sequences decoding at once (slots)
  int max_queue = 64;      // requests waiting for a slot; more are refused (HTTP 503)
  int64_t context = 2048;  // each sequence's context (prompt included), as generate's --ctx
  std::function<void()> before_step = {};  // tests only: called before each engine step
  // The target's shared KV pool, in blocks of api::Engine::kv_tokens_for(1, 1) tokens; 0 =
  // `parallel` whole contexts (then a request never waits for memory).
  int64_t kv_pool_blocks = 0;
  // Bytes the pool and the admitted requests' drafter caches may take together (--max-kv-memory);
  // 0 = no bound on the drafter caches. A request is admitted only when its KvNeed fits what the
  // admitted ones left of both; one that could never fit is refused at submit().
  int64_t kv_budget_bytes = 0;
  int64_t kv_block_bytes = 0;  // bytes of one pool block (with kv_budget_bytes)
  // --suffix-scope server: bytes of the server-wide suffix index (api::Engine::share_suffix_index);
  // 0 (--suffix-scope request) = none.
  int64_t suffix_index_bytes = 0;
};

class Scheduler {
 public:
  // head: may be null (then only the specs without a head are served: "plain", "none", "lookup",
  // "lookahead", "suffix"); cost: needed by
  // dynamic:auto specs and by the batch-wide tree budget. All must outlive the scheduler. The KV
  // memory holds `parallel` full contexts, so an admitted request never waits for memory.
  Scheduler(api::Model& model, api::Head* head, api::Threads& threads, const api::VerifyCost* cost,
            SchedulerOptions options, Metrics& metrics);
  ~Scheduler();  // shutdown()
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  // Error (the message is for the client, HTTP 400) for a request that can never run: an empty
  // prompt, one that does not fit the context, invalid sampling options, a spec the head cannot
  // serve. Returns nullptr when the queue is full or the scheduler is shutting down (HTTP 503).
  std::shared_ptr<RequestStream> submit(GenerationRequest request);

  // Stops admitting: requests still queued end Cancelled, admitted ones decode to their end or
  // until `drain_deadline` (--drain-timeout), when those left end Cancelled with their tokens so
  // far; then the loop thread exits. Idempotent; returns when the thread has been joined.
  void shutdown(std::chrono::steady_clock::time_point drain_deadline =
                    std::chrono::steady_clock::time_point::max());

  int64_t queue_depth() const;
  int64_t active() const;  // admitted and not ended
  // How long the loop has not come round while it has work (requests queued or admitted): 0
  // when idle. A step takes milliseconds to seconds; much longer means the loop is stuck, and
  // /health says so (--stall-timeout).
  std::chrono::milliseconds stalled_for() const;
  int64_t kv_pool_blocks() const { return pool_blocks_; }

 private:
  struct Active;
  void loop();
  KvNeed need_of(const GenerationRequest& r) const;
  bool fits(const KvNeed& n) const;  // beside what is reserved now (loop thread)
  void release(const KvNeed& n);     // an admitted request ended (loop thread)
  void publish(Active& a, bool ended, bool cancelled);
  void fail(Active& a);

  api::Model& model_;
  api::Head* head_;
  api::Threads& threads_;
  const api::VerifyCost* cost_;
  SchedulerOptions options_;
  Metrics& metrics_;
  std::unique_ptr<api::Engine> engine_;  // used by the loop thread only

  mutable std::mutex mutex_;  // guards the queue, the flags and active_count_
  std::condition_variable wake_;
  std::deque<std::pair<GenerationRequest, std::shared_ptr<RequestStream>>> queue_;
  int64_t active_count_ = 0;
  int64_t pool_blocks_ = 0;             // the pool's blocks
  int64_t reserved_blocks_ = 0;         // loop thread: admitted requests' target_blocks
  int64_t reserved_drafter_bytes_ = 0;  // loop thread: their drafter_bytes
  bool stopping_ = false;
  // When the loop last came round (steady clock, ns), or a request arrived at an idle loop.
  std::atomic<int64_t> heartbeat_ns_{0};
  std::chrono::steady_clock::time_point drain_deadline_;  // shutdown()'s, read once stopping_
  std::vector<Active> active_;                            // loop thread only
  std::thread thread_;
};

}  // namespace eagle2::server

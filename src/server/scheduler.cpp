#include "server/scheduler.h"

#include <algorithm>
#include <cstdio>
#include <exception>
#include <stdexcept>

#include "eagle2/error.h"

namespace eagle2::server {

namespace {

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

// ---- RequestStream: the HTTP thread's side ----

bool RequestStream::take(std::vector<TokenPiece>& out, std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  changed_.wait_for(lock, timeout,
                    [&] { return !pending_.empty() || reason_ != FinishReason::Running; });
  out.insert(out.end(), pending_.begin(), pending_.end());
  pending_.clear();
  return reason_ != FinishReason::Running;
}

void RequestStream::cancel(bool complete) {
  std::lock_guard lock(mutex_);
  if (!cancel_requested_) cancel_complete_ = complete;
  cancel_requested_ = true;
}

bool RequestStream::cancelled() const {
  std::lock_guard lock(mutex_);
  return cancel_requested_;
}

bool RequestStream::admitted() const {
  std::lock_guard lock(mutex_);
  return admitted_ || reason_ != FinishReason::Running;
}

FinishReason RequestStream::finish_reason() const {
  std::lock_guard lock(mutex_);
  return reason_;
}

std::string RequestStream::error() const {
  std::lock_guard lock(mutex_);
  return error_;
}

bool RequestStream::internal_error() const {
  std::lock_guard lock(mutex_);
  return internal_error_;
}

api::Stats RequestStream::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

// ---- Scheduler ----

// An admitted request: its engine id and how much of its output has been published.
struct Scheduler::Active {
  int64_t id = -1;
  std::shared_ptr<RequestStream> stream;
  size_t published = 0;
  bool logprobs = false;  // the request asked for log-probs
  KvNeed kv;              // reserved while it is admitted
  // A suffix or hybrid (dynamic...+suffix) request under --suffix-scope server: what was drafted
  // came partly from other requests' outputs, so its drafted flags and acceptance figures would
  // tell a client whether a guessed continuation is in someone else's recent output. They are
  // reported as plain decoding's (no token drafted, one target forward per token), and its
  // per-source and per-depth counts stay out of /metrics (whose per-step aggregates, eagle2_tau
  // and eagle2_accepted_length, still include it).
  bool masked = false;
  bool suffix_spec = false;  // a `suffix` drafter: every drafted token is the suffix index's
};

namespace {

// TokenPiece::source of a drafted token from its api::Engine::drafted flag.
const char* draft_source(uint8_t flag, bool suffix_spec) {
  const bool head = flag & api::Engine::kDraftedByHead,
             suffix = flag & api::Engine::kDraftedBySuffix;
  if (head && suffix) return "both";
  if (head) return "head";
  if (suffix || suffix_spec) return "suffix";
  return "";
}

}  // namespace

Scheduler::Scheduler(api::Model& model, api::Head* head, api::Threads& threads,
                     const api::VerifyCost* cost, SchedulerOptions options, Metrics& metrics)
    : model_(model),
      head_(head),
      threads_(threads),
      cost_(cost),
      options_(options),
      metrics_(metrics) {
  if (options_.parallel < 1) throw eagle2::Error("--parallel must be >= 1");
  if (options_.max_queue < 0) throw eagle2::Error("--max-queue must be >= 0");
  // By default every slot holds a whole context. A smaller pool (--max-kv-memory) is shared by
  // reservation: a request is admitted only when its worst case fits beside the admitted ones'
  // (need_of), so either way the engine never fails a step for want of KV memory.
  const int64_t block_tokens = api::Engine::kv_tokens_for(1, 1);
  const int64_t context_blocks = api::Engine::kv_tokens_for(1, options_.context) / block_tokens;
  pool_blocks_ =
      options_.kv_pool_blocks > 0 ? options_.kv_pool_blocks : options_.parallel * context_blocks;
  if (pool_blocks_ < context_blocks)
    throw eagle2::Error("the KV pool (" + std::to_string(pool_blocks_) +
                        " blocks) does not hold one whole context (" +
                        std::to_string(context_blocks) + " blocks)");
  engine_ = std::make_unique<api::Engine>(model_, pool_blocks_ * block_tokens, options_.context,
                                          threads_, cost_);
  if (options_.suffix_index_bytes > 0) engine_->share_suffix_index(options_.suffix_index_bytes);
  metrics_.kv_blocks(engine_->kv_blocks_used(), engine_->kv_blocks_total());
  thread_ = std::thread([this] { loop(); });
}

Scheduler::~Scheduler() {
  shutdown();
}

KvNeed Scheduler::need_of(const GenerationRequest& r) const {
  if (r.kv.target_blocks > 0) return r.kv;
  const int64_t block_tokens = api::Engine::kv_tokens_for(1, 1);
  return {api::Engine::kv_tokens_for(1, options_.context) / block_tokens, 0};
}

bool Scheduler::fits(const KvNeed& n) const {
  if (reserved_blocks_ + n.target_blocks > pool_blocks_) return false;
  return options_.kv_budget_bytes <= 0 ||
         pool_blocks_ * options_.kv_block_bytes + reserved_drafter_bytes_ + n.drafter_bytes <=
             options_.kv_budget_bytes;
}

void Scheduler::release(const KvNeed& n) {
  reserved_blocks_ -= n.target_blocks;
  reserved_drafter_bytes_ -= n.drafter_bytes;
  metrics_.kv_reserved(reserved_blocks_, reserved_drafter_bytes_);
}

std::shared_ptr<RequestStream> Scheduler::submit(GenerationRequest request) {
  // What can be known now is refused now (HTTP 400), not after a wait in the queue.
  if (request.prompt.empty()) throw eagle2::Error("the prompt is empty");
  if (static_cast<int64_t>(request.prompt.size()) >= options_.context)
    throw eagle2::Error("the prompt has " + std::to_string(request.prompt.size()) +
                        " tokens but the context is " + std::to_string(options_.context) +
                        ": shorten the prompt");
  request.options.sampling.validate();
  // A request that would not fit even an idle server is refused now; one that fits later waits.
  const KvNeed need = need_of(request);
  const int64_t MiB = 1 << 20;
  if (need.target_blocks > pool_blocks_)
    throw eagle2::Error("the request needs " + std::to_string(need.target_blocks) +
                        " blocks of KV memory (prompt + max_tokens + a draft tree) and the "
                        "server's pool has " +
                        std::to_string(pool_blocks_) +
                        ": ask fewer max_tokens (the server's --max-kv-memory sets the pool)");
  if (options_.kv_budget_bytes > 0 &&
      pool_blocks_ * options_.kv_block_bytes + need.drafter_bytes > options_.kv_budget_bytes)
    throw eagle2::Error(
        "the drafter needs " + std::to_string((need.drafter_bytes + MiB - 1) / MiB) +
        " MiB of KV memory of its own and the server's --max-kv-memory leaves " +
        std::to_string((options_.kv_budget_bytes - pool_blocks_ * options_.kv_block_bytes) / MiB) +
        " MiB for drafters: ask a smaller \"speculative\" tree or another drafter");
  if (request.spec.needs_head() && request.spec.head.empty() && !head_)
    throw eagle2::Error("speculative \"" + request.spec.to_string() +
                        "\" needs an EAGLE head and this server has none");
  if (request.spec.auto_budget && !cost_)
    throw eagle2::Error("speculative \"" + request.spec.to_string() +
                        "\" needs the verify cost curve, which this server did not measure");
  auto stream = std::make_shared<RequestStream>();
  {
    std::lock_guard lock(mutex_);
    // Every request passes through the queue, also one that a free slot will take at the next
    // step: those are not waiting, so they do not count against max_queue (with --max-queue 0
    // a server would otherwise refuse everything).
    const int64_t free_slots = std::max<int64_t>(0, options_.parallel - active_count_);
    if (stopping_ || static_cast<int64_t>(queue_.size()) >= options_.max_queue + free_slots)
      return nullptr;
    // An idle loop's heartbeat is as old as its sleep: the work starts counting from now.
    if (queue_.empty() && active_count_ == 0) heartbeat_ns_ = now_ns();
    queue_.emplace_back(std::move(request), stream);
    metrics_.queue_depth(static_cast<int64_t>(queue_.size()));
  }
  wake_.notify_all();
  return stream;
}

void Scheduler::shutdown(std::chrono::steady_clock::time_point drain_deadline) {
  {
    std::lock_guard lock(mutex_);
    if (!stopping_) drain_deadline_ = drain_deadline;
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

int64_t Scheduler::queue_depth() const {
  std::lock_guard lock(mutex_);
  return static_cast<int64_t>(queue_.size());
}

int64_t Scheduler::active() const {
  std::lock_guard lock(mutex_);
  return active_count_;
}

std::chrono::milliseconds Scheduler::stalled_for() const {
  std::lock_guard lock(mutex_);
  if (queue_.empty() && active_count_ == 0) return std::chrono::milliseconds(0);
  return std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::nanoseconds(now_ns() - heartbeat_ns_));
}

// Publishes the tokens committed since the last call; with `ended`, the request's end too
// (Cancelled when `cancelled`, else as the engine finished it).
void Scheduler::publish(Active& a, bool ended, bool cancelled) {
  const std::vector<int32_t>& tokens = engine_->tokens(a.id);
  const std::vector<uint8_t>& drafted = engine_->drafted(a.id);
  RequestStream& s = *a.stream;
  std::vector<api::TokenLogprobs> logprobs;
  if (a.logprobs) logprobs = engine_->logprobs(a.id, a.published);
  {
    std::lock_guard lock(s.mutex_);
    for (size_t i = a.published; i < tokens.size(); ++i) {
      const bool from_draft = !a.masked && drafted[i] != 0;
      s.pending_.push_back(
          {tokens[i], from_draft, from_draft ? draft_source(drafted[i], a.suffix_spec) : "", {}});
      if (i - a.published < logprobs.size())
        s.pending_.back().logprobs = std::move(logprobs[i - a.published]);
    }
    if (ended) {
      s.stats_ = engine_->stats(a.id);
      // /metrics counts every request, masked ones included: it is the operator's view (as
      // eagle2_tau and eagle2_accepted_length always were), kept off the clients' network.
      // Masking only its per-source series would hide nothing (the per-step series still move)
      // and would blind the operator to the very requests the server-wide index serves.
      metrics_.draft_sources(s.stats_);
      if (a.masked) {
        s.stats_.target_forwards = s.stats_.new_tokens;
        s.stats_.cycles = 0;
        s.stats_.accept_histogram.clear();
        s.stats_.drafted_tokens = 0;
        s.stats_.head_drafted = s.stats_.head_accepted = 0;
        s.stats_.suffix_drafted = s.stats_.suffix_accepted = 0;
        s.stats_.drafted_by_depth = {};
        s.stats_.accepted_by_depth = {};
        s.stats_.tau = 0;  // usage.tau: 1 without cycles, as plain decoding
      }
      s.reason_ = cancelled                 ? FinishReason::Cancelled
                  : s.stats_.stopped_at_eos ? FinishReason::Eos
                                            : FinishReason::Length;
    }
  }
  metrics_.tokens_generated(static_cast<int64_t>(tokens.size() - a.published));
  // Counted before the client can see the end, so that /metrics read after a response has it.
  if (ended) {
    release(a.kv);
    bool complete = false;
    {
      std::lock_guard lock(s.mutex_);
      complete = s.cancel_complete_;
    }
    metrics_.request_done(cancelled && !complete ? "cancelled" : "ok");
    std::lock_guard lock(mutex_);
    --active_count_;
  }
  a.published = tokens.size();
  s.changed_.notify_all();
}

// Ends an admitted request as a server fault (HTTP 500): it failed in its own part of a step
// (the engine ended it alone: failed_in_last_step()), its step failed when run alone, or its step
// failed in a way that is not retried (every request of it failed, or a batch-wide part).
void Scheduler::fail(Active& a) {
  release(a.kv);
  metrics_.request_done("error");
  engine_->remove(a.id);
  {
    std::lock_guard lock(mutex_);
    --active_count_;
  }
  {
    std::lock_guard lock(a.stream->mutex_);
    a.stream->reason_ = FinishReason::Error;
    a.stream->error_ = "the server failed while generating this request";
    a.stream->internal_error_ = true;
  }
  a.stream->changed_.notify_all();
}

void Scheduler::loop() {
  // A suffix drafter publishes its request's output to the server-wide index when the request
  // finishes (in the step) or is cancelled: the index's size is read after each round's.
  auto note_suffix_index = [&] {
    if (options_.suffix_index_bytes > 0) metrics_.suffix_index(engine_->suffix_index_usage());
  };
  for (;;) {
    // 1. Under the lock: admit into free slots, or sleep while there is nothing to do.
    std::vector<std::pair<GenerationRequest, std::shared_ptr<RequestStream>>> admitted;
    std::vector<std::shared_ptr<RequestStream>> refused;  // queued at shutdown
    std::vector<std::shared_ptr<RequestStream>> cancelled_in_queue;
    bool stopping = false, past_deadline = false;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || !queue_.empty() || !active_.empty(); });
      heartbeat_ns_ = now_ns();
      stopping = stopping_;
      // Admitted requests never make the loop wait, so it looks at the clock every step.
      past_deadline = stopping_ && std::chrono::steady_clock::now() >= drain_deadline_;
      if (stopping) {
        for (auto& q : queue_) refused.push_back(q.second);
        queue_.clear();
      }
      // Requests cancelled while queued (their client hung up) leave the queue now, freeing
      // their places, rather than when a slot would have come to them.
      for (auto it = queue_.begin(); it != queue_.end();) {
        if (it->second->cancelled()) {
          cancelled_in_queue.push_back(std::move(it->second));
          it = queue_.erase(it);
        } else {
          ++it;
        }
      }
      // In order: the front waits for memory rather than being overtaken (it would starve).
      while (!queue_.empty() &&
             static_cast<int64_t>(active_.size() + admitted.size()) < options_.parallel) {
        const KvNeed need = need_of(queue_.front().first);
        if (!fits(need)) break;
        reserved_blocks_ += need.target_blocks;
        reserved_drafter_bytes_ += need.drafter_bytes;
        admitted.push_back(std::move(queue_.front()));
        queue_.pop_front();
      }
      active_count_ += static_cast<int64_t>(admitted.size());
      metrics_.kv_reserved(reserved_blocks_, reserved_drafter_bytes_);
      metrics_.queue_depth(static_cast<int64_t>(queue_.size()));
    }
    for (auto& stream : refused) {
      metrics_.request_done("cancelled");
      {
        std::lock_guard lock(stream->mutex_);
        stream->reason_ = FinishReason::Cancelled;
        stream->error_ = "the server is shutting down";
      }
      stream->changed_.notify_all();
    }
    for (auto& stream : cancelled_in_queue) {
      metrics_.request_done("cancelled");
      {
        std::lock_guard lock(stream->mutex_);
        stream->reason_ = FinishReason::Cancelled;
      }
      stream->changed_.notify_all();
    }
    for (auto& [request, stream] : admitted) {
      const KvNeed need = need_of(request);
      if (stream->cancelled()) {  // cancelled while queued: never reaches the engine
        release(need);
        metrics_.request_done("cancelled");
        {
          std::lock_guard lock(mutex_);
          --active_count_;
        }
        {
          std::lock_guard lock(stream->mutex_);
          stream->reason_ = FinishReason::Cancelled;
        }
        stream->changed_.notify_all();
        continue;
      }
      try {
        const bool logprobs = request.options.logprobs >= 0;
        const bool masked = options_.suffix_index_bytes > 0 &&
                            (request.spec.kind == "suffix" || request.spec.with_suffix);
        const bool suffix_spec = request.spec.kind == "suffix";
        const int64_t id = engine_->add(std::move(request.prompt), request.options, request.spec,
                                        request.spec.needs_head() ? head_ : nullptr);
        {
          std::lock_guard lock(stream->mutex_);
          stream->admitted_ = true;
        }
        stream->changed_.notify_all();
        active_.push_back(Active{id, stream, 0, logprobs, need, masked, suffix_spec});
      } catch (const std::exception& e) {
        release(need);
        metrics_.request_done("error");
        {
          std::lock_guard lock(mutex_);
          --active_count_;
        }
        {
          // The engine's refusal of the request (eagle2::Error) is the client's to read (400,
          // its paths removed); anything else (bad_alloc...) is a server fault (500).
          std::lock_guard lock(stream->mutex_);
          stream->reason_ = FinishReason::Error;
          stream->internal_error_ = dynamic_cast<const eagle2::Error*>(&e) == nullptr;
          stream->error_ = stream->internal_error_
                               ? std::string("the server failed while generating this request")
                               : std::string(e.what());
        }
        if (dynamic_cast<const eagle2::Error*>(&e) == nullptr)
          std::fprintf(stderr, "eagle2 serve: a request failed to start: %s\n", e.what());
        stream->changed_.notify_all();
      }
    }
    // 2. Cancelled requests leave before the step (their KV memory is freed now, and counted
    // before their clients see the end); at the shutdown's deadline, all of them.
    for (auto it = active_.begin(); it != active_.end();) {
      if (past_deadline || it->stream->cancelled()) {
        engine_->cancel(it->id);
        metrics_.kv_blocks(engine_->kv_blocks_used(), engine_->kv_blocks_total());
        publish(*it, true, true);
        engine_->remove(it->id);
        it = active_.erase(it);
      } else {
        ++it;
      }
    }
    note_suffix_index();
    if (active_.empty()) {
      std::lock_guard lock(mutex_);
      metrics_.kv_blocks(engine_->kv_blocks_used(), engine_->kv_blocks_total());
      if (stopping_ && queue_.empty()) return;
      continue;
    }
    // 3. One step for all of them.
    bool stepped = true, engine_called = false;
    // Requests whose own part of the step (drafting, verification) failed: the engine ended them
    // alone and the others went on (their tokens unchanged); each fails here.
    std::vector<int64_t> failed_alone;
    auto note_failed_alone = [&] {
      const std::vector<int64_t>& ids = engine_->failed_in_last_step();
      failed_alone.insert(failed_alone.end(), ids.begin(), ids.end());
    };
    try {
      if (options_.before_step) options_.before_step();
      engine_called = true;
      engine_->step();
    } catch (const std::exception& e) {
      // A step that failed before the engine ran it, or in its forward, kept nothing of its work
      // (the engine drops the forward's KV rows; nothing was verified or accepted; the trees are
      // drafted again): each of its requests is stepped again alone, and only those that fail
      // alone fail. Alone, a request's tokens are the batch's (they never depend on the company).
      // Any other failure of the engine's step (every request of it failed alone, or a
      // batch-wide part failed) fails every request of the step, as does a failed step of one
      // request. A failed request is a server fault: 500, with a fixed message (the exception's
      // text may name files; it goes to the log).
      stepped = false;
      std::fprintf(stderr, "eagle2 serve: a step of %zu requests failed: %s\n", active_.size(),
                   e.what());
      if (engine_called) note_failed_alone();
      const bool retry =
          active_.size() > 1 && (!engine_called || engine_->last_failure_in_forward());
      for (auto it = active_.begin(); it != active_.end();) {
        bool ok = false;
        if (retry &&
            std::find(failed_alone.begin(), failed_alone.end(), it->id) == failed_alone.end()) {
          try {
            engine_->step_alone(it->id);
            ok = true;
          } catch (const std::exception& alone) {
            std::fprintf(stderr, "eagle2 serve: a request failed alone: %s\n", alone.what());
          }
        }
        if (ok) {
          ++it;
          continue;
        }
        fail(*it);
        it = active_.erase(it);
      }
      failed_alone.clear();  // all failed above
    }
    // Outside the try: a failure to copy the list is not a failed step (whose requests would be
    // stepped again alone, those that failed alone among them).
    if (stepped) note_failed_alone();
    if (!failed_alone.empty()) {
      std::fprintf(stderr, "eagle2 serve: %zu of %zu requests failed in their own step\n",
                   failed_alone.size(), active_.size());
      for (auto it = active_.begin(); it != active_.end();) {
        if (std::find(failed_alone.begin(), failed_alone.end(), it->id) == failed_alone.end()) {
          ++it;
          continue;
        }
        fail(*it);
        it = active_.erase(it);
      }
    }
    if (stepped) metrics_.step(engine_->last_step());
    // 4. Stream what was committed; finished requests leave (their KV memory went back to the
    // pool as they finished inside the step).
    metrics_.kv_blocks(engine_->kv_blocks_used(), engine_->kv_blocks_total());
    for (auto it = active_.begin(); it != active_.end();) {
      const bool ended = engine_->finished(it->id);
      publish(*it, ended, false);
      if (ended) {
        engine_->remove(it->id);
        it = active_.erase(it);
      } else {
        ++it;
      }
    }
    note_suffix_index();
  }
}

}  // namespace eagle2::server

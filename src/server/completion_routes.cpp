#include "server/completion_routes.h"

#include <chrono>
#include <cstdio>
#include <exception>
#include <memory>
#include <utility>
#include <vector>

#include "eagle2/error.h"
#include "server/completion_run.h"
#include "server/guarded_http.h"
#include "server/logprobs_json.h"
#include "server/openai_response.h"

namespace eagle2::server {

namespace {

using std::chrono::milliseconds;

// How long one take() waits: short, so that a streaming handler notices a client that went away
// (a failed write) within this much of its last token, and long enough not to spin.
constexpr milliseconds kPoll{100};

void append(Delta& into, Delta&& d) {
  into.text += d.text;
  for (TokenText& t : d.tokens) into.tokens.push_back(std::move(t));
  into.end = d.end;
  into.finish_reason = std::move(d.finish_reason);
  into.message = std::move(d.message);
  into.status = d.status;
}

std::string error_code(const Delta& d) {
  return d.status == 500 ? "internal_error" : "engine_error";
}

// choices[].logprobs for `tokens` when the request asked for them, else null. `offset`: the
// completions shape's text offset of the first token, advanced past them.
Json logprobs_for(Endpoint endpoint, int32_t logprobs, const std::vector<TokenText>& tokens,
                  const api::Tokenizer& tok, int64_t& offset) {
  if (logprobs < 0) return nullptr;
  if (endpoint == Endpoint::Chat) return chat_logprobs_json(tokens, tok);
  return completion_logprobs_json(tokens, tok, offset);
}

// A request that reached the scheduler and ended without an answer. Not thrown: the scheduler
// has already counted it ("error" or "cancelled").
void send_unfinished(httplib::Response& res, const Delta& d) {
  if (d.end == RunEnd::Error)
    send_error(res, ApiError(d.status, d.message, "", error_code(d)));
  else
    send_error(res, ApiError(503, "the server is shutting down", "", "shutting_down"));
}

// The streaming side of one request: what the content provider needs between its calls.
struct SseStream {
  std::shared_ptr<void> in_flight;  // ServerState::response_started(): until the last write
  std::shared_ptr<CompletionRun> run;
  ResponseHeader header;
  int32_t logprobs = -1;  // the request's (CompletionRequest::logprobs)
  const api::Tokenizer* tokenizer = nullptr;
  int64_t text_offset = 0;  // completions' logprobs.text_offset of the next token
  bool include_usage = false;
  Delta first;  // what arrived before the headers were sent
  bool first_pending = true;
  bool first_chunk = true;  // chat: the first chunk's delta carries the role

  // The events for one delta; `done` once the last has been written.
  std::string events(const Delta& d) {
    std::string out;
    if (!d.text.empty() || !d.tokens.empty()) {
      out += sse_event(
          chunk_json(header, d.text, d.tokens, first_chunk, "", include_usage,
                     logprobs_for(header.endpoint, logprobs, d.tokens, *tokenizer, text_offset)));
      first_chunk = false;
    }
    if (d.end == RunEnd::Finished) {
      out += sse_event(chunk_json(header, "", {}, first_chunk, d.finish_reason, include_usage));
      if (include_usage) out += sse_event(usage_chunk_json(header, run->usage()));
    } else if (d.end == RunEnd::Error) {
      out += sse_event(error_json(d.status, d.message, "", error_code(d)));
    } else if (d.end == RunEnd::Cancelled) {
      out += sse_event(error_json(503, "the server is shutting down", "", "shutting_down"));
    }
    if (d.end != RunEnd::None) out += kSseDone;
    return out;
  }
};

void respond(ServerState& s, Endpoint endpoint, const CompletionRequest& request,
             const std::vector<int32_t>& prompt, std::shared_ptr<RequestStream> stream,
             std::shared_ptr<void> in_flight, httplib::Response& res);

void stream_response(std::shared_ptr<SseStream> st, httplib::Response& res) {
  res.set_header("Cache-Control", "no-cache");
  res.set_header("X-Accel-Buffering", "no");  // a reverse proxy must not buffer the events
  res.set_chunked_content_provider(
      "text/event-stream",
      [st](size_t, httplib::DataSink& sink) {
        // httplib calls this outside its handlers' try block: an exception escaping here would
        // end the process, so any failure ends this response (and request) alone.
        try {
          Delta d = st->first_pending ? std::move(st->first) : st->run->next(kPoll);
          st->first_pending = false;
          const std::string out = st->events(d);
          // A client that went away: a failed write, or (while no tokens come) a socket that is
          // no longer writable. Either way the scheduler drops the request at its next step.
          const bool ok = out.empty() ? sink.is_writable() : sink.write(out.data(), out.size());
          if (!ok) {
            st->run->cancel();
            return false;
          }
          if (d.end != RunEnd::None) sink.done();
          return true;
        } catch (const std::exception& e) {
          // This request alone fails: cancelled, and an error event without the exception's
          // text (it may name files; the server's log has it) ends its stream.
          st->run->cancel();
          std::fprintf(stderr, "eagle2 serve: a request failed: %s\n", e.what());
          const std::string out =
              sse_event(error_json(500, "the server failed while generating this request", "",
                                   "internal_error")) +
              kSseDone;
          if (!sink.write(out.data(), out.size())) return false;
          sink.done();
          return true;
        }
      },
      // Called when the response is over, also when httplib gave up on the connection.
      [st](bool success) {
        if (!success) st->run->cancel();
      });
}

}  // namespace

void send_error(httplib::Response& res, const ApiError& e) {
  res.status = e.status();
  if (e.status() == 503) res.set_header("Retry-After", "1");
  res.set_content(json_text(error_json(e.status(), e.what(), e.param(), e.code())),
                  "application/json");
}

void handle_completion(ServerState& s, Endpoint endpoint, const std::string& body,
                       httplib::Response& res) {
  std::shared_ptr<void> in_flight = s.response_started();
  const CompletionRequest request =
      parse_completion_request(body, endpoint, s.model.id(), s.model.policy());
  const std::vector<int32_t> prompt = s.model.prompt_tokens(request);

  std::shared_ptr<RequestStream> stream;
  try {
    stream = s.scheduler.submit(s.model.generation_request(request, prompt));
  } catch (const Error& e) {
    // A request that can never run.
    throw ApiError(400, without_paths(e.what()), "", "invalid_value");
  }
  if (!stream) {
    if (s.stopping) throw ApiError(503, "the server is shutting down", "", "shutting_down");
    throw ApiError(503,
                   "the queue is full (" + std::to_string(s.options.max_queue) +
                       " requests wait for " + std::to_string(s.options.parallel) +
                       " slots): retry later",
                   "", "queue_full");
  }
  // From here on the request is the scheduler's: whatever fails in this handler cancels it (so it
  // does not decode on with no reader) and fails this request alone, with a 500 that says
  // nothing of the failure's text (it may name files; the server's log has it). Not thrown: the
  // scheduler counts the cancelled request in the metrics.
  try {
    respond(s, endpoint, request, prompt, stream, std::move(in_flight), res);
  } catch (const std::exception& e) {
    stream->cancel();
    std::fprintf(stderr, "eagle2 serve: a request failed: %s\n", e.what());
    send_error(res, ApiError(500, "the server failed while generating this request", "",
                             "internal_error"));
  }
}

namespace {

// Whether the client hung up while its request is queued or decoding without a stream: then the
// request is cancelled (it leaves the queue, or its slot and KV memory are freed at the next
// step), and true.
bool cancelled_on_hang_up(CompletionRun& run, httplib::Response& res) {
  if (!client_gone()) return false;
  run.cancel();
  send_error(res, ApiError(503, "the client closed the connection", "", "client_closed"));
  return true;
}

void respond(ServerState& s, Endpoint endpoint, const CompletionRequest& request,
             const std::vector<int32_t>& prompt, std::shared_ptr<RequestStream> stream,
             std::shared_ptr<void> in_flight, httplib::Response& res) {
  auto run = std::make_shared<CompletionRun>(stream, s.model.tokenizer(), prompt, request.stop);

  // The status line waits for the first tokens (or the end): a request the engine fails gets an
  // error status and JSON, not a 200 stream that breaks off. It also keeps the handler here while
  // the request is queued, where a shutdown can still answer it with 503.
  Delta first;
  while (first.tokens.empty() && first.end == RunEnd::None) {
    if (cancelled_on_hang_up(*run, res)) return;  // nobody reads the answer
    append(first, run->next(kPoll));
  }
  if (first.end == RunEnd::Error || first.end == RunEnd::Cancelled) {
    send_unfinished(res, first);
    return;
  }
  const ResponseHeader header = make_response_header(endpoint, s.model.id());

  if (!request.stream) {
    Delta all = std::move(first);
    while (all.end == RunEnd::None) {
      if (cancelled_on_hang_up(*run, res)) return;
      append(all, run->next(kPoll));
    }
    if (all.end != RunEnd::Finished) {
      send_unfinished(res, all);
      return;
    }
    int64_t offset = 0;
    res.set_content(json_text(completion_json(header, all.text, all.finish_reason, run->usage(),
                                              logprobs_for(endpoint, request.logprobs, all.tokens,
                                                           s.model.tokenizer(), offset))),
                    "application/json");
    return;
  }
  auto st = std::make_shared<SseStream>();
  st->in_flight = std::move(in_flight);
  st->run = run;
  st->header = header;
  st->logprobs = request.logprobs;
  st->tokenizer = &s.model.tokenizer();
  st->include_usage = request.include_usage;
  st->first = std::move(first);
  stream_response(std::move(st), res);
}

}  // namespace

}  // namespace eagle2::server

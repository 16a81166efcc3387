// One request's output as the client sees it: the scheduler's tokens turned into text exactly as
// `eagle2 generate` prints it (api::TextStream with the prompt as context), cut at the request's
// stop strings, in increments that the non-streaming handler concatenates and the streaming
// handler sends as chunks. Used by one HTTP thread at a time.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "eagle2/tokenizer.h"
#include "server/openai_response.h"
#include "server/scheduler.h"
#include "server/stop_strings.h"

namespace eagle2::server {

enum class RunEnd {
  None,       // not ended yet
  Finished,   // EOS, max_tokens, the end of the context or a stop string: finish_reason says
  Error,      // the engine failed the request: message says why
  Cancelled,  // dropped before its end by the server (a shutdown before admission) or by cancel()
};

struct Delta {
  // New text, safe to show: a tail that may begin a stop string is held back until it cannot.
  std::string text;
  // The tokens committed since the last delta, each with TextStream::push's text (empty while a
  // UTF-8 character is incomplete; the character comes with the token that completes it). Their
  // texts add up to `text` but for what stop strings hold back or cut, and for the last delta's
  // TextStream::finish() remainder, which belongs to no token.
  std::vector<TokenText> tokens;
  RunEnd end = RunEnd::None;
  std::string finish_reason;  // Finished: "stop" (EOS or a stop string) or "length"
  std::string message;        // Error: the engine's message, without file paths
  int status = 400;           // Error: 400 (the engine refused the request) or 500 (a fault)
};

class CompletionRun {
 public:
  // `prompt`: the request's tokens (TextStream's context, so the first piece is spaced as
  // generate spaces it).
  CompletionRun(std::shared_ptr<RequestStream> stream, const api::Tokenizer& tokenizer,
                const std::vector<int32_t>& prompt, std::vector<std::string> stop);

  // Waits at most `timeout` for new tokens (longer only to let a stopped request leave the
  // scheduler, whose statistics are then final). After a delta with end != None, do not call.
  Delta next(std::chrono::milliseconds timeout);
  // The client is gone: the scheduler drops the request at its next step.
  void cancel() { stream_->cancel(); }
  bool admitted() const { return stream_->admitted(); }

  // Final once ended. tau: the engine's for speculative decoding; plain decoding commits one
  // token per target forward, so 1.
  Usage usage() const;

 private:
  void finish(Delta& d, const std::string& reason);

  std::shared_ptr<RequestStream> stream_;
  api::TextStream text_;
  StopMatcher stop_;
  int64_t prompt_tokens_ = 0, completion_tokens_ = 0;
  bool ended_ = false;
};

}  // namespace eagle2::server

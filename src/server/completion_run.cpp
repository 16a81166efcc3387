#include "server/completion_run.h"

#include <utility>

#include "server/api_error.h"

namespace eagle2::server {

CompletionRun::CompletionRun(std::shared_ptr<RequestStream> stream, const api::Tokenizer& tokenizer,
                             const std::vector<int32_t>& prompt, std::vector<std::string> stop)
    : stream_(std::move(stream)),
      text_(tokenizer, prompt),
      stop_(std::move(stop)),
      prompt_tokens_(static_cast<int64_t>(prompt.size())) {}

void CompletionRun::finish(Delta& d, const std::string& reason) {
  d.end = RunEnd::Finished;
  d.finish_reason = reason;
  ended_ = true;
}

Delta CompletionRun::next(std::chrono::milliseconds timeout) {
  Delta d;
  std::vector<TokenPiece> pieces;
  bool ended = stream_->take(pieces, timeout);
  for (const TokenPiece& p : pieces) {
    std::string piece = text_.push(p.token);
    ++completion_tokens_;
    const StopMatcher::Result r = stop_.feed(piece);
    d.text += r.text;
    d.tokens.push_back({std::move(piece), p.drafted, p.token, p.logprobs, p.source});
    // Tokens after the stop string are not the client's: they are not counted or listed.
    if (r.stopped) break;
  }

  if (stop_.stopped()) {
    stream_->cancel(/*complete=*/true);
    // The scheduler drops a cancelled request at its next step; waiting for that (bounded, in
    // case the scheduler is gone) makes usage's target forwards and tau final.
    for (int i = 0; i < 300 && !ended; ++i) {
      pieces.clear();
      ended = stream_->take(pieces, std::chrono::milliseconds(100));
    }
    finish(d, "stop");
    return d;
  }
  if (!ended) return d;

  switch (stream_->finish_reason()) {
    case FinishReason::Eos:
    case FinishReason::Length: {
      // finish(): what an incomplete UTF-8 sequence at the very end leaves, as generate prints.
      const StopMatcher::Result r = stop_.feed(text_.finish());
      d.text += r.text;
      if (!r.stopped) d.text += stop_.flush();
      const bool length = stream_->finish_reason() == FinishReason::Length && !r.stopped;
      finish(d, length ? "length" : "stop");
      break;
    }
    case FinishReason::Error:
      d.end = RunEnd::Error;
      d.status = stream_->internal_error() ? 500 : 400;
      d.message = without_paths(stream_->error());
      ended_ = true;
      break;
    case FinishReason::Cancelled:
    case FinishReason::Running:  // take() said it ended: not reached
      d.end = RunEnd::Cancelled;
      ended_ = true;
      break;
  }
  return d;
}

Usage CompletionRun::usage() const {
  const api::Stats st = stream_->stats();
  Usage u;
  u.prompt_tokens = prompt_tokens_;
  u.completion_tokens = completion_tokens_;
  u.target_forwards = st.target_forwards;
  u.tau = st.cycles > 0 ? st.tau : completion_tokens_ > 0 ? 1.0 : 0.0;
  u.head_drafted = st.head_drafted;
  u.head_accepted = st.head_accepted;
  u.suffix_drafted = st.suffix_drafted;
  u.suffix_accepted = st.suffix_accepted;
  // Every node counted (source 0), up to the deepest depth drafted.
  size_t depths = 0;
  for (size_t b = 0; b < st.drafted_by_depth[0].size(); ++b)
    if (st.drafted_by_depth[0][b] > 0) depths = b + 1;
  u.drafted_by_depth.assign(st.drafted_by_depth[0].begin(),
                            st.drafted_by_depth[0].begin() + static_cast<ptrdiff_t>(depths));
  u.accepted_by_depth.assign(st.accepted_by_depth[0].begin(),
                             st.accepted_by_depth[0].begin() + static_cast<ptrdiff_t>(depths));
  return u;
}

}  // namespace eagle2::server

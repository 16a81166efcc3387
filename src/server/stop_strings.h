// The request's `stop` strings over streamed text. OpenAI's contract: generation ends at the first
// stop string and the string itself never appears in the output. Text arrives in increments (one
// token's text at a time), so a stop string may be split across increments: the matcher holds
// back any tail that could still grow into a stop string and releases it once it cannot.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace eagle2::server {

class StopMatcher {
 public:
  // Empty strings are ignored (the request parser refuses them).
  explicit StopMatcher(std::vector<std::string> stops = {});

  struct Result {
    std::string text;      // safe to emit now
    bool stopped = false;  // a stop string completed: `text` ends where it began
  };
  // The next increment of generated text. After a stop, further input is ignored.
  Result feed(std::string_view text);
  // The end of generation: what was held back, since no stop string can complete any more.
  std::string flush();

  bool stopped() const { return stopped_; }
  bool active() const { return !stops_.empty(); }

 private:
  std::vector<std::string> stops_;
  std::string held_;  // a tail that is a proper prefix of some stop string
  bool stopped_ = false;
};

}  // namespace eagle2::server

#include "server/stop_strings.h"

#include <algorithm>
#include <utility>

namespace eagle2::server {

StopMatcher::StopMatcher(std::vector<std::string> stops) {
  for (std::string& s : stops)
    if (!s.empty()) stops_.push_back(std::move(s));
}

StopMatcher::Result StopMatcher::feed(std::string_view text) {
  Result r;
  if (stopped_) return r;
  std::string buffer = std::move(held_);
  held_.clear();
  buffer.append(text);

  // The earliest stop string wins, whichever it is: the text before it is all the output has.
  // `held_` never contains a whole stop string (it would have matched before), so a search of the
  // whole buffer finds only matches that this increment completed.
  size_t first = std::string::npos;
  for (const std::string& s : stops_) first = std::min(first, buffer.find(s));
  if (first != std::string::npos) {
    stopped_ = true;
    buffer.resize(first);
    r.text = std::move(buffer);
    r.stopped = true;
    return r;
  }

  // Hold back the longest tail that is a proper prefix of some stop string. Its first byte equals
  // the first byte of a stop string, a valid UTF-8 lead byte, so the split never cuts a character.
  size_t hold = 0;
  for (const std::string& s : stops_) {
    const size_t longest = std::min(buffer.size(), s.size() - 1);
    for (size_t n = longest; n > hold; --n) {
      if (buffer.compare(buffer.size() - n, n, s, 0, n) == 0) {
        hold = n;
        break;
      }
    }
  }
  held_ = buffer.substr(buffer.size() - hold);
  buffer.resize(buffer.size() - hold);
  r.text = std::move(buffer);
  return r;
}

std::string StopMatcher::flush() {
  if (stopped_) return {};
  return std::exchange(held_, std::string());
}

}  // namespace eagle2::server

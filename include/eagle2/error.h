// Errors are values with context: every failure a user can cause (a bad file, a bad flag, a prompt
// too long) is thrown as eagle2::Error carrying one complete line that names what is wrong and
// where. The CLI catches it at the top and prints it; nothing aborts on user input.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

namespace eagle2 {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

// Builds the message from its parts with operator<<, e.g.
//   fail("model.safetensors: tensor '", name, "' has shape ", shape, ", expected ", want);
template <class... Parts>
[[noreturn]] void fail(Parts&&... parts) {
  std::ostringstream out;
  (out << ... << std::forward<Parts>(parts));
  throw Error(out.str());
}

}  // namespace eagle2

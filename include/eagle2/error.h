// Errors are values with context: every failure a user can cause (a bad file, a bad flag, a prompt
// too long) is thrown as eagle2::Error carrying one complete line that names what is wrong and
// where. The CLI catches it at the top and prints it; nothing aborts on user input.
//
// The conventions every public header (include/eagle2/) follows, unless it says otherwise
// (docs/LIBRARY.md):
//  - Errors: what the caller or its files got wrong throws eagle2::Error, and the object it was
//    thrown from is left as it was or destroyable; the standard library's own exceptions (e.g.
//    std::bad_alloc) pass through. A callback's exception propagates out of the call.
//  - Ownership: classes are move-only handles that own what they load; a function taking a
//    reference or a pointer borrows it for the call, and where an object keeps one (a head its
//    model, an engine its model and heads) the header says so: the referent must outlive it.
//  - Threads: no object is safe to use from two threads at once; the objects one computation uses
//    together (a model, its heads, caches, drafters, engine and the Threads they run on) belong to
//    one calling thread at a time. Objects that share nothing may run on different threads.
//  - Units: token counts and positions in tokens, sizes in bytes, times in seconds, rates per
//    second, unless a name says otherwise (e.g. _gbs: 1e9 bytes per second).
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

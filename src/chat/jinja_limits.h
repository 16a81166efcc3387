// What one template may cost. Chat templates arrive with models and requests, so a hostile one
// must end in one clear error instead of a crash, a hang or unbounded memory: every recursion,
// loop and allocation of the renderer is counted against these limits. The defaults are far above
// what real chat templates need (a 1000-message conversation takes a few hundred thousand steps).
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace eagle2::jinja {

struct Limits {
  size_t max_template_bytes = size_t{1} << 20;
  // Blocks and expressions nested in each other, as written (bounds the parser's recursion).
  int max_nesting = 100;
  // Evaluations in progress at once: nested expressions, blocks and macro calls (bounds the
  // evaluator's recursion, so recursive macros end here).
  int max_depth = 500;
  // Nesting of values: input JSON, and values printed or serialized (a namespace can contain
  // itself).
  int max_value_depth = 128;
  // The longest string, the rendered output included.
  size_t max_string_bytes = size_t{32} << 20;
  // Evaluation steps (nodes evaluated, plus items and bytes processed by filters and methods).
  uint64_t max_steps = 20'000'000;
  // Bytes allocated for strings, lists, mappings and scopes over the whole render (freed memory is
  // not given back to this budget, so it also bounds the peak).
  uint64_t max_alloc_bytes = uint64_t{256} << 20;
};

// A failure of a value-level operation (a filter on the wrong type, a limit reached) that does not
// know where in the template it happened: the evaluator turns it into an eagle2::Error that names
// the template and the line.
class Failure : public std::runtime_error {
 public:
  explicit Failure(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace eagle2::jinja

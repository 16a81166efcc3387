// Tokens -> syntax tree, with the reference's grammar and operator precedence (lowest first):
// `a if c else b`; or; and; not; comparisons, `in` and `not in` (all one level, left to right);
// + - ~; * / // %; **; `is` tests; | filters; unary + -; calls, `.` and `[]`.
// Nesting (blocks in blocks, parentheses, operator chains) is bounded by Limits::max_nesting, so
// neither the parser nor the evaluator can be driven into deep recursion.
#pragma once

#include <memory>
#include <string_view>

#include "chat/jinja_ast.h"
#include "chat/jinja_limits.h"

namespace eagle2::jinja {

// Throws eagle2::Error "NAME:LINE: syntax error: ..." on a template it cannot read.
std::unique_ptr<Program> parse(std::string_view source, std::string_view name,
                               const Limits& limits);

}  // namespace eagle2::jinja

// Unary and binary operators with the reference's rules, which are JavaScript's rather than
// Python's where they differ: `==` is loose equality, `+` joins as text as soon as one side is a
// string, `%` keeps the dividend's sign, `/` by zero gives Infinity, numbers are doubles. `and` and
// `or` short-circuit, so the evaluator handles them itself.
#pragma once

#include <string_view>

#include "chat/jinja_value.h"

namespace eagle2::jinja {

Value binary_op(std::string_view op, const Value& left, const Value& right, Heap& heap);
Value unary_op(std::string_view op, const Value& operand);

}  // namespace eagle2::jinja

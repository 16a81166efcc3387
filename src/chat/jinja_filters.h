// Filters (x | name(args)) and tests (x is name) with the reference's behaviour, written once
// whether or not the filter has parentheses (the reference accepts some only one way). Filters
// the reference lacks but Jinja has and chat templates use (select, reject) follow Jinja.
#pragma once

#include <string_view>

#include "chat/jinja_methods.h"
#include "chat/jinja_value.h"

namespace eagle2::jinja {

Value apply_filter(std::string_view name, const Value& operand, const Args& args, Heap& heap);
bool apply_test(std::string_view name, const Value& operand, const Args& args);

}  // namespace eagle2::jinja

// What values offer besides operators: attribute and item lookup (a.b, a[0], a[1:-1]) and the
// methods of strings and mappings ("x".startswith(...), m.items()). Python's str methods are
// rebuilt on the reference's JavaScript ones, including where those differ: strip(chars) ignores
// its argument and trims white space, as the reference does. Global functions: jinja_globals.h.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "chat/jinja_value.h"

namespace eagle2::jinja {

// Arguments of a call, filter or test after evaluation.
struct Args {
  std::vector<Value> positional;
  std::vector<std::pair<std::string, Value>> keyword;
  const Value* keyword_arg(std::string_view name) const;
  // Positional argument i, else the keyword argument `name`, else nullptr.
  const Value* get(size_t i, std::string_view name) const;
};

// a.b and a[key]: a mapping's entry first, then its methods; a list's or string's item at an
// integer index (negative from the end) or its methods; undefined when there is none.
Value get_member(const Value& object, const Value& key, Heap& heap);
// a[start:stop:step] on a list or string (a string by code points); omitted parts are undefined.
Value get_slice(const Value& object, const Value& start, const Value& stop, const Value& step,
                Heap& heap);
// A method bound by get_member, called.
Value call_method(const Function& method, const Args& args, Heap& heap);
// The reference's ordering for sort and dictsort: numbers (booleans as 0 and 1) by value, strings
// by UTF-16 units (case-insensitively unless asked), none only with none; anything else fails.
int compare_values(const Value& a, const Value& b, bool case_sensitive);
// A dotted path ("function.name", "items.0") through mappings and lists; undefined where missing.
Value attribute_path(const Value& item, std::string_view path);
}  // namespace eagle2::jinja

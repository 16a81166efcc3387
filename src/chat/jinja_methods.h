// What values offer besides operators: attribute and item lookup (a.b, a[0], a[1:-1]), the
// methods of strings and mappings ("x".startswith(...), m.items()), and the global functions
// range, namespace, raise_exception and strftime_now. Python's str methods are rebuilt on the
// reference's JavaScript ones, including where those differ: strip(chars) ignores its argument
// and trims white space, as the reference does.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "chat/jinja_value.h"

namespace eagle2::jinja {

// The date strftime_now formats; year 0 means none was given (strftime_now then fails).
struct Date {
  int year = 0, month = 1, day = 1, hour = 0, minute = 0;
};

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
// range, namespace, raise_exception, strftime_now.
Value call_global(const Function& fn, const Args& args, Heap& heap, const Date& today);
// The reference's ordering for sort and dictsort: numbers (booleans as 0 and 1) by value, strings
// by UTF-16 units (case-insensitively unless asked), none only with none; anything else fails.
int compare_values(const Value& a, const Value& b, bool case_sensitive);
// A dotted path ("function.name", "items.0") through mappings and lists; undefined where missing.
Value attribute_path(const Value& item, std::string_view path);
// Python's strftime for the directives the reference knows (%Y %m %d %b %B %H %M %%); others are
// kept as written.
std::string format_date(std::string_view format, const Date& date);

}  // namespace eagle2::jinja

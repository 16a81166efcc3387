// The global functions of a template: range, namespace, raise_exception and strftime_now (which
// formats a date the caller gives: a server passes the current one, tests a fixed one).
#pragma once

#include <string>
#include <string_view>

#include "chat/jinja_methods.h"
#include "chat/jinja_value.h"

namespace eagle2::jinja {

// The date strftime_now formats; year 0 means none was given (strftime_now then fails).
struct Date {
  int year = 0, month = 1, day = 1, hour = 0, minute = 0;
};

Value call_global(const Function& fn, const Args& args, Heap& heap, const Date& today);

// Python's strftime for the directives the reference knows (%Y %m %d %b %B %H %M %%); others are
// kept as written.
std::string format_date(std::string_view format, const Date& date);

}  // namespace eagle2::jinja

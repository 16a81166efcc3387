#include "chat/jinja_globals.h"

#include <algorithm>
#include <cmath>

#include "chat/jinja_text.h"

namespace eagle2::jinja {

namespace {

Value range(const Args& args, Heap& heap) {
  if (!args.keyword.empty()) throw Failure("range() takes no keyword arguments");
  if (args.positional.empty() || args.positional.size() > 3)
    throw Failure("range() takes 1 to 3 arguments");
  for (const Value& v : args.positional)
    if (!v.is_number())
      throw Failure(std::string("range() takes numbers, not ") + kind_name(v.kind()));
  double start = 0, stop = 0, step = 1;
  if (args.positional.size() == 1) {
    stop = args.positional[0].number();
  } else {
    start = args.positional[0].number(), stop = args.positional[1].number();
    if (args.positional.size() == 3) step = args.positional[2].number();
  }
  if (step == 0) throw Failure("range() step must not be zero");
  const double count = std::max(0.0, std::ceil((stop - start) / step));
  if (!(count < 1e12)) throw Failure("range() of " + js_number(count) + " numbers is too long");
  heap.check_room(static_cast<uint64_t>(count) * sizeof(Value));  // before the list is built
  heap.step(static_cast<uint64_t>(count));
  std::vector<Value> items;
  items.reserve(static_cast<size_t>(count));
  for (double x = start; step > 0 ? x < stop : x > stop; x += step)
    items.push_back(x == std::trunc(x) ? Value::integer(x) : Value::floating(x));
  return heap.array(std::move(items));
}

// namespace(mapping or [key, value] pairs, key=value...): a mutable object for {% set ns.x %}.
Value make_namespace(const Args& args, Heap& heap) {
  if (args.positional.size() > 1)
    throw Failure("namespace() takes at most 1 positional argument, got " +
                  std::to_string(args.positional.size()));
  Object o;
  if (!args.positional.empty()) {
    const Value& source = args.positional[0];
    if (source.is(Kind::Object)) {
      for (const auto& [k, v] : source.object().entries()) o.set(k, v);
    } else if (source.is(Kind::Array)) {
      for (const Value& pair : source.array().items) {
        std::vector<Value> kv;
        if (pair.is(Kind::Array)) kv = pair.array().items;
        if (pair.is(Kind::String)) {  // a two-character string is a pair too, as in Python
          const std::vector<size_t> at = code_point_offsets(pair.str());
          for (size_t k = 0; k + 1 < at.size(); ++k)
            kv.push_back(heap.str(std::string_view(pair.str()).substr(at[k], at[k + 1] - at[k])));
        }
        if (kv.size() != 2)
          throw Failure("namespace() takes a mapping or a list of [key, value] pairs");
        if (!kv[0].is(Kind::String)) throw Failure("namespace() keys must be strings");
        o.set(kv[0].str(), kv[1]);
      }
    } else {
      throw Failure(std::string("namespace() cannot take its entries from a ") +
                    kind_name(source.kind()));
    }
  }
  for (const auto& [k, v] : args.keyword) o.set(k, v);
  return heap.object(std::move(o), true);
}

const char* const kMonths[] = {"January",   "February", "March",    "April",
                               "May",       "June",     "July",     "August",
                               "September", "October",  "November", "December"};

}  // namespace

std::string format_date(std::string_view format, const Date& d) {
  auto two = [](int n) {
    std::string digits = std::to_string(n);
    if (n >= 0 && n < 10) digits.insert(digits.begin(), '0');
    return digits;
  };
  const std::string month = kMonths[std::clamp(d.month, 1, 12) - 1];
  std::string out;
  for (size_t i = 0; i < format.size(); ++i) {
    if (format[i] != '%' || i + 1 >= format.size()) {
      out += format[i];
      continue;
    }
    switch (format[i + 1]) {
      case 'Y':
        out += std::to_string(d.year);
        break;
      case 'm':
        out += two(d.month);
        break;
      case 'd':
        out += two(d.day);
        break;
      case 'b':
        out += month.substr(0, 3);
        break;
      case 'B':
        out += month;
        break;
      case 'H':
        out += two(d.hour);
        break;
      case 'M':
        out += two(d.minute);
        break;
      case '%':
        out += '%';
        break;
      default:
        out += format.substr(i, 2);
        break;  // unknown directives stay as written
    }
    ++i;
  }
  return out;
}

Value call_global(const Function& fn, const Args& args, Heap& heap, const Date& today) {
  if (fn.name == "range") return range(args, heap);
  if (fn.name == "namespace") return make_namespace(args, heap);
  if (fn.name == "raise_exception") {
    // The template's own message, kept whole: it is what the user needs to read.
    throw Failure("raise_exception: " + (args.positional.empty()
                                             ? std::string()
                                             : js_string(args.positional[0], heap.limits())));
  }
  if (fn.name == "strftime_now") {
    if (args.positional.empty() || !args.positional[0].is(Kind::String))
      throw Failure("strftime_now() takes a format string");
    if (today.year == 0) throw Failure("strftime_now(): the renderer was given no current date");
    return heap.str(format_date(args.positional[0].str(), today));
  }
  throw Failure("unknown function '" + fn.name + "'");
}

}  // namespace eagle2::jinja

#include "chat/jinja_filters.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <unordered_set>

#include "chat/jinja_json.h"
#include "chat/jinja_text.h"

namespace eagle2::jinja {
namespace {

std::string a_kind(Kind k) {
  switch (k) {
    case Kind::Undefined:
    case Kind::None:
      return kind_name(k);
    case Kind::Int:
      return "an integer";
    default:
      return std::string("a ") + kind_name(k);
  }
}

// A count from a number the template computed, made safe to convert: NaN (0 // 0 is an integer
// NaN, as in JavaScript) counts as `lo`.
double bounded(double x, double lo, double hi) {
  return std::isnan(x) ? lo : std::clamp(x, lo, hi);
}

[[noreturn]] void not_for(std::string_view filter, const Value& v) {
  throw Failure("filter '" + std::string(filter) + "' does not apply to " + a_kind(v.kind()));
}

[[noreturn]] void bad_argument(std::string_view filter, const std::string& what) {
  throw Failure("filter '" + std::string(filter) + "': " + what);
}

const Value* flag_arg(const Args& args, size_t i, std::string_view name, std::string_view filter) {
  const Value* v = args.get(i, name);
  if (v && !v->is(Kind::Bool)) bad_argument(filter, std::string(name) + " must be a boolean");
  return v;
}

std::string tojson(const Value& v, const Args& args, const Limits& limits) {
  JsonStyle style;
  if (const Value* indent = args.get(0, "indent")) {
    if (!indent->is(Kind::Int) && !indent->is(Kind::None))
      bad_argument("tojson", "indent must be an integer");
    if (indent->is(Kind::Int))
      style.indent =
          std::isnan(indent->number()) ? 0 : static_cast<int>(bounded(indent->number(), -1.0, 1e6));
  }
  if (const Value* a = flag_arg(args, 99, "ensure_ascii", "tojson"))
    style.ensure_ascii = a->as_bool();
  if (const Value* s = flag_arg(args, 99, "sort_keys", "tojson")) style.sort_keys = s->as_bool();
  if (const Value* sep = args.keyword_arg("separators"); sep && !sep->is(Kind::None)) {
    if (!sep->is(Kind::Array) || sep->array().items.size() != 2 ||
        !sep->array().items[0].is(Kind::String) || !sep->array().items[1].is(Kind::String))
      bad_argument("tojson", "separators must be two strings");
    style.custom_separators = true;
    style.item_separator = sep->array().items[0].str();
    style.key_separator = sep->array().items[1].str();
  }
  return to_json(v, style, limits);
}

// JavaScript's parseInt(s, 10) and parseFloat(s): the longest number at the start (after white
// space), or NaN.
double parse_prefix(const std::string& text, bool integer) {
  const std::string_view s = trim_start(text);
  size_t i = 0;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
  if (!integer && s.substr(i, 8) == "Infinity") return s[0] == '-' ? -INFINITY : INFINITY;
  const size_t digits_from = i;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
  size_t digits = i - digits_from;
  if (!integer) {
    if (i < s.size() && s[i] == '.') {
      const size_t frac_from = ++i;
      while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
      digits += i - frac_from;
      if (digits == 0) return NAN;
    }
    if (digits > 0 && i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
      size_t j = i + 1;
      if (j < s.size() && (s[j] == '+' || s[j] == '-')) ++j;
      const size_t exp_from = j;
      while (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j]))) ++j;
      if (j > exp_from) i = j;
    }
  }
  if (digits == 0) return NAN;
  return std::strtod(std::string(s.substr(0, i)).c_str(), nullptr);
}

Value to_number(std::string_view name, const Value& v, const Args& args) {
  const bool integer = name == "int";
  if (v.is(Kind::String)) {
    const double x = parse_prefix(v.str(), integer);
    if (std::isnan(x)) {
      if (const Value* d = args.get(0, "default")) return *d;
      return integer ? Value::integer(0) : Value::floating(0);
    }
    return integer ? Value::integer(std::trunc(x)) : Value::floating(x);
  }
  if (v.is_number())
    return integer ? Value::integer(std::floor(v.number())) : Value::floating(v.number());
  if (v.is(Kind::Bool)) return integer ? Value::integer(v.number()) : Value::floating(v.number());
  not_for(name, v);
}

Value join(const Value& v, const Args& args, Heap& heap) {
  const Value* sep = args.get(0, "d");
  if (!sep) sep = args.keyword_arg("separator");
  if (sep && !sep->is(Kind::String)) bad_argument("join", "the separator must be a string");
  const std::string separator = sep ? sep->str() : "";
  std::string out;
  auto add = [&](const std::string& piece, bool first) {
    if (!first) out += separator;
    out += piece;
    heap.check_string_size(out.size());
  };
  if (v.is(Kind::Array)) {
    heap.step(v.array().items.size());
    bool first = true;
    for (const Value& item : v.array().items)
      add(js_string(item, heap.limits()), first), first = false;
  } else if (v.is(Kind::String)) {
    const std::vector<size_t> at = code_point_offsets(v.str());
    for (size_t k = 0; k + 1 < at.size(); ++k)
      add(v.str().substr(at[k], at[k + 1] - at[k]), k == 0);
  } else {
    not_for("join", v);
  }
  return heap.str(std::move(out));
}

Value sort(const Value& v, const Args& args, Heap& heap) {
  const Value* reverse = flag_arg(args, 0, "reverse", "sort");
  const Value* case_sensitive = flag_arg(args, 1, "case_sensitive", "sort");
  const Value* attribute = args.get(2, "attribute");
  if (attribute && !attribute->is(Kind::String) && !attribute->is(Kind::Int) &&
      !attribute->is(Kind::None))
    bad_argument("sort", "attribute must be a string or an integer");
  const bool by_attribute = attribute && !attribute->is(Kind::None);
  const std::string path = !by_attribute              ? ""
                           : attribute->is(Kind::Int) ? js_number(attribute->number())
                                                      : attribute->str();
  std::vector<Value> items = v.array().items;
  heap.step(items.size() * 8);
  const bool desc = reverse && reverse->as_bool(), cs = case_sensitive && case_sensitive->as_bool();
  std::stable_sort(items.begin(), items.end(), [&](const Value& a, const Value& b) {
    const int c = by_attribute
                      ? compare_values(attribute_path(a, path), attribute_path(b, path), cs)
                      : compare_values(a, b, cs);
    return desc ? c > 0 : c < 0;
  });
  return heap.array(std::move(items));
}

// A key equal for values that are SameValueZero (what a JavaScript Set compares by).
std::string identity_key(const Value& v) {
  // One letter per kind, except that integers and floats are both numbers.
  std::string key(1, v.is_number() ? 'n' : static_cast<char>('A' + static_cast<int>(v.kind())));
  switch (v.kind()) {
    case Kind::Int:
    case Kind::Float:
      key += js_number(v.number());
      break;  // 1 and 1.0 are one number
    case Kind::String:
      key += v.str();
      break;
    case Kind::Bool:
      key += v.as_bool() ? 't' : 'f';
      break;
    case Kind::None:
    case Kind::Undefined:
      break;
    default:
      key += std::to_string(reinterpret_cast<uintptr_t>(v.identity()));
  }
  return key;
}

Value unique(const Value& v, Heap& heap) {
  std::unordered_set<std::string> seen;
  std::vector<Value> items;
  heap.step(v.array().items.size());
  for (const Value& item : v.array().items)
    if (seen.insert(identity_key(item)).second) items.push_back(item);
  return heap.array(std::move(items));
}

// selectattr/rejectattr(attribute, test, args...) and select/reject(test, args...).
Value select(std::string_view name, const Value& v, const Args& args, Heap& heap) {
  const bool by_attribute = name == "selectattr" || name == "rejectattr";
  const bool keep_passing = name == "selectattr" || name == "select";
  const size_t test_at = by_attribute ? 1 : 0;
  if (by_attribute && (args.positional.empty() || !args.positional[0].is(Kind::String)))
    bad_argument(name, "the attribute must be a string");
  if (args.positional.size() > test_at && !args.positional[test_at].is(Kind::String))
    bad_argument(name, "the test must be named by a string");
  Args test_args;
  for (size_t i = test_at + 1; i < args.positional.size(); ++i)
    test_args.positional.push_back(args.positional[i]);
  std::vector<Value> kept;
  heap.step(v.array().items.size());
  for (const Value& item : v.array().items) {
    const Value* subject = &item;
    if (by_attribute) {
      if (!item.is_mapping_like())
        throw Failure("filter '" + std::string(name) + "' applies to a list of mappings");
      subject = item.object().find(args.positional[0].str());
    }
    bool passed = false;
    if (subject)
      passed = args.positional.size() > test_at
                   ? apply_test(args.positional[test_at].str(), *subject, test_args)
                   : truthy(*subject);
    if (passed == keep_passing) kept.push_back(item);
  }
  return heap.array(std::move(kept));
}

Value map(const Value& v, const Args& args, Heap& heap) {
  std::vector<Value> out;
  heap.step(v.array().items.size());
  if (const Value* attribute = args.keyword_arg("attribute")) {
    if (!attribute->is(Kind::String)) bad_argument("map", "attribute must be a string");
    const Value* fallback = args.keyword_arg("default");
    for (const Value& item : v.array().items) {
      if (!item.is_mapping_like()) bad_argument("map", "the items must be mappings");
      const Value found = attribute_path(item, attribute->str());
      out.push_back(found.is_undefined() && fallback ? *fallback : found);
    }
  } else if (!args.positional.empty() && args.positional[0].is(Kind::String)) {
    Args rest;  // map('filter', args...): the filter applied to each item
    rest.positional.assign(args.positional.begin() + 1, args.positional.end());
    rest.keyword = args.keyword;
    for (const Value& item : v.array().items)
      out.push_back(apply_filter(args.positional[0].str(), item, rest, heap));
  } else {
    bad_argument("map", "needs attribute='...' or the name of a filter");
  }
  return heap.array(std::move(out));
}

Value indent(const std::string& s, const Args& args, Heap& heap) {
  const Value* width = args.get(0, "width");
  if (width && !width->is(Kind::Int)) bad_argument("indent", "width must be an integer");
  const Value* first = args.get(1, "first");
  const Value* blank = args.get(2, "blank");
  const std::string pad(static_cast<size_t>(bounded(width ? width->number() : 4.0, 0.0, 1e6)), ' ');
  std::string out;
  size_t begin = 0, line = 0;
  while (true) {
    const size_t end = s.find('\n', begin);
    const std::string_view text = std::string_view(s).substr(
        begin, end == std::string::npos ? std::string::npos : end - begin);
    const bool skip =
        (line == 0 && !(first && truthy(*first))) || (text.empty() && !(blank && truthy(*blank)));
    if (!skip) out += pad;
    out += text;
    heap.check_string_size(out.size());
    if (end == std::string::npos) break;
    out += '\n';
    begin = end + 1, ++line;
  }
  return heap.str(std::move(out));
}

Value method(const char* name, const Value& receiver, const Args& args, Heap& heap) {
  Function f;
  f.type = Function::Type::Method;
  f.name = name;
  f.receiver = receiver;
  return call_method(f, args, heap);
}

}  // namespace

Value apply_filter(std::string_view name, const Value& v, const Args& args, Heap& heap) {
  heap.step();
  if (name == "safe") return v;
  if (name == "tojson") return heap.str(tojson(v, args, heap.limits()));
  if (name == "default" || name == "d") {
    const Value* boolean = flag_arg(args, 1, "boolean", name);
    const bool use_default = v.is_undefined() || (boolean && boolean->as_bool() && !truthy(v));
    if (!use_default) return v;
    return args.positional.empty() ? heap.str(std::string()) : args.positional[0];
  }
  if (name == "join") return join(v, args, heap);
  if (name == "int" || name == "float") return to_number(name, v, args);
  if (name == "length" || name == "count") {
    if (v.is(Kind::Array)) return Value::integer(static_cast<double>(v.array().items.size()));
    if (v.is(Kind::String)) return Value::integer(static_cast<double>(utf16_length(v.str())));
    if (v.is(Kind::Object)) return Value::integer(static_cast<double>(v.object().size()));
    not_for(name, v);
  }
  if (name == "string") {
    if (v.is_undefined() || v.is(Kind::None) || v.is(Kind::Function)) not_for(name, v);
    return v.is(Kind::String) ? v : heap.str(display(v, heap.limits()));
  }
  if (name == "items" || name == "dictsort") {
    if (!v.is(Kind::Object)) not_for(name, v);
    return method(name == "items" ? "items" : "dictsort", v, args, heap);
  }
  if (name == "abs") {
    if (!v.is_number()) not_for(name, v);
    return v.is(Kind::Int) ? Value::integer(std::fabs(v.number()))
                           : Value::floating(std::fabs(v.number()));
  }
  if (name == "bool") {
    if (!v.is(Kind::Bool)) not_for(name, v);
    return v;
  }
  if (v.is(Kind::Array)) {
    const auto& items = v.array().items;
    if (name == "list") return v;
    if (name == "first") return items.empty() ? Value() : items.front();
    if (name == "last") return items.empty() ? Value() : items.back();
    if (name == "reverse") return heap.array(std::vector<Value>(items.rbegin(), items.rend()));
    if (name == "sort") return sort(v, args, heap);
    if (name == "unique") return unique(v, heap);
    if (name == "selectattr" || name == "rejectattr" || name == "select" || name == "reject")
      return select(name, v, args, heap);
    if (name == "map") return map(v, args, heap);
  }
  if (v.is(Kind::String)) {
    const std::string& s = v.str();
    heap.step(s.size() / 256);
    if (name == "upper") return heap.str(to_upper(s));
    if (name == "lower") return heap.str(to_lower(s));
    if (name == "title") return heap.str(title_case(s));
    if (name == "capitalize") return heap.str(capitalize(s));
    if (name == "trim")
      return heap.str(trim(s));  // characters to strip are ignored, as in the reference
    if (name == "indent") return indent(s, args, heap);
    if (name == "replace") return method("replace", v, args, heap);
    if (name == "list" || name == "first" || name == "last" || name == "reverse") {
      const std::vector<size_t> at = code_point_offsets(s);
      std::vector<Value> chars;
      for (size_t k = 0; k + 1 < at.size(); ++k)
        chars.push_back(heap.str(std::string_view(s).substr(at[k], at[k + 1] - at[k])));
      if (name == "first") return chars.empty() ? Value() : chars.front();
      if (name == "last") return chars.empty() ? Value() : chars.back();
      if (name == "list") return heap.array(std::move(chars));
      std::string out;
      for (auto it = chars.rbegin(); it != chars.rend(); ++it) out += it->str();
      return heap.str(std::move(out));
    }
  }
  static const char* const kKnown[] = {
      "list",       "first",      "last",       "reverse", "sort",   "unique",
      "selectattr", "rejectattr", "select",     "reject",  "map",    "upper",
      "lower",      "title",      "capitalize", "trim",    "indent", "replace"};
  if (std::find(std::begin(kKnown), std::end(kKnown), name) != std::end(kKnown)) not_for(name, v);
  throw Failure("unknown filter '" + std::string(name) + "'");
}

bool apply_test(std::string_view name, const Value& v, const Args& args) {
  const Kind k = v.kind();
  if (name == "defined") return k != Kind::Undefined;
  if (name == "undefined") return k == Kind::Undefined;
  if (name == "none") return k == Kind::None;
  if (name == "boolean") return k == Kind::Bool;
  if (name == "true") return k == Kind::Bool && v.as_bool();
  if (name == "false") return k == Kind::Bool && !v.as_bool();
  if (name == "string") return k == Kind::String;
  if (name == "number") return v.is_number();
  if (name == "integer") return k == Kind::Int;
  if (name == "callable") return k == Kind::Function;
  if (name == "mapping") return k == Kind::Object;
  // A tuple is not iterable here, as in the reference (its tuples are a separate type).
  if (name == "iterable") return (k == Kind::Array && !v.array().tuple) || k == Kind::String;
  if (name == "sequence") return k == Kind::Array || k == Kind::Object || k == Kind::String;
  if (name == "lower") return k == Kind::String && to_lower(v.str()) == v.str();
  if (name == "upper") return k == Kind::String && to_upper(v.str()) == v.str();
  if (name == "odd" || name == "even") {
    if (k != Kind::Int)
      throw Failure("test '" + std::string(name) + "' applies to integers, not to " + a_kind(k));
    const bool odd = std::fmod(v.number(), 2) != 0;
    return name == "odd" ? odd : !odd;
  }
  if (name == "equalto" || name == "eq" || name == "sameas") {
    return strict_equal(v, args.positional.empty() ? Value() : args.positional[0]);
  }
  throw Failure("unknown test '" + std::string(name) + "'");
}

}  // namespace eagle2::jinja

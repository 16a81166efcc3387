#include "chat/jinja_value.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "chat/jinja_json.h"
#include "chat/jinja_text.h"

namespace eagle2::jinja {

// --- Object, Scope ---

const Value* Object::find(std::string_view key) const {
  if (!index_.empty()) {
    auto it = index_.find(std::string(key));
    return it == index_.end() ? nullptr : &entries_[it->second].second;
  }
  for (const auto& [k, v] : entries_)
    if (k == key) return &v;
  return nullptr;
}

void Object::set(std::string_view key, Value value) {
  if (const Value* existing = find(key)) {
    *const_cast<Value*>(existing) = std::move(value);
    return;
  }
  entries_.emplace_back(std::string(key), std::move(value));
  if (!index_.empty()) {
    index_.emplace(entries_.back().first, entries_.size() - 1);
  } else if (entries_.size() == kIndexFrom) {
    for (size_t i = 0; i < entries_.size(); ++i) index_.emplace(entries_[i].first, i);
  }
}

bool Object::erase(std::string_view key) {
  for (size_t i = 0; i < entries_.size(); ++i) {
    if (entries_[i].first != key) continue;
    entries_.erase(entries_.begin() + static_cast<std::ptrdiff_t>(i));
    index_.clear();
    if (entries_.size() >= kIndexFrom)
      for (size_t j = 0; j < entries_.size(); ++j) index_.emplace(entries_[j].first, j);
    return true;
  }
  return false;
}

const Value* Scope::lookup(std::string_view name) const {
  for (const Scope* s = this; s; s = s->parent)
    if (const Value* v = s->vars.find(name)) return v;
  return nullptr;
}

// --- Heap ---

void Heap::charge(uint64_t bytes) {
  allocated_ += bytes;
  if (allocated_ > limits_.max_alloc_bytes) over_budget();
}

void Heap::check_room(uint64_t bytes) const {
  if (bytes > limits_.max_alloc_bytes - std::min(allocated_, limits_.max_alloc_bytes))
    over_budget();
}

void Heap::over_budget() const {
  throw Failure("the template allocated more than " + std::to_string(limits_.max_alloc_bytes) +
                " bytes (limit)");
}

void Heap::over_steps() const {
  throw Failure("the template took more than " + std::to_string(limits_.max_steps) +
                " evaluation steps (limit)");
}

void Heap::over_string(size_t bytes) const {
  throw Failure("a string of " + std::to_string(bytes) + " bytes exceeds the limit of " +
                std::to_string(limits_.max_string_bytes) + " bytes");
}

Value Heap::str(std::string s) {
  check_string_size(s.size());
  charge(s.capacity() + 32);
  return Value::string(std::make_shared<const std::string>(std::move(s)));
}

Value Heap::array(std::vector<Value> items, bool tuple) {
  charge(sizeof(Array) + items.capacity() * sizeof(Value));  // what the vector really holds
  arrays_.push_back(std::make_unique<Array>(Array{std::move(items), tuple}));
  return Value::of(arrays_.back().get());
}

Object* Heap::new_object() {
  charge(sizeof(Object));
  objects_.push_back(std::make_unique<Object>());
  return objects_.back().get();
}

Value Heap::object(Object o, bool is_namespace) {
  charge(sizeof(Object) + o.size() * (sizeof(Value) + 48));
  objects_.push_back(std::make_unique<Object>(std::move(o)));
  return Value::of(objects_.back().get(), is_namespace);
}

Value Heap::function(Function f) {
  charge(sizeof(Function) + f.name.size());
  functions_.push_back(std::make_unique<Function>(std::move(f)));
  return Value::of(functions_.back().get());
}

Scope* Heap::scope(Scope* parent) {
  charge(sizeof(Scope));
  scopes_.push_back(std::make_unique<Scope>());
  scopes_.back()->parent = parent;
  return scopes_.back().get();
}

// --- Meaning of values ---

const char* kind_name(Kind kind) {
  switch (kind) {
    case Kind::Undefined:
      return "undefined";
    case Kind::None:
      return "none";
    case Kind::Bool:
      return "boolean";
    case Kind::Int:
      return "integer";
    case Kind::Float:
      return "float";
    case Kind::String:
      return "string";
    case Kind::Array:
      return "list";
    case Kind::Object:
      return "mapping";
    case Kind::Namespace:
      return "namespace";
    case Kind::Function:
      return "function";
  }
  return "?";
}

bool truthy(const Value& v) {
  switch (v.kind()) {
    case Kind::Undefined:
    case Kind::None:
      return false;
    case Kind::Bool:
      return v.as_bool();
    case Kind::Int:
    case Kind::Float:
      return v.number() != 0 && !std::isnan(v.number());
    case Kind::String:
      return !v.str().empty();
    case Kind::Array:
      return !v.array().items.empty();
    case Kind::Object:
      return v.object().size() > 0;
    case Kind::Namespace:
    case Kind::Function:
      return true;
  }
  return false;
}

std::string js_number(double x) {
  if (std::isnan(x)) return "NaN";
  if (x == 0) return "0";  // -0 too
  if (std::isinf(x)) return x < 0 ? "-Infinity" : "Infinity";
  // Shortest round-trip digits d1.d2...dk and exponent e, as ECMAScript's Number::toString wants.
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, x, std::chars_format::scientific);
  const std::string_view sci(buf, static_cast<size_t>(r.ptr - buf));
  std::string sign, digits;
  size_t i = 0;
  if (sci[0] == '-') sign = "-", i = 1;
  const size_t e_pos = sci.find('e');
  for (; i < e_pos; ++i)
    if (sci[i] != '.') digits += sci[i];
  const int n = std::atoi(std::string(sci.substr(e_pos + 1)).c_str()) + 1;
  const int k = static_cast<int>(digits.size());
  if (k <= n && n <= 21) return sign + digits + std::string(static_cast<size_t>(n - k), '0');
  if (0 < n && n <= 21) return sign + digits.substr(0, n) + "." + digits.substr(n);
  if (-6 < n && n <= 0) return sign + "0." + std::string(static_cast<size_t>(-n), '0') + digits;
  const int e = n - 1;
  return sign + digits.substr(0, 1) + (k > 1 ? "." + digits.substr(1) : "") + "e" +
         (e >= 0 ? "+" : "-") + std::to_string(std::abs(e));
}

namespace {

// How the reference prints a float: integral values keep ".0" (toFixed(1)), others are
// JavaScript numbers.
std::string float_string(double x) {
  if (x == 0 && std::signbit(x)) return "-0.0";
  if (std::isfinite(x) && x == std::trunc(x) && std::fabs(x) < 1e21) {
    char buf[400];
    std::snprintf(buf, sizeof buf, "%.1f", x);
    return buf;
  }
  return js_number(x);
}

[[noreturn]] void function_to_string() {
  throw Failure("a function cannot be converted to a string");
}

}  // namespace

std::string display(const Value& v, const Limits& limits) {
  switch (v.kind()) {
    case Kind::Undefined:
      return "undefined";
    case Kind::None:
      return "null";
    case Kind::Bool:
      return v.as_bool() ? "true" : "false";
    case Kind::Int:
      return js_number(v.number());
    case Kind::Float:
      return float_string(v.number());
    case Kind::String:
      return v.str();
    case Kind::Array:
    case Kind::Object:
    case Kind::Namespace: {
      JsonStyle style;  // to_json bounds the nesting
      style.undefined_as_null = false;
      return to_json(v, style, limits);
    }
    case Kind::Function:
      function_to_string();
  }
  return "";
}

std::string js_string(const Value& v, const Limits& limits) {
  switch (v.kind()) {
    case Kind::Undefined:
    case Kind::None:
      return "";
    case Kind::Bool:
      return v.as_bool() ? "true" : "false";
    case Kind::Int:
    case Kind::Float:
      return js_number(v.number());
    case Kind::String:
      return v.str();
    case Kind::Array: {
      // Array.prototype.join over the reference's value objects: each item as it prints.
      std::string out;
      bool first = true;
      for (const Value& item : v.array().items) {
        if (!first) out += ',';
        first = false;
        out += display(item, limits);
        if (out.size() > limits.max_string_bytes)
          throw Failure("a string exceeds the limit of " + std::to_string(limits.max_string_bytes) +
                        " bytes");
      }
      return out;
    }
    case Kind::Object:
    case Kind::Namespace:
      return "[object Map]";
    case Kind::Function:
      function_to_string();
  }
  return "";
}

namespace {

// JavaScript's StringToNumber: surrounding white space ignored, "" is 0, decimal (with exponent),
// 0x/0o/0b integers and Infinity; anything else is NaN.
double string_to_number(std::string_view text) {
  text = trim(text);
  if (text.empty()) return 0;
  if (text.size() > 2 && text[0] == '0' &&
      std::string_view("xXoObB").find(text[1]) != std::string_view::npos) {
    const int base = (text[1] == 'x' || text[1] == 'X')   ? 16
                     : (text[1] == 'o' || text[1] == 'O') ? 8
                                                          : 2;
    double value = 0;
    for (char c : text.substr(2)) {
      int d = c >= '0' && c <= '9'   ? c - '0'
              : c >= 'a' && c <= 'f' ? c - 'a' + 10
              : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                     : 99;
      if (d >= base) return NAN;
      value = value * base + d;
    }
    return value;
  }
  std::string_view body = text;
  bool negative = false;
  if (body[0] == '+' || body[0] == '-') negative = body[0] == '-', body.remove_prefix(1);
  if (body == "Infinity") return negative ? -INFINITY : INFINITY;
  // A decimal literal: digits, an optional fraction, an optional exponent, at least one digit.
  size_t i = 0, mantissa_digits = 0;
  while (i < body.size() && body[i] >= '0' && body[i] <= '9') ++i, ++mantissa_digits;
  if (i < body.size() && body[i] == '.') {
    ++i;
    while (i < body.size() && body[i] >= '0' && body[i] <= '9') ++i, ++mantissa_digits;
  }
  if (mantissa_digits == 0) return NAN;
  if (i < body.size() && (body[i] == 'e' || body[i] == 'E')) {
    ++i;
    if (i < body.size() && (body[i] == '+' || body[i] == '-')) ++i;
    size_t exp_digits = 0;
    while (i < body.size() && body[i] >= '0' && body[i] <= '9') ++i, ++exp_digits;
    if (exp_digits == 0) return NAN;
  }
  if (i != body.size()) return NAN;
  const double value = std::strtod(std::string(body).c_str(), nullptr);
  return negative ? -value : value;
}

enum class JsType { Undefined, Null, Number, String, Boolean, Object };

JsType js_type(const Value& v) {
  switch (v.kind()) {
    case Kind::Undefined:
      return JsType::Undefined;
    case Kind::None:
      return JsType::Null;
    case Kind::Bool:
      return JsType::Boolean;
    case Kind::Int:
    case Kind::Float:
      return JsType::Number;
    case Kind::String:
      return JsType::String;
    default:
      return JsType::Object;
  }
}

// The primitive a container turns into when compared with ==: a list its joined string, other
// containers "[object Map]" (functions, which have no sensible text, likewise).
std::string to_primitive(const Value& v, const Limits& limits) {
  return v.is(Kind::Array) ? js_string(v, limits) : "[object Map]";
}

}  // namespace

bool strict_equal(const Value& a, const Value& b) {
  const JsType ta = js_type(a), tb = js_type(b);
  if (ta != tb) return false;
  switch (ta) {
    case JsType::Undefined:
    case JsType::Null:
      return true;
    case JsType::Number:
    case JsType::Boolean:
      return a.number() == b.number();
    case JsType::String:
      return a.str() == b.str();
    case JsType::Object:
      return a.identity() == b.identity();
  }
  return false;
}

bool loose_equal(const Value& a, const Value& b, const Limits& limits) {
  const JsType ta = js_type(a), tb = js_type(b);
  if (ta == tb) return strict_equal(a, b);
  const auto nullish = [](JsType t) { return t == JsType::Undefined || t == JsType::Null; };
  if (nullish(ta) || nullish(tb)) return nullish(ta) && nullish(tb);
  // Booleans compare as numbers; then a number meets a string as a number; a container meets a
  // primitive as its primitive.
  Value x = ta == JsType::Boolean ? Value::integer(a.number()) : a;
  Value y = tb == JsType::Boolean ? Value::integer(b.number()) : b;
  if (js_type(x) == JsType::Object && js_type(y) == JsType::Object)
    return x.identity() == y.identity();
  Value px = js_type(x) == JsType::Object
                 ? Value::string(std::make_shared<const std::string>(to_primitive(x, limits)))
                 : x;
  Value py = js_type(y) == JsType::Object
                 ? Value::string(std::make_shared<const std::string>(to_primitive(y, limits)))
                 : y;
  const JsType tx = js_type(px), ty = js_type(py);
  if (tx == ty) return strict_equal(px, py);
  const double nx = tx == JsType::String ? string_to_number(px.str()) : px.number();
  const double ny = ty == JsType::String ? string_to_number(py.str()) : py.number();
  return nx == ny;
}

}  // namespace eagle2::jinja

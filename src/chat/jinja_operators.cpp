#include "chat/jinja_operators.h"

#include <cmath>

namespace eagle2::jinja {
namespace {

[[noreturn]] void unsupported(std::string_view op, const Value& l, const Value& r) {
  throw Failure("operator '" + std::string(op) + "' does not apply to " + kind_name(l.kind()) +
                " and " + kind_name(r.kind()));
}

bool numeric_like(const Value& v) {
  return v.is_number() || v.is(Kind::Bool);
}

Value number_result(double x, bool as_float) {
  return as_float ? Value::floating(x) : Value::integer(x);
}

// `in` on a list: an item that is === the value (containers by identity).
bool contains(const Array& a, const Value& v, Heap& heap) {
  heap.step(a.items.size() / 16);
  for (const Value& item : a.items)
    if (strict_equal(item, v)) return true;
  return false;
}

}  // namespace

Value binary_op(std::string_view op, const Value& l, const Value& r, Heap& heap) {
  const Limits& limits = heap.limits();
  if (op == "==" || op == "!=") {
    if (l.is(Kind::String) && r.is(Kind::String)) heap.step(l.str().size() / 64);
    return Value::boolean(loose_equal(l, r, limits) == (op == "=="));
  }
  if (l.is_undefined() || r.is_undefined()) {
    // `x in undefined` is false, as in the reference; everything else fails loudly.
    if (r.is_undefined() && (op == "in" || op == "not in")) return Value::boolean(op == "not in");
    throw Failure("operator '" + std::string(op) + "' does not apply to undefined values (" +
                  kind_name(l.kind()) + " " + std::string(op) + " " + kind_name(r.kind()) + ")");
  }
  if (l.is(Kind::None) || r.is(Kind::None))
    throw Failure("operator '" + std::string(op) + "' does not apply to none (" +
                  kind_name(l.kind()) + " " + std::string(op) + " " + kind_name(r.kind()) + ")");
  if (op == "~") {
    std::string a = js_string(l, limits), b = js_string(r, limits);
    heap.check_string_size(a.size() + b.size());
    return heap.str(a + b);
  }
  if (op == "**" && numeric_like(l) && numeric_like(r)) {
    const double a = l.number(), b = r.number();
    if (a == 0 && b < 0) throw Failure("0 cannot be raised to a negative power");
    const double result = std::pow(a, b);
    if (!std::isfinite(result)) throw Failure("the power is not a finite real number");
    return number_result(result, l.is(Kind::Float) || r.is(Kind::Float) || b < 0);
  }
  if (l.is_number() && r.is_number()) {
    const double a = l.number(), b = r.number();
    const bool as_float = l.is(Kind::Float) || r.is(Kind::Float);
    if (op == "+") return number_result(a + b, as_float);
    if (op == "-") return number_result(a - b, as_float);
    if (op == "*") return number_result(a * b, as_float);
    if (op == "/") return Value::floating(a / b);
    if (op == "//") return number_result(std::floor(a / b), as_float);
    if (op == "%") return number_result(std::fmod(a, b), as_float);  // JavaScript's remainder
    if (op == "<") return Value::boolean(a < b);
    if (op == ">") return Value::boolean(a > b);
    if (op == "<=") return Value::boolean(a <= b);
    if (op == ">=") return Value::boolean(a >= b);
  } else if (l.is(Kind::Array) && r.is(Kind::Array)) {
    if (op == "+") {
      heap.check_room((l.array().items.size() + r.array().items.size()) * sizeof(Value));
      std::vector<Value> items;
      items.reserve(l.array().items.size() + r.array().items.size());
      items.insert(items.end(), l.array().items.begin(), l.array().items.end());
      items.insert(items.end(), r.array().items.begin(), r.array().items.end());
      return heap.array(std::move(items));
    }
  } else if (r.is(Kind::Array)) {
    if (op == "in") return Value::boolean(contains(r.array(), l, heap));
    if (op == "not in") return Value::boolean(!contains(r.array(), l, heap));
  }
  if ((l.is(Kind::String) || r.is(Kind::String)) && op == "+") {
    std::string a = js_string(l, limits), b = js_string(r, limits);
    heap.check_string_size(a.size() + b.size());
    return heap.str(a + b);
  }
  if (l.is(Kind::String) && r.is(Kind::String) && (op == "in" || op == "not in")) {
    heap.step(r.str().size() / 64);
    return Value::boolean((r.str().find(l.str()) != std::string::npos) == (op == "in"));
  }
  if (l.is(Kind::String) && r.is(Kind::Object) && (op == "in" || op == "not in"))
    return Value::boolean((r.object().find(l.str()) != nullptr) == (op == "in"));
  unsupported(op, l, r);
}

Value unary_op(std::string_view op, const Value& v) {
  if (op == "not") return Value::boolean(!truthy(v));
  if (v.is_number() || v.is(Kind::Bool)) {
    const double x = op == "-" ? -v.number() : v.number();
    return v.is(Kind::Float) ? Value::floating(x) : Value::integer(x);
  }
  throw Failure("unary '" + std::string(op) + "' does not apply to " + kind_name(v.kind()));
}

}  // namespace eagle2::jinja

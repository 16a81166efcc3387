// The values a template computes with. They follow the reference renderer (@huggingface/jinja,
// a JavaScript program): numbers are doubles whose kind (integer or float) decides how they print,
// undefined and none are distinct, lists and mappings are compared by identity, and a mapping
// keeps its insertion order.
//
// Containers (lists, mappings, namespaces, functions, scopes) live in the Heap of one render and
// are referred to by plain pointers: a namespace can be made to contain itself, and with an arena
// such cycles cost nothing and deep nesting is never freed recursively. Strings hold no references,
// so they are shared and freed as soon as unused.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "chat/jinja_limits.h"

namespace eagle2::jinja {

struct Node;
struct Array;
class Object;
struct Function;
struct Scope;

enum class Kind : uint8_t {
  Undefined,
  None,
  Bool,
  Int,
  Float,
  String,
  Array,
  Object,
  Namespace,
  Function
};

class Value {
 public:
  Value() = default;  // undefined
  static Value none() { return Value(Kind::None); }
  static Value boolean(bool b) {
    Value v(Kind::Bool);
    v.number_ = b ? 1 : 0;
    return v;
  }
  static Value integer(double n) {
    Value v(Kind::Int);
    v.number_ = n;
    return v;
  }
  static Value floating(double n) {
    Value v(Kind::Float);
    v.number_ = n;
    return v;
  }
  static Value string(std::shared_ptr<const std::string> s) {
    Value v(Kind::String);
    v.string_ = std::move(s);
    return v;
  }
  static Value of(Array* a) { return Value(Kind::Array, a); }
  static Value of(Object* o, bool is_namespace = false) {
    return Value(is_namespace ? Kind::Namespace : Kind::Object, o);
  }
  static Value of(Function* f) { return Value(Kind::Function, f); }

  Kind kind() const { return kind_; }
  bool is(Kind k) const { return kind_ == k; }
  bool is_undefined() const { return kind_ == Kind::Undefined; }
  bool is_number() const { return kind_ == Kind::Int || kind_ == Kind::Float; }
  bool is_mapping_like() const { return kind_ == Kind::Object || kind_ == Kind::Namespace; }

  bool as_bool() const { return number_ != 0; }
  double number() const { return number_; }  // Int, Float (and Bool as 0/1)
  const std::string& str() const { return *string_; }
  const std::shared_ptr<const std::string>& shared_str() const { return string_; }
  Array& array() const { return *static_cast<Array*>(pointer_); }
  Object& object() const { return *static_cast<Object*>(pointer_); }
  Function& function() const { return *static_cast<Function*>(pointer_); }
  const void* identity() const { return pointer_; }  // the container, for comparison by identity

 private:
  explicit Value(Kind k, void* p = nullptr) : kind_(k), pointer_(p) {}
  Kind kind_ = Kind::Undefined;
  double number_ = 0;
  std::shared_ptr<const std::string> string_;
  void* pointer_ = nullptr;
};

struct Array {
  std::vector<Value> items;
  bool tuple = false;  // made by a tuple literal: the reference's `iterable` test says false
};

// Insertion-ordered string-keyed entries; large ones get a hash index so lookups stay O(1).
class Object {
 public:
  const Value* find(std::string_view key) const;
  void set(std::string_view key, Value value);  // an existing key keeps its place
  bool erase(std::string_view key);
  size_t size() const { return entries_.size(); }
  const std::vector<std::pair<std::string, Value>>& entries() const { return entries_; }

 private:
  static constexpr size_t kIndexFrom = 12;
  std::vector<std::pair<std::string, Value>> entries_;
  std::unordered_map<std::string, size_t> index_;  // built once entries_ reaches kIndexFrom
};

// Callables: global functions, a method bound to its receiver ("abc".upper), a macro, or the
// `caller` of a call block.
struct Function {
  enum class Type { Global, Method, Macro, Caller } type = Type::Global;
  std::string name;
  Value receiver;              // Method
  const Node* node = nullptr;  // Macro: the macro statement; Caller: the call statement
  Scope* scope = nullptr;      // Caller: the scope the call block runs in
};

// Variables of one block scope, looked up through the parents (the reference's Environment).
struct Scope {
  Scope* parent = nullptr;
  Object vars;
  const Value* lookup(std::string_view name) const;
};

// Owns the containers of one render and charges its limits.
class Heap {
 public:
  explicit Heap(const Limits& limits) : limits_(limits) {}
  Heap(const Heap&) = delete;
  Heap& operator=(const Heap&) = delete;

  const Limits& limits() const { return limits_; }

  Value str(std::string s);
  Value str(std::string_view s) { return str(std::string(s)); }
  Value str(const char* s) { return str(std::string(s)); }
  Value array(std::vector<Value> items, bool tuple = false);
  Object* new_object();
  Value object(Object o, bool is_namespace = false);
  Value function(Function f);
  Scope* scope(Scope* parent);

  // One evaluation step, or `units` steps of work on items or bytes.
  void step(uint64_t units = 1) {
    steps_ += units;
    if (steps_ > limits_.max_steps) over_steps();
  }
  // Fails before a string of this many bytes is made.
  void check_string_size(size_t bytes) const {
    if (bytes > limits_.max_string_bytes) over_string(bytes);
  }
  void charge(uint64_t bytes);
  // Fails if `bytes` more would pass the allocation budget, charging nothing: checked before
  // building something large (a range, a joined list) that is charged once it exists.
  void check_room(uint64_t bytes) const;

 private:
  [[noreturn]] void over_budget() const;
  [[noreturn]] void over_steps() const;
  [[noreturn]] void over_string(size_t bytes) const;

  Limits limits_;
  uint64_t steps_ = 0;
  uint64_t allocated_ = 0;
  std::vector<std::unique_ptr<Array>> arrays_;
  std::vector<std::unique_ptr<Object>> objects_;
  std::vector<std::unique_ptr<Function>> functions_;
  std::vector<std::unique_ptr<Scope>> scopes_;
};

// --- What values mean (jinja_value.cpp) ---

// The type's name in error messages ("string", "list", "undefined", ...).
const char* kind_name(Kind kind);
// Python-like truthiness as the reference has it (a namespace or function is always true).
bool truthy(const Value& v);
// How {{ v }} prints: integers as JavaScript numbers, integral floats with ".0", true/false,
// lists and mappings as JSON (undefined inside them as "undefined").
std::string display(const Value& v, const Limits& limits);
// JavaScript's String(v) as the reference uses it for `~`, `+` on strings and `join`: numbers
// without ".0", a list as its items' display joined by ",", a mapping as "[object Map]", none and
// undefined as "".
std::string js_string(const Value& v, const Limits& limits);
// JavaScript's Number.prototype.toString (shortest round-trip digits).
std::string js_number(double x);
// `==`: JavaScript's loose equality on the underlying values (1 == "1", containers by identity).
bool loose_equal(const Value& a, const Value& b, const Limits& limits);
// JavaScript's ===, used by `in` on lists, `unique` and the `equalto` test.
bool strict_equal(const Value& a, const Value& b);

}  // namespace eagle2::jinja

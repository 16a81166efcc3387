#include "chat/jinja_json.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "chat/jinja_text.h"

namespace eagle2::jinja {

namespace {

[[noreturn]] void too_deep(const Limits& limits) {
  throw Failure("a value nests deeper than " + std::to_string(limits.max_value_depth) +
                " levels (or contains itself)");
}

// JSON.stringify of a string, then (ensure_ascii) every UTF-16 unit from U+007F up as \uXXXX.
void append_quoted(std::string& out, std::string_view s, bool ensure_ascii) {
  char buf[16];
  out += '"';
  size_t i = 0;
  while (i < s.size()) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      switch (c) {
        case '"':
          out += "\\\"";
          break;
        case '\\':
          out += "\\\\";
          break;
        case '\b':
          out += "\\b";
          break;
        case '\f':
          out += "\\f";
          break;
        case '\n':
          out += "\\n";
          break;
        case '\r':
          out += "\\r";
          break;
        case '\t':
          out += "\\t";
          break;
        default:
          if (c < 0x20 || (ensure_ascii && c == 0x7F)) {
            std::snprintf(buf, sizeof buf, "\\u%04x", c);
            out += buf;
          } else {
            out += static_cast<char>(c);
          }
      }
      ++i;
      continue;
    }
    size_t n = 0;
    const char32_t cp = code_point_at(s, i, &n);
    if (!ensure_ascii) {
      out.append(s.substr(i, n));
    } else if (cp < 0x10000) {
      std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(cp));
      out += buf;
    } else {
      const char32_t v = cp - 0x10000;
      std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(0xD800 + (v >> 10)));
      out += buf;
      std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(0xDC00 + (v & 0x3FF)));
      out += buf;
    }
    i += n;
  }
  out += '"';
}

// An approximation of JavaScript's localeCompare (what the reference sorts keys with), exact for
// the usual ASCII keys: punctuation before digits before letters, letters case-insensitively,
// and on a tie lowercase before uppercase.
int primary_rank(unsigned char c) {
  if (c >= 'a' && c <= 'z') return 300 + c;
  if (c >= 'A' && c <= 'Z') return 300 + c + 32;
  if (c >= '0' && c <= '9') return 200 + c;
  return c < 0x80 ? c : 1000 + c;
}

bool locale_less(const std::string& a, const std::string& b) {
  const size_t n = std::min(a.size(), b.size());
  for (size_t i = 0; i < n; ++i) {
    const int ra = primary_rank(static_cast<unsigned char>(a[i]));
    const int rb = primary_rank(static_cast<unsigned char>(b[i]));
    if (ra != rb) return ra < rb;
  }
  if (a.size() != b.size()) return a.size() < b.size();
  for (size_t i = 0; i < n; ++i)
    if (a[i] != b[i]) return a[i] > b[i];  // same letter: the lowercase (larger byte) first
  return false;
}

class Writer {
 public:
  Writer(const JsonStyle& style, const Limits& limits) : style_(style), limits_(limits) {
    if (style.custom_separators) {
      item_ = style.item_separator, key_ = style.key_separator;
    } else {
      item_ = style.indent > 0 ? "," : ", ";
      key_ = ": ";
    }
  }

  void write(const Value& v, int depth) {
    if (depth > limits_.max_value_depth) too_deep(limits_);
    switch (v.kind()) {
      case Kind::Undefined:
        out_ += style_.undefined_as_null ? "null" : "undefined";
        break;
      case Kind::None:
        out_ += "null";
        break;
      case Kind::Bool:
        out_ += v.as_bool() ? "true" : "false";
        break;
      case Kind::Int:
      case Kind::Float:
        out_ += std::isfinite(v.number()) ? js_number(v.number()) : "null";
        break;
      case Kind::String:
        append_quoted(out_, v.str(), style_.ensure_ascii);
        break;
      case Kind::Array:
        write_array(v.array(), depth);
        break;
      case Kind::Object:
      case Kind::Namespace:
        write_object(v.object(), depth);
        break;
      case Kind::Function:
        throw Failure("a function cannot be converted to JSON");
    }
    if (out_.size() > limits_.max_string_bytes)
      throw Failure("JSON text exceeds the limit of " + std::to_string(limits_.max_string_bytes) +
                    " bytes");
  }

  std::string take() { return std::move(out_); }

 private:
  // A newline and the indentation of `depth`, checked first: a large indent times a deep value
  // must fail before it is allocated.
  void pad(int depth) {
    const size_t n = static_cast<size_t>(style_.indent) * static_cast<size_t>(depth);
    if (out_.size() + n + 1 > limits_.max_string_bytes)
      throw Failure("JSON text exceeds the limit of " + std::to_string(limits_.max_string_bytes) +
                    " bytes");
    out_ += '\n';
    out_.append(n, ' ');
  }

  void write_array(const Array& a, int depth) {
    const bool indented = style_.indent > 0 && !a.items.empty();
    out_ += '[';
    for (size_t i = 0; i < a.items.size(); ++i) {
      if (i > 0) out_ += item_;
      if (indented) pad(depth + 1);
      write(a.items[i], depth + 1);
    }
    if (indented) pad(depth);
    out_ += ']';
  }

  void write_object(const Object& o, int depth) {
    std::vector<const std::pair<std::string, Value>*> entries;
    for (const auto& e : o.entries()) entries.push_back(&e);
    if (style_.sort_keys)
      std::stable_sort(entries.begin(), entries.end(),
                       [](auto* a, auto* b) { return locale_less(a->first, b->first); });
    const bool indented = style_.indent > 0 && !entries.empty();
    out_ += '{';
    for (size_t i = 0; i < entries.size(); ++i) {
      if (i > 0) out_ += item_;
      if (indented) pad(depth + 1);
      append_quoted(out_, entries[i]->first, style_.ensure_ascii);
      out_ += key_;
      write(entries[i]->second, depth + 1);
    }
    if (indented) pad(depth);
    out_ += '}';
  }

  const JsonStyle& style_;
  const Limits& limits_;
  std::string item_, key_;
  std::string out_;
};

// JavaScript orders an object's array-index keys ("0" ... "4294967294", no leading zeros) first,
// ascending, then the other keys in insertion order.
bool array_index_key(const std::string& key, double* index) {
  if (key.empty() || key.size() > 10) return false;
  if (key.size() > 1 && key[0] == '0') return false;
  double v = 0;
  for (char c : key) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  if (v > 4294967294.0) return false;
  *index = v;
  return true;
}

}  // namespace

std::string to_json(const Value& v, const JsonStyle& style, const Limits& limits) {
  if (style.indent < 0) throw Failure("tojson: indent must not be negative");
  Writer w(style, limits);
  w.write(v, 0);
  return w.take();
}

Value from_json(const nlohmann::ordered_json& j, Heap& heap, int depth) {
  using T = nlohmann::ordered_json::value_t;
  if (depth > heap.limits().max_value_depth)
    throw Failure("the input nests deeper than " + std::to_string(heap.limits().max_value_depth) +
                  " levels");
  heap.step();
  switch (j.type()) {
    case T::null:
    case T::discarded:
      return Value::none();
    case T::boolean:
      return Value::boolean(j.get<bool>());
    case T::number_integer:
      return Value::integer(static_cast<double>(j.get<int64_t>()));
    case T::number_unsigned:
      return Value::integer(static_cast<double>(j.get<uint64_t>()));
    case T::number_float: {
      const double x = j.get<double>();
      return std::isfinite(x) && x == std::trunc(x) ? Value::integer(x) : Value::floating(x);
    }
    case T::string: {
      const auto& s = j.get_ref<const std::string&>();
      if (!valid_utf8(s)) throw Failure("an input string is not valid UTF-8");
      return heap.str(s);
    }
    case T::array: {
      std::vector<Value> items;
      items.reserve(j.size());
      for (const auto& item : j) items.push_back(from_json(item, heap, depth + 1));
      return heap.array(std::move(items));
    }
    case T::object: {
      using Entry = std::pair<const std::string*, const nlohmann::ordered_json*>;
      std::vector<std::pair<double, Entry>> indexed;
      std::vector<Entry> named;
      for (auto it = j.begin(); it != j.end(); ++it) {
        if (!valid_utf8(it.key())) throw Failure("an input key is not valid UTF-8");
        double index = 0;
        if (array_index_key(it.key(), &index))
          indexed.emplace_back(index, Entry{&it.key(), &it.value()});
        else
          named.emplace_back(&it.key(), &it.value());
      }
      std::stable_sort(indexed.begin(), indexed.end(),
                       [](const auto& a, const auto& b) { return a.first < b.first; });
      Object o;
      for (const auto& [index, e] : indexed) o.set(*e.first, from_json(*e.second, heap, depth + 1));
      for (const auto& e : named) o.set(*e.first, from_json(*e.second, heap, depth + 1));
      return heap.object(std::move(o));
    }
    case T::binary:
      throw Failure("binary JSON values are not supported");
  }
  return Value();
}

}  // namespace eagle2::jinja

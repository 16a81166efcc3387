#include "chat/jinja_methods.h"

#include <algorithm>
#include <cmath>

#include "chat/jinja_text.h"

namespace eagle2::jinja {

const Value* Args::keyword_arg(std::string_view name) const {
  for (const auto& [k, v] : keyword)
    if (k == name) return &v;
  return nullptr;
}

const Value* Args::get(size_t i, std::string_view name) const {
  if (i < positional.size()) return &positional[i];
  return keyword_arg(name);
}

namespace {

const char* const kStringMethods[] = {"upper",      "lower",  "strip",  "title",
                                      "capitalize", "rstrip", "lstrip", "startswith",
                                      "endswith",   "split",  "replace"};
const char* const kObjectMethods[] = {"get", "items", "keys", "values", "dictsort"};

template <size_t N>
bool listed(const char* const (&names)[N], std::string_view name) {
  return std::find(std::begin(names), std::end(names), name) != std::end(names);
}

Value bound(const Value& receiver, std::string_view name, Heap& heap) {
  Function f;
  f.type = Function::Type::Method;
  f.name = std::string(name);
  f.receiver = receiver;
  return heap.function(std::move(f));
}

// JavaScript's ToIntegerOrInfinity for indices, clamped so that it converts safely.
double index_of(double x) {
  if (std::isnan(x)) return 0;
  return std::clamp(std::trunc(x), -1e18, 1e18);
}

}  // namespace

Value get_member(const Value& object, const Value& key, Heap& heap) {
  if (object.is_mapping_like()) {
    if (!key.is(Kind::String))
      throw Failure(std::string("a ") + kind_name(object.kind()) +
                    " is indexed by strings, not by " + kind_name(key.kind()));
    if (const Value* v = object.object().find(key.str())) return *v;
    if (object.is(Kind::Object) && listed(kObjectMethods, key.str()))
      return bound(object, key.str(), heap);
    return Value();
  }
  if (object.is(Kind::Array) || object.is(Kind::String)) {
    if (key.is(Kind::Int)) {
      const double i = index_of(key.number());
      if (object.is(Kind::String)) {
        std::string ch;
        return utf16_at(object.str(), i, &ch) ? heap.str(std::move(ch)) : Value();
      }
      const auto& items = object.array().items;
      const double n = static_cast<double>(items.size());
      const double at = i < 0 ? i + n : i;
      return at >= 0 && at < n ? items[static_cast<size_t>(at)] : Value();
    }
    if (!key.is(Kind::String))
      throw Failure(std::string("a ") + kind_name(object.kind()) +
                    " is indexed by integers (or names its methods by strings), not by " +
                    kind_name(key.kind()));
    if (key.str() == "length")
      return Value::integer(static_cast<double>(
          object.is(Kind::String) ? utf16_length(object.str()) : object.array().items.size()));
    if (object.is(Kind::String) && listed(kStringMethods, key.str()))
      return bound(object, key.str(), heap);
    return Value();
  }
  // Anything else has no attributes; asking by name is undefined, as in the reference.
  if (!key.is(Kind::String))
    throw Failure(std::string("cannot index ") + kind_name(object.kind()) + " by " +
                  kind_name(key.kind()));
  return Value();
}

Value get_slice(const Value& object, const Value& start_v, const Value& stop_v, const Value& step_v,
                Heap& heap) {
  if (!object.is(Kind::Array) && !object.is(Kind::String))
    throw Failure(std::string("only lists and strings can be sliced, not ") +
                  kind_name(object.kind()));
  for (const Value* part : {&start_v, &stop_v, &step_v})
    if (!part->is_undefined() && !part->is(Kind::Int))
      throw Failure(std::string("slice bounds must be integers, not ") + kind_name(part->kind()));
  std::vector<size_t> offsets;
  double length = 0;
  if (object.is(Kind::String)) {
    offsets = code_point_offsets(object.str());
    length = static_cast<double>(offsets.size() - 1);
  } else {
    length = static_cast<double>(object.array().items.size());
  }
  // The reference's slice(): Python's rules, except that a negative step with stop -1 runs to
  // the first item.
  const double step = step_v.is_undefined() ? 1 : index_of(step_v.number());
  const double direction = step > 0 ? 1 : step < 0 ? -1 : 0;
  double start = 0, stop = 0;
  if (direction >= 0) {
    start = start_v.is_undefined() ? 0 : index_of(start_v.number());
    stop = stop_v.is_undefined() ? length : index_of(stop_v.number());
    start = start < 0 ? std::max(length + start, 0.0) : std::min(start, length);
    stop = stop < 0 ? std::max(length + stop, 0.0) : std::min(stop, length);
  } else {
    start = start_v.is_undefined() ? length - 1 : index_of(start_v.number());
    stop = stop_v.is_undefined() ? -1 : index_of(stop_v.number());
    start = start < 0 ? std::max(length + start, -1.0) : std::min(start, length - 1);
    stop = stop < -1 ? std::max(length + stop, -1.0) : std::min(stop, length - 1);
  }
  std::vector<size_t> picked;
  if (direction != 0)
    for (double i = start; direction * i < direction * stop; i += step)
      picked.push_back(static_cast<size_t>(i));
  heap.step(picked.size());
  if (object.is(Kind::String)) {
    std::string out;
    for (size_t i : picked) out.append(object.str(), offsets[i], offsets[i + 1] - offsets[i]);
    return heap.str(std::move(out));
  }
  std::vector<Value> items;
  items.reserve(picked.size());
  for (size_t i : picked) items.push_back(object.array().items[i]);
  return heap.array(std::move(items));
}

namespace {

[[noreturn]] void bad_argument(std::string_view method, const std::string& what) {
  throw Failure(std::string(method) + "(): " + what);
}

bool prefix_test(const std::string& s, const Value& pattern, bool at_start,
                 std::string_view method) {
  auto one = [&](const std::string& p) {
    if (p.size() > s.size()) return false;
    return at_start ? s.compare(0, p.size(), p) == 0
                    : s.compare(s.size() - p.size(), p.size(), p) == 0;
  };
  if (pattern.is(Kind::String)) return one(pattern.str());
  if (pattern.is(Kind::Array)) {
    for (const Value& item : pattern.array().items) {
      if (!item.is(Kind::String)) bad_argument(method, "the tuple must hold strings");
      if (one(item.str())) return true;
    }
    return false;
  }
  bad_argument(method, "the argument must be a string or a tuple of strings");
}

// Python's str.split as the reference builds it on JavaScript's split.
Value split(const std::string& s, const Args& args, Heap& heap) {
  const Value* sep = args.get(0, "sep");
  const Value* max_v = args.get(1, "maxsplit");
  if (sep && !sep->is(Kind::String) && !sep->is(Kind::None))
    bad_argument("split", "the separator must be a string or none");
  if (max_v && !max_v->is(Kind::Int)) bad_argument("split", "maxsplit must be an integer");
  const double maxsplit = max_v ? max_v->number() : -1;
  std::vector<Value> parts;
  heap.step(s.size() / 64);
  if (!sep || sep->is(Kind::None)) {
    // Runs of white space separate; with maxsplit the rest is kept whole from the last word on.
    const std::string_view text = trim_start(s);
    size_t i = 0;
    while (i < text.size()) {
      const size_t start = i;
      while (i < text.size() && !space_at(text, i)) {
        size_t n = 0;
        code_point_at(text, i, &n);
        i += n;
      }
      if (maxsplit != -1 && static_cast<double>(parts.size()) >= maxsplit) {
        parts.push_back(heap.str(text.substr(start)));
        break;
      }
      parts.push_back(heap.str(text.substr(start, i - start)));
      while (size_t n = space_at(text, i)) i += n;
    }
    return heap.array(std::move(parts));
  }
  const std::string& d = sep->str();
  if (d.empty()) bad_argument("split", "empty separator");
  size_t begin = 0;
  while (true) {
    const size_t at = s.find(d, begin);
    const bool last =
        at == std::string::npos || (maxsplit >= 0 && static_cast<double>(parts.size()) >= maxsplit);
    if (last) {
      parts.push_back(heap.str(std::string_view(s).substr(begin)));
      break;
    }
    parts.push_back(heap.str(std::string_view(s).substr(begin, at - begin)));
    begin = at + d.size();
  }
  return heap.array(std::move(parts));
}

// Python's str.replace(old, new, count): every occurrence (or the first `count`); an empty `old`
// inserts `new` between code points and at both ends.
Value replace(const std::string& s, const Args& args, Heap& heap) {
  const Value* from = args.get(0, "old");
  const Value* to = args.get(1, "new");
  if (!from || !to) bad_argument("replace", "needs the old and the new string");
  if (!from->is(Kind::String) || !to->is(Kind::String))
    bad_argument("replace", "the arguments must be strings");
  const Value* count_v = args.get(2, "count");
  if (count_v && !count_v->is(Kind::Int) && !count_v->is(Kind::None))
    bad_argument("replace", "count must be an integer or none");
  double remaining =
      count_v && count_v->is(Kind::Int) && count_v->number() >= 0 ? count_v->number() : INFINITY;
  const std::string &old = from->str(), &with = to->str();
  std::string out;
  heap.step(s.size() / 64);
  auto append = [&](std::string_view piece) {
    out.append(piece);
    heap.check_string_size(out.size());
  };
  if (old.empty()) {
    size_t i = 0;
    while (true) {
      if (remaining > 0) append(with), remaining -= 1;
      if (i >= s.size()) break;
      size_t n = 0;
      code_point_at(s, i, &n);
      append(std::string_view(s).substr(i, n));
      i += n;
    }
    return heap.str(std::move(out));
  }
  size_t begin = 0;
  while (remaining > 0) {
    const size_t at = s.find(old, begin);
    if (at == std::string::npos) break;
    append(std::string_view(s).substr(begin, at - begin));
    append(with);
    begin = at + old.size();
    remaining -= 1;
  }
  append(std::string_view(s).substr(begin));
  return heap.str(std::move(out));
}

Value string_method(const std::string& name, const std::string& s, const Args& args, Heap& heap) {
  heap.step(s.size() / 256);
  if (name == "upper") return heap.str(to_upper(s));
  if (name == "lower") return heap.str(to_lower(s));
  if (name == "strip")
    return heap.str(trim(s));  // characters to strip are ignored, as in the reference
  if (name == "lstrip") return heap.str(trim_start(s));
  if (name == "rstrip") return heap.str(trim_end(s));
  if (name == "title") return heap.str(title_case(s));
  if (name == "capitalize") return heap.str(capitalize(s));
  if (name == "startswith" || name == "endswith") {
    if (args.positional.empty()) bad_argument(name, "needs an argument");
    return Value::boolean(prefix_test(s, args.positional[0], name == "startswith", name));
  }
  if (name == "split") return split(s, args, heap);
  if (name == "replace") return replace(s, args, heap);
  throw Failure("strings have no method '" + name + "'");
}

Value pairs(const Object& o, Heap& heap) {
  std::vector<Value> items;
  for (const auto& [k, v] : o.entries()) items.push_back(heap.array({heap.str(k), v}));
  return heap.array(std::move(items));
}

Value dictsort(const Object& o, const Args& args, Heap& heap) {
  const Value* case_v = args.get(0, "case_sensitive");
  const Value* by_v = args.get(1, "by");
  const Value* reverse_v = args.get(2, "reverse");
  if (case_v && !case_v->is(Kind::Bool))
    bad_argument("dictsort", "case_sensitive must be a boolean");
  if (by_v && !(by_v->is(Kind::String) && (by_v->str() == "key" || by_v->str() == "value")))
    bad_argument("dictsort", "by must be 'key' or 'value'");
  if (reverse_v && !reverse_v->is(Kind::Bool))
    bad_argument("dictsort", "reverse must be a boolean");
  const bool case_sensitive = case_v && case_v->as_bool(),
             reverse = reverse_v && reverse_v->as_bool();
  const size_t by = by_v && by_v->str() == "value" ? 1 : 0;
  std::vector<Value> items = pairs(o, heap).array().items;
  heap.step(items.size() * 8);
  std::stable_sort(items.begin(), items.end(), [&](const Value& a, const Value& b) {
    const int c = compare_values(a.array().items[by], b.array().items[by], case_sensitive);
    return reverse ? c > 0 : c < 0;
  });
  return heap.array(std::move(items));
}

Value object_method(const std::string& name, const Value& receiver, const Args& args, Heap& heap) {
  const Object& o = receiver.object();
  heap.step(o.size());
  if (name == "get") {
    if (args.positional.empty() || !args.positional[0].is(Kind::String))
      bad_argument("get", "the key must be a string");
    if (const Value* v = o.find(args.positional[0].str())) return *v;
    return args.positional.size() > 1 ? args.positional[1] : Value::none();
  }
  if (name == "items") return pairs(o, heap);
  if (name == "keys" || name == "values") {
    std::vector<Value> items;
    for (const auto& [k, v] : o.entries()) items.push_back(name == "keys" ? heap.str(k) : v);
    return heap.array(std::move(items));
  }
  if (name == "dictsort") return dictsort(o, args, heap);
  throw Failure("mappings have no method '" + name + "'");
}

}  // namespace

Value call_method(const Function& method, const Args& args, Heap& heap) {
  if (method.receiver.is(Kind::String))
    return string_method(method.name, method.receiver.str(), args, heap);
  return object_method(method.name, method.receiver, args, heap);
}

int compare_values(const Value& a, const Value& b, bool case_sensitive) {
  const bool nullish = a.is(Kind::None) || b.is(Kind::None) || a.is_undefined() || b.is_undefined();
  if (nullish && a.kind() == b.kind()) return 0;
  const auto numeric = [](const Value& v) { return v.is_number() || v.is(Kind::Bool); };
  if (!nullish && numeric(a) && numeric(b))
    return a.number() < b.number() ? -1 : a.number() > b.number() ? 1 : 0;
  if (a.is(Kind::String) && b.is(Kind::String)) {
    const std::string x = case_sensitive ? a.str() : to_lower(a.str());
    const std::string y = case_sensitive ? b.str() : to_lower(b.str());
    return x < y ? -1 : x > y ? 1 : 0;
  }
  throw Failure(std::string("cannot compare ") + kind_name(a.kind()) + " with " +
                kind_name(b.kind()));
}

Value attribute_path(const Value& item, std::string_view path) {
  Value v = item;
  size_t begin = 0;
  while (true) {
    const size_t dot = path.find('.', begin);
    const std::string part(
        path.substr(begin, dot == std::string_view::npos ? std::string_view::npos : dot - begin));
    if (v.is_mapping_like()) {
      const Value* found = v.object().find(part);
      v = found ? *found : Value();
    } else if (v.is(Kind::Array)) {
      size_t index = 0;
      const bool digits = !part.empty() && part.size() < 16 &&
                          part.find_first_not_of("0123456789") == std::string::npos;
      if (digits) index = std::stoul(part);
      if (!digits || index >= v.array().items.size()) return Value();
      v = v.array().items[index];
    } else {
      return Value();
    }
    if (dot == std::string_view::npos) return v;
    begin = dot + 1;
  }
}

}  // namespace eagle2::jinja

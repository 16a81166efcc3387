// JSON in and out of template values: the inputs (messages, tools, extra variables) come in as
// JSON, and the tojson filter writes values the way the reference's toJSON does, which matches
// Python's json.dumps as Hugging Face calls it (", " and ": " separators, "," with indent, no
// escaping of non-ASCII text unless asked).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "chat/jinja_value.h"

namespace eagle2::jinja {

struct JsonStyle {
  int indent = 0;  // 0: one line
  bool ensure_ascii = false;
  bool sort_keys = false;
  bool custom_separators = false;
  std::string item_separator, key_separator;  // when custom_separators
  // tojson writes undefined as null; printing a list or mapping ({{ x }}) writes "undefined".
  bool undefined_as_null = true;
};

std::string to_json(const Value& v, const JsonStyle& style, const Limits& limits);

// The value of a JSON document, as JavaScript's JSON.parse would give it to the reference: an
// integral number is an integer (1.0 too), and an object's keys keep their order except that
// array-index keys ("0", "7") come first in numeric order. Fails on nesting deeper than
// limits.max_value_depth and on strings that are not UTF-8.
Value from_json(const nlohmann::ordered_json& j, Heap& heap, int depth = 0);

}  // namespace eagle2::jinja

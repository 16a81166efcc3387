// Strict parsing of numbers written by users (flags, token id lists, log files): the whole text
// must be the number, in range for the type, with no sign on unsigned types. std::stoll and
// friends accept "12abc", skip spaces, wrap "-1" into unsigned types and throw bare "stoll" on
// failure; every number a user writes goes through here instead, so the rule is the same
// everywhere.
//
// Contract. Never throws for bad text (a nullopt and the reason instead); pure and thread-safe.
#pragma once

#include <charconv>
#include <cmath>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>

namespace eagle2 {

// The value of `text` as T, or nullopt with `problem` (when given) set to why not, as a phrase
// that follows the quoted text: "'abc' is not an integer", "'1e999' is out of range".
template <class T>
std::optional<T> parse_number(std::string_view text, std::string* problem = nullptr) {
  static_assert(std::is_arithmetic_v<T> && !std::is_same_v<T, bool>);
  T value{};
  const char* const end = text.data() + text.size();
  // from_chars takes no leading '+'; users write it, so allow one before a digit.
  const char* begin = text.data();
  if (text.size() > 1 && text[0] == '+' && text[1] != '-' && text[1] != '+') ++begin;
  std::from_chars_result r{};
  if constexpr (std::is_floating_point_v<T>) {
    r = std::from_chars(begin, end, value, std::chars_format::general);
  } else {
    r = std::from_chars(begin, end, value, 10);
  }
  const char* what = std::is_floating_point_v<T> ? "a number"
                     : std::is_signed_v<T>       ? "an integer"
                                                 : "a non-negative integer";
  // Built by appending: GCC 12 warns falsely (-Wrestrict, its bug 105329) on "'" + string + "...".
  std::string why;
  auto quoted = [&](const char* rest, const char* tail = "") {
    why.append("'").append(text).append(rest).append(tail);
  };
  if (text.empty()) {
    quoted("' is not ", what);
  } else if (r.ec == std::errc::result_out_of_range) {
    quoted("' is out of range");
  } else if (r.ec != std::errc() || r.ptr != end) {
    quoted("' is not ", what);
  } else if constexpr (std::is_floating_point_v<T>) {
    if (!std::isfinite(value)) quoted("' is not a finite number");
  }
  if (!why.empty()) {
    if (problem) *problem = why;
    return std::nullopt;
  }
  return value;
}

}  // namespace eagle2

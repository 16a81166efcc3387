// UTF-8 text helpers with JavaScript's rules. The reference renderer for chat templates
// (@huggingface/jinja) runs on JavaScript strings, so whitespace is JavaScript's (Unicode spaces
// and line terminators, not just ASCII), a string's length counts UTF-16 units, and case mapping is
// Unicode's. Strings here are always valid UTF-8: templates and inputs are checked on entry and
// every operation keeps them valid.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace eagle2::jinja {

// Whether the text is well-formed UTF-8 (no overlong forms, surrogates or values past U+10FFFF).
bool valid_utf8(std::string_view text);

// The code point at text[i] and its byte length (text must be valid UTF-8 and i < text.size()).
char32_t code_point_at(std::string_view text, size_t i, size_t* length);
void append_utf8(std::string& out, char32_t cp);

// JavaScript's white space and line terminators (what String.prototype.trim and /\s/ match).
bool is_js_space(char32_t cp);
// Byte length of the JavaScript white space character starting at text[i], or 0 when there is none.
size_t space_at(std::string_view text, size_t i);

std::string_view trim_start(std::string_view text);
std::string_view trim_end(std::string_view text);
inline std::string_view trim(std::string_view text) {
  return trim_start(trim_end(text));
}

// The byte offset of every code point, plus text.size() at the end.
std::vector<size_t> code_point_offsets(std::string_view text);
// JavaScript's String.prototype.length: UTF-16 units (a code point past U+FFFF counts 2).
size_t utf16_length(std::string_view text);
// JavaScript's str.at(index) (UTF-16 units, negative counts from the end): the character there,
// or false when out of range. Half of a surrogate pair comes out as U+FFFD, which is what the
// reference writes when such a half reaches UTF-8 output.
bool utf16_at(std::string_view text, double index, std::string* out);

// Unicode case mapping of ASCII, Latin-1, Latin Extended-A, Greek and basic Cyrillic (plus
// German sharp s to "SS"); other scripts are left unchanged.
std::string to_upper(std::string_view text);
std::string to_lower(std::string_view text);
// The reference's title(): an ASCII letter or digit that begins an ASCII word is uppercased, the
// rest is left alone (unlike Python, which also lowercases the rest of each word).
std::string title_case(std::string_view text);
// The first character uppercased, the rest unchanged (the reference's capitalize()).
std::string capitalize(std::string_view text);

}  // namespace eagle2::jinja

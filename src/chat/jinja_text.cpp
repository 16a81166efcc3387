#include "chat/jinja_text.h"

#include <cmath>

namespace eagle2::jinja {

bool valid_utf8(std::string_view text) {
  size_t i = 0;
  while (i < text.size()) {
    const auto c = static_cast<unsigned char>(text[i]);
    size_t n = 0;
    char32_t cp = 0;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xE0) == 0xC0) {
      n = 1, cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      n = 2, cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      n = 3, cp = c & 0x07;
    } else {
      return false;
    }
    if (i + n >= text.size()) return false;  // truncated sequence
    for (size_t k = 1; k <= n; ++k) {
      const auto d = static_cast<unsigned char>(text[i + k]);
      if ((d & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (d & 0x3F);
    }
    const char32_t min[] = {0, 0x80, 0x800, 0x10000};
    if (cp < min[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    i += n + 1;
  }
  return true;
}

char32_t code_point_at(std::string_view text, size_t i, size_t* length) {
  const auto c = static_cast<unsigned char>(text[i]);
  size_t n = c < 0x80 ? 0 : (c & 0xE0) == 0xC0 ? 1 : (c & 0xF0) == 0xE0 ? 2 : 3;
  if (i + n >= text.size()) n = 0;  // cannot happen on valid UTF-8; never read past the end
  char32_t cp = n == 0 ? c : n == 1 ? (c & 0x1F) : n == 2 ? (c & 0x0F) : (c & 0x07);
  for (size_t k = 1; k <= n; ++k) cp = (cp << 6) | (static_cast<unsigned char>(text[i + k]) & 0x3F);
  *length = n + 1;
  return cp;
}

void append_utf8(std::string& out, char32_t cp) {
  if (cp >= 0xD800 && cp <= 0xDFFF) cp = 0xFFFD;  // a lone surrogate has no UTF-8 form
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

bool is_js_space(char32_t cp) {
  switch (cp) {
    case 0x09:
    case 0x0A:
    case 0x0B:
    case 0x0C:
    case 0x0D:
    case 0x20:
    case 0xA0:
    case 0x1680:
    case 0x2028:
    case 0x2029:
    case 0x202F:
    case 0x205F:
    case 0x3000:
    case 0xFEFF:
      return true;
    default:
      return cp >= 0x2000 && cp <= 0x200A;
  }
}

size_t space_at(std::string_view text, size_t i) {
  if (i >= text.size()) return 0;
  size_t length = 0;
  const char32_t cp = code_point_at(text, i, &length);
  return is_js_space(cp) ? length : 0;
}

std::string_view trim_start(std::string_view text) {
  size_t i = 0;
  while (size_t n = space_at(text, i)) i += n;
  return text.substr(i);
}

std::string_view trim_end(std::string_view text) {
  size_t end = text.size();
  while (end > 0) {
    // Step back to the first byte of the last code point.
    size_t start = end - 1;
    while (start > 0 && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80) --start;
    if (space_at(text.substr(0, end), start) != end - start) break;
    end = start;
  }
  return text.substr(0, end);
}

std::vector<size_t> code_point_offsets(std::string_view text) {
  std::vector<size_t> offsets;
  offsets.reserve(text.size() + 1);
  size_t i = 0;
  while (i < text.size()) {
    offsets.push_back(i);
    size_t n = 0;
    code_point_at(text, i, &n);
    i += n;
  }
  offsets.push_back(text.size());
  return offsets;
}

size_t utf16_length(std::string_view text) {
  size_t units = 0;
  for (unsigned char c : text) {
    if ((c & 0xC0) != 0x80) ++units;  // a code point starts here
    if ((c & 0xF8) == 0xF0) ++units;  // four-byte forms are surrogate pairs in UTF-16
  }
  return units;
}

bool utf16_at(std::string_view text, double index, std::string* out) {
  const double length = static_cast<double>(utf16_length(text));
  if (index < 0) index += length;
  if (!(index >= 0 && index < length)) return false;
  const auto want = static_cast<size_t>(index);
  size_t unit = 0, i = 0;
  while (i < text.size()) {
    size_t n = 0;
    const char32_t cp = code_point_at(text, i, &n);
    const size_t units = cp >= 0x10000 ? 2 : 1;
    if (want < unit + units) {
      out->clear();
      if (units == 2)
        append_utf8(*out, 0xFFFD);
      else
        out->append(text.substr(i, n));
      return true;
    }
    unit += units;
    i += n;
  }
  return false;
}

namespace {

// Simple one-to-one case pairs: [first upper, last upper, distance to lower, step] where step 1
// means a contiguous block and step 2 alternating upper/lower pairs.
struct CaseRange {
  char32_t first, last;
  int32_t delta;
  int32_t step;
};
constexpr CaseRange kCaseRanges[] = {
    {0x41, 0x5A, 32, 1},   {0xC0, 0xD6, 32, 1},   {0xD8, 0xDE, 32, 1},     {0x100, 0x12E, 1, 2},
    {0x132, 0x136, 1, 2},  {0x139, 0x147, 1, 2},  {0x14A, 0x176, 1, 2},    {0x179, 0x17D, 1, 2},
    {0x386, 0x386, 38, 1}, {0x388, 0x38A, 37, 1}, {0x38C, 0x38C, 64, 1},   {0x38E, 0x38F, 63, 1},
    {0x391, 0x3A1, 32, 1}, {0x3A3, 0x3AB, 32, 1}, {0x400, 0x40F, 80, 1},   {0x410, 0x42F, 32, 1},
    {0x460, 0x480, 1, 2},  {0x48A, 0x4BE, 1, 2},  {0xFF21, 0xFF3A, 32, 1},
};

char32_t lower_of(char32_t cp) {
  if (cp == 0x178) return 0xFF;  // Y with diaeresis: its lowercase is in Latin-1
  for (const CaseRange& r : kCaseRanges)
    if (cp >= r.first && cp <= r.last && (r.step == 1 || (cp - r.first) % 2 == 0))
      return cp + r.delta;
  return cp;
}

char32_t upper_of(char32_t cp) {
  switch (cp) {
    case 0xFF:
      return 0x178;
    case 0xB5:
      return 0x39C;  // micro sign -> Greek capital mu
    case 0x131:
      return 0x49;  // dotless i
    case 0x17F:
      return 0x53;  // long s
    case 0x3C2:
      return 0x3A3;  // final sigma
    default:
      break;
  }
  for (const CaseRange& r : kCaseRanges) {
    const char32_t first = r.first + r.delta, last = r.last + r.delta;
    if (cp >= first && cp <= last && (r.step == 1 || (cp - first) % 2 == 0)) return cp - r.delta;
  }
  return cp;
}

template <class Map>
std::string map_case(std::string_view text, Map map, bool upper) {
  std::string out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    size_t n = 0;
    const char32_t cp = code_point_at(text, i, &n);
    if (upper && cp == 0xDF)
      out += "SS";
    else
      append_utf8(out, map(cp));
    i += n;
  }
  return out;
}

bool is_ascii_word(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

}  // namespace

std::string to_upper(std::string_view text) {
  return map_case(text, upper_of, true);
}
std::string to_lower(std::string_view text) {
  return map_case(text, lower_of, false);
}

std::string title_case(std::string_view text) {
  std::string out(text);
  for (size_t i = 0; i < out.size(); ++i) {
    const bool starts_word = is_ascii_word(out[i]) && (i == 0 || !is_ascii_word(out[i - 1]));
    if (starts_word && out[i] >= 'a' && out[i] <= 'z') out[i] = static_cast<char>(out[i] - 32);
  }
  return out;
}

std::string capitalize(std::string_view text) {
  if (text.empty()) return "";
  size_t n = 0;
  code_point_at(text, 0, &n);
  return to_upper(text.substr(0, n)) + std::string(text.substr(n));
}

}  // namespace eagle2::jinja

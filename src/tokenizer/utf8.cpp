#include "tokenizer/utf8.h"

namespace eagle2 {

namespace {

// Bytes a character with this lead byte occupies, or 0 if it cannot start a character.
// C0, C1 (always overlong) and F5..FF (beyond U+10FFFF) are never leads.
int utf8_length(unsigned char lead) {
  if (lead < 0x80) return 1;
  if (lead >= 0xC2 && lead <= 0xDF) return 2;
  if (lead >= 0xE0 && lead <= 0xEF) return 3;
  if (lead >= 0xF0 && lead <= 0xF4) return 4;
  return 0;
}

// Whether `b` may follow `lead` as the continuation byte at offset `k` (1-based) of a character.
// The second byte's narrower ranges are what rule out overlong forms, surrogates and > U+10FFFF.
bool valid_continuation(unsigned char lead, int k, unsigned char b) {
  if (k == 1) {
    switch (lead) {
      case 0xE0:
        return b >= 0xA0 && b <= 0xBF;
      case 0xED:
        return b >= 0x80 && b <= 0x9F;
      case 0xF0:
        return b >= 0x90 && b <= 0xBF;
      case 0xF4:
        return b >= 0x80 && b <= 0x8F;
      default:
        break;
    }
  }
  return b >= 0x80 && b <= 0xBF;
}

bool is_continuation(unsigned char b) {
  return (b & 0xC0) == 0x80;
}

const char kReplacement[] = "\xEF\xBF\xBD";  // U+FFFD

}  // namespace

size_t first_invalid_utf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const auto lead = static_cast<unsigned char>(s[i]);
    if (lead < 0x80) {  // ASCII runs are the common case
      ++i;
      continue;
    }
    const int len = utf8_length(lead);
    if (len == 0 || i + len > s.size()) return i;
    for (int k = 1; k < len; ++k) {
      if (!valid_continuation(lead, k, static_cast<unsigned char>(s[i + k]))) return i;
    }
    i += len;
  }
  return std::string_view::npos;
}

size_t complete_utf8_prefix(std::string_view s) {
  // A character is at most 4 bytes, so an unfinished one starts within the last 3.
  const size_t n = s.size();
  size_t j = n;
  for (size_t back = 1; back <= 3 && back <= n; ++back) {
    if (!is_continuation(static_cast<unsigned char>(s[n - back]))) {
      j = n - back;
      break;
    }
  }
  if (j == n) return n;
  const auto lead = static_cast<unsigned char>(s[j]);
  const int len = utf8_length(lead);
  if (len <= 1 || n - j >= static_cast<size_t>(len)) return n;
  for (size_t k = 1; j + k < n; ++k) {
    if (!valid_continuation(lead, static_cast<int>(k), static_cast<unsigned char>(s[j + k])))
      return n;
  }
  return j;
}

std::string utf8_lossy(std::string_view s, Utf8Replacement rule) {
  if (first_invalid_utf8(s) == std::string_view::npos) return std::string(s);
  std::string out;
  out.reserve(s.size() + 8);
  size_t i = 0;
  while (i < s.size()) {
    const auto lead = static_cast<unsigned char>(s[i]);
    const int len = utf8_length(lead);
    // How many bytes from i form a valid (possibly truncated) beginning of a character.
    size_t good = len == 0 ? 0 : 1;
    while (
        len > 0 && good < static_cast<size_t>(len) && i + good < s.size() &&
        valid_continuation(lead, static_cast<int>(good), static_cast<unsigned char>(s[i + good])))
      ++good;
    if (len > 0 && good == static_cast<size_t>(len)) {
      out.append(s.substr(i, good));
      i += good;
    } else if (rule == Utf8Replacement::kPerByte) {
      out += kReplacement;
      i += 1;
    } else {
      // The maximal subpart: the lead plus the continuation bytes that were still valid for it.
      out += kReplacement;
      i += good == 0 ? 1 : good;
    }
  }
  return out;
}

void append_utf8(std::string& out, uint32_t cp) {
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

int utf8_sequence_length(unsigned char lead) {
  const int n = utf8_length(lead);
  return n == 0 ? 1 : n;
}

}  // namespace eagle2

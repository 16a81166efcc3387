#include "tokenizer/byte_level.h"

#include <array>

#include "tokenizer/utf8.h"

namespace eagle2 {

namespace {

bool stands_for_itself(uint32_t b) {
  return (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
}

struct Tables {
  std::array<uint32_t, 256> code_point{};
  std::array<std::string, 256> utf8;
  std::array<int16_t, 0x144> byte_of{};  // code point -> byte, -1 if none; U+0000..U+0143
  Tables() {
    byte_of.fill(-1);
    uint32_t next = 0x100;
    for (uint32_t b = 0; b < 256; ++b) {
      code_point[b] = stands_for_itself(b) ? b : next++;
      append_utf8(utf8[b], code_point[b]);
      byte_of[code_point[b]] = static_cast<int16_t>(b);
    }
  }
};

const Tables& tables() {
  static const Tables t;
  return t;
}

}  // namespace

uint32_t byte_level_code_point(uint8_t b) {
  return tables().code_point[b];
}

const std::string& byte_level_char(uint8_t b) {
  return tables().utf8[b];
}

std::string to_byte_level(std::string_view bytes) {
  const Tables& t = tables();
  std::string out;
  out.reserve(bytes.size() * 2);
  for (char c : bytes) out += t.utf8[static_cast<uint8_t>(c)];
  return out;
}

bool from_byte_level(std::string_view text, std::string* out) {
  const Tables& t = tables();
  std::string bytes;
  bytes.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    const auto c0 = static_cast<uint8_t>(text[i]);
    uint32_t cp;
    if (c0 < 0x80) {
      cp = c0;
      i += 1;
    } else if (c0 >= 0xC2 && c0 <= 0xDF && i + 1 < text.size() &&
               (static_cast<uint8_t>(text[i + 1]) & 0xC0) == 0x80) {
      // Every character of the alphabet is below U+0800: two bytes at most.
      cp = (uint32_t{c0} & 0x1F) << 6 | (static_cast<uint8_t>(text[i + 1]) & 0x3F);
      i += 2;
    } else {
      return false;
    }
    if (cp >= t.byte_of.size() || t.byte_of[cp] < 0) return false;
    bytes += static_cast<char>(t.byte_of[cp]);
  }
  *out = std::move(bytes);
  return true;
}

}  // namespace eagle2

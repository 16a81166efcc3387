// GPT-2's byte-level alphabet: every byte is shown as a printable code point, so that a BPE
// vocabulary of strings covers arbitrary bytes. Bytes '!'..'~', U+00A1..U+00AC and U+00AE..U+00FF
// stand for themselves; the other 68 (controls, space, DEL, NBSP, soft hyphen) take U+0100 onward,
// in byte order. Tokenizer.json and GGUF "gpt2" vocabularies are written in this alphabet.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace eagle2 {

// The code point standing for byte b.
uint32_t byte_level_code_point(uint8_t b);
// Its UTF-8 form (e.g. byte ' ' -> "Ġ", U+0120).
const std::string& byte_level_char(uint8_t b);
// `bytes` written in the alphabet (each byte -> its character).
std::string to_byte_level(std::string_view bytes);
// The bytes a byte-level string stands for; false (out untouched) if it holds a character outside
// the alphabet or is not valid UTF-8.
bool from_byte_level(std::string_view text, std::string* out);

}  // namespace eagle2

// UTF-8 rules shared by every tokenizer: strict validation of input text, where a byte stream may
// be cut without splitting a character, and the two ways decoders replace invalid bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace eagle2 {

// Index of the first byte where `s` stops being valid UTF-8, or npos if all of it is valid.
// Strict (RFC 3629): overlong forms, surrogates, code points above U+10FFFF and truncated
// sequences are invalid; the index is that of the offending sequence's first byte.
size_t first_invalid_utf8(std::string_view s);
// Length of the longest prefix of s that ends on a complete UTF-8 character boundary: s minus a
// trailing sequence that is the strict beginning of a valid character still missing bytes. Bytes
// that are already invalid count as complete (a decoder turns them into U+FFFD whatever follows).
size_t complete_utf8_prefix(std::string_view s);

// How a decoder shows bytes that are not valid UTF-8 (U+FFFD each time).
enum class Utf8Replacement {
  kPerByte,         // one U+FFFD per invalid byte (SentencePiece's byte-fallback decoder)
  kMaximalSubpart,  // one per maximal invalid subpart (Unicode 3.9, Rust's from_utf8_lossy:
                    // Hugging Face's byte-level decoder)
};
// `s` with every invalid sequence replaced as `rule` says; valid text is returned unchanged.
std::string utf8_lossy(std::string_view s, Utf8Replacement rule);

// Appends code point cp (< 0x110000, not a surrogate) as UTF-8.
void append_utf8(std::string& out, uint32_t cp);
// Bytes the character starting with `lead` occupies (1 for an invalid lead: the caller validated).
int utf8_sequence_length(unsigned char lead);

}  // namespace eagle2

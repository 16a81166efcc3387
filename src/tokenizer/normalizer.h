// Unicode normalization for tokenizer.json's "NFC" normalizer (Qwen2/3), through utf8proc: the
// composition tables are Unicode data, not something to hand-write.
#pragma once

#include <string>
#include <string_view>

namespace eagle2 {

// The NFC form of valid UTF-8 text. Text that cannot change (ASCII, or no code point that
// decomposes or composes) is returned as is.
std::string nfc(std::string_view text);

}  // namespace eagle2

// Decoding through the streaming decoder as a server streams: chunk by chunk, each checked for a
// split UTF-8 character (shared by the tokenizer tests of every tokenizer kind).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tokenizer/tokenizer.h"

namespace eagle2::test {

// The text StreamingDecoder gives for `ids` after `context`: every push's chunk and the final
// flush, concatenated. A chunk that splits a character fails the calling test.
std::string streamed_text(const Tokenizer& tok, const std::vector<int32_t>& context,
                          const std::vector<int32_t>& ids);

}  // namespace eagle2::test

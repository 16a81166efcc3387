#include "support/token_streams.h"

#include <gtest/gtest.h>

#include "tokenizer/utf8.h"

namespace eagle2::test {

std::string streamed_text(const Tokenizer& tok, const std::vector<int32_t>& context,
                          const std::vector<int32_t>& ids) {
  StreamingDecoder dec(tok, context);
  std::string all;
  for (int32_t id : ids) {
    const std::string chunk = dec.push(id);
    EXPECT_EQ(first_invalid_utf8(chunk), std::string::npos) << "a chunk splits a character";
    all += chunk;
  }
  const std::string last = dec.finish();
  EXPECT_EQ(first_invalid_utf8(last), std::string::npos) << "the final flush splits a character";
  return all + last;
}

}  // namespace eagle2::test

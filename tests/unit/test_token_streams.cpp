// The streaming decoder over the new tokenizer kinds (byte-level BPE from tokenizer.json and GGUF,
// SentencePiece-style GGUF): chunks never split a UTF-8 character, and together they equal the
// whole decode minus the context's text, for real encodings and for random id sequences rich in
// partial characters, stray bytes and control tokens. (libsentencepiece's stream:
// test_tokenizer.cpp.)
#include <gtest/gtest.h>

#include <random>

#include "support/shared_data.h"
#include "support/token_streams.h"
#include "tokenizer/byte_level.h"
#include "tokenizer_load/load_tokenizer.h"

namespace eagle2 {
namespace {

std::string expected(const Tokenizer& tok, std::vector<int32_t> context,
                     const std::vector<int32_t>& ids) {
  const std::string shown = tok.decode(context);
  context.insert(context.end(), ids.begin(), ids.end());
  const std::string full = tok.decode(context);
  EXPECT_EQ(full.compare(0, shown.size(), shown), 0) << "the context's text is not a prefix";
  return full.substr(std::min(shown.size(), full.size()));
}

const std::vector<std::string> kTexts = {
    "Hello, world! \xF0\x9F\x98\x80 caf\xC3\xA9 \xE2\x80\x94 \xE4\xBD\xA0\xE5\xA5\xBD\xEF\xBC\x8C",
    "\xF0\x9F\x91\xA8\xE2\x80\x8D\xF0\x9F\x91\xA9\xE2\x80\x8D\xF0\x9F\x91\xA7 family",
    "def f(x):\n    return x  # \xE2\x88\x91\n",
    "\xD9\x85\xD8\xB1\xD8\xAD\xD8\xA8\xD8\xA7 \xF0\x9D\x94\x98\xF0\x9D\x94\xAB",
};

void check(const Tokenizer& tok, const std::vector<int32_t>& byte_ids,
           const std::vector<int32_t>& controls) {
  const auto prompt = tok.encode("Prompt:", false);
  for (const std::string& text : kTexts) {
    const auto ids = tok.encode(text, false);
    EXPECT_EQ(test::streamed_text(tok, {}, ids), text) << tok.kind();
    EXPECT_EQ(test::streamed_text(tok, prompt, ids), expected(tok, prompt, ids))
        << tok.kind() << ": " << text;
    // token_bytes (a server's logprobs): each token's bytes mid-text add up to the text.
    std::string bytes;
    for (const int32_t id : ids) bytes += tok.token_bytes(id);
    EXPECT_EQ(bytes, expected(tok, prompt, ids)) << tok.kind() << ": " << text;
  }
  std::mt19937 gen(99);
  auto below = [&gen](size_t n) { return static_cast<size_t>(gen() % n); };
  const std::vector<std::string> chars = {"\xC3\xA9", "\xE2\x82\xAC", "\xF0\x9F\x98\x80",
                                          "\xE4\xBD\xA0", "a"};
  auto random_ids = [&](size_t len) {
    std::vector<int32_t> ids;
    while (ids.size() < len) {
      switch (below(8)) {
        case 0:
        case 1:  // a character spelled in byte tokens
          for (unsigned char c : chars[below(chars.size())]) ids.push_back(byte_ids[c]);
          break;
        case 2: {  // the start of a character only
          const std::string& c = chars[below(4)];
          for (size_t i = 0, n = 1 + below(c.size() - 1); i < n; ++i)
            ids.push_back(byte_ids[static_cast<unsigned char>(c[i])]);
          break;
        }
        case 3:
          ids.push_back(byte_ids[below(256)]);
          break;
        case 4:
          ids.push_back(controls[below(controls.size())]);
          break;
        default:
          ids.push_back(static_cast<int32_t>(below(static_cast<size_t>(tok.vocab_size()))));
          break;
      }
    }
    ids.resize(len);
    return ids;
  };
  for (int trial = 0; trial < 400; ++trial) {
    std::vector<int32_t> context;
    if (trial % 3 == 1) context = prompt;
    if (trial % 3 == 2) {  // random, ending on a plain piece so that its text is final
      context = random_ids(below(6));
      context.push_back(prompt.back());
    }
    const auto ids = random_ids(1 + below(30));
    ASSERT_EQ(test::streamed_text(tok, context, ids), expected(tok, context, ids))
        << tok.kind() << " trial " << trial;
  }
}

int32_t id_of(const Tokenizer& tok, const std::string& piece) {
  for (int32_t id = 0; id < tok.vocab_size(); ++id) {
    if (tok.piece(id) == piece) return id;
  }
  ADD_FAILURE() << "no piece " << piece;
  return 0;
}

TEST(TokenStreams, ByteLevelBpeFromTokenizerJson) {
  EAGLE2_SHARED_FILE(path, "data/tokenizers/qwen3/tokenizer.json");
  auto tok = load_tokenizer(path);
  std::vector<int32_t> bytes(256);
  for (int b = 0; b < 256; ++b) bytes[b] = id_of(*tok, byte_level_char(static_cast<uint8_t>(b)));
  check(*tok, bytes, {151643, 151645, 151667});
  // An emoji spelled in bytes: nothing shows until its last byte arrives.
  StreamingDecoder dec(*tok);
  EXPECT_EQ(dec.push(bytes[0xF0]), "");
  EXPECT_EQ(dec.push(bytes[0x9F]), "");
  EXPECT_EQ(dec.push(bytes[0x98]), "");
  EXPECT_EQ(dec.push(bytes[0x80]), "\xF0\x9F\x98\x80");
  // A truncated character shows as one U+FFFD (maximal subpart), as Hugging Face decodes it.
  EXPECT_EQ(dec.push(bytes[0xE2]), "");
  EXPECT_EQ(dec.push(bytes[0x82]), "");
  EXPECT_EQ(dec.push(bytes['a']),
            "\xEF\xBF\xBD"
            "a");
}

TEST(TokenStreams, ByteLevelBpeFromGguf) {
  EAGLE2_SHARED_FILE(path, "data/gguf_vocab/ggml-vocab-gpt-2.gguf");
  auto tok = load_tokenizer(path);
  std::vector<int32_t> bytes(256);
  for (int b = 0; b < 256; ++b) bytes[b] = id_of(*tok, byte_level_char(static_cast<uint8_t>(b)));
  check(*tok, bytes, {50256});
}

TEST(TokenStreams, SentencePieceFromGguf) {
  EAGLE2_SHARED_FILE(path, "data/gguf_vocab/ggml-vocab-llama-spm.gguf");
  auto tok = load_tokenizer(path);
  std::vector<int32_t> bytes(256);
  for (int b = 0; b < 256; ++b) bytes[b] = 3 + b;  // <0x00> is id 3 in LLaMA's vocabulary
  ASSERT_EQ(tok->piece(bytes[0x41]), "<0x41>");
  check(*tok, bytes, {0, 1, 2});
  // The first piece's dummy-prefix space goes, as SentencePiece decodes; after text it stays.
  const auto ids = tok->encode("Hi there", false);
  EXPECT_EQ(test::streamed_text(*tok, {1}, ids), "Hi there");
  EXPECT_EQ(test::streamed_text(*tok, tok->encode("x", true), ids), " Hi there");
}

}  // namespace
}  // namespace eagle2

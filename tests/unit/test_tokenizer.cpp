// Tokenizer: golden encodings, round trips (byte fallback included), the streaming decoder's
// equivalence with whole-sequence decode, UTF-8 validation and file errors.
#include <gtest/gtest.h>

#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "core/error.h"
#include "support/errors.h"
#include "support/shared_data.h"
#include "support/token_streams.h"
#include "tokenizer/tokenizer.h"

namespace eagle2 {
namespace {

constexpr const char* kStories = "data/models/stories260K-hf/tokenizer.model";
constexpr const char* kLlama2 = "data/models/llama2_tokenizer/tokenizer.model";

int32_t piece_id(const Tokenizer& tok, const std::string& piece) {
  for (int32_t id = 0; id < tok.vocab_size(); ++id) {
    if (tok.piece(id) == piece) return id;
  }
  ADD_FAILURE() << "no piece " << piece;
  return -1;
}

const std::vector<std::string>& multilingual_texts() {
  static const std::vector<std::string> texts = {
      "Once upon a time, there was a little girl named Lily.",
      "Hello, world! \xF0\x9F\x98\x80 caf\xC3\xA9 na\xC3\xAFve \xE2\x80\x94 "
      "\xE2\x80\x9Cquotes\xE2\x80\x9D",
      "\xE4\xBD\xA0\xE5\xA5\xBD\xEF\xBC\x8C\xE4\xB8\x96\xE7\x95\x8C\xE3\x80\x82 "
      "\xE6\x97\xA5\xE6\x9C\xAC"
      "\xE8\xAA\x9E\xE3\x81\xAE\xE3\x83\x86\xE3\x82\xAD\xE3\x82\xB9\xE3\x83\x88",     // CJK
      "\xD0\x9F\xD1\x80\xD0\xB8\xD0\xB2\xD0\xB5\xD1\x82, \xD0\xBC\xD0\xB8\xD1\x80!",  // Cyrillic
      "\xD9\x85\xD8\xB1\xD8\xAD\xD8\xA8\xD8\xA7 "
      "\xD8\xA8\xD8\xA7\xD9\x84\xD8\xB9\xD8\xA7\xD9\x84\xD9\x85",
      "\xF0\x9F\x87\xBA\xF0\x9F\x87\xB3 \xF0\x9F\x91\xA8\xE2\x80\x8D\xF0\x9F\x91\xA9\xE2\x80\x8D"
      "\xF0\x9F\x91\xA7 ZWJ family",
      "tabs\tand\nnew lines\n\n  double  spaces and a trailing space ",
      " leading space, \xE2\x82\xAC"
      "100 and \xC2\xBD \xE2\x89\xA0 \xE2\x88\x9E",
      "\xF0\x9D\x94\x98\xF0\x9D\x94\xAB\xF0\x9D\x94\xA6 \xF0\x90\x8D\x88 \xF4\x8F\xBF\xBF end",
  };
  return texts;
}

// Feeds ids to a StreamingDecoder; checks every chunk is whole UTF-8 and returns the concatenation.
std::vector<int32_t> concat(std::vector<int32_t> a, const std::vector<int32_t>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// What the streamed text must equal: the full decode minus what the context already showed.
std::string expected_stream(const Tokenizer& tok, const std::vector<int32_t>& context,
                            const std::vector<int32_t>& ids) {
  const std::string full = tok.decode(concat(context, ids));
  const std::string shown = tok.decode(context);
  EXPECT_EQ(full.compare(0, shown.size(), shown), 0) << "context text is not a prefix";
  return full.substr(std::min(shown.size(), full.size()));
}

// ---------------------------------------------------------------------------------------------

TEST(Tokenizer, StoriesGoldenIds) {
  EAGLE2_SHARED_FILE(path, kStories);
  auto tok = Tokenizer::load(path);
  EXPECT_EQ(tok->vocab_size(), 512);
  EXPECT_EQ(tok->bos_id(), 1);
  EXPECT_EQ(tok->eos_id(), 2);
  EXPECT_EQ(tok->encode("Once upon a time", true), (std::vector<int32_t>{1, 403, 407, 261, 378}));
  EXPECT_EQ(tok->encode("Once upon a time", false), (std::vector<int32_t>{403, 407, 261, 378}));
  EXPECT_EQ(tok->decode({1, 403, 407, 261, 378}), "Once upon a time");
  EXPECT_EQ(tok->encode("", false), std::vector<int32_t>{});
  EXPECT_EQ(tok->encode("", true), std::vector<int32_t>{1});
  EXPECT_EQ(tok->decode({}), "");
}

TEST(Tokenizer, Llama2GoldenIds) {
  EAGLE2_SHARED_FILE(path, kLlama2);
  auto tok = Tokenizer::load(path);
  EXPECT_EQ(tok->vocab_size(), 32000);
  EXPECT_EQ(tok->bos_id(), 1);
  EXPECT_EQ(tok->eos_id(), 2);
  EXPECT_EQ(tok->encode("Hello world", true), (std::vector<int32_t>{1, 15043, 3186}));
  EXPECT_EQ(tok->piece(15043), "\xE2\x96\x81Hello");
}

// Whitespace-only differences are the model's normalizer at work: stories260K's tokenizer was
// trained with remove_extra_whitespaces (runs of spaces collapse, leading/trailing ones go),
// LLaMA-2's keeps every byte.
bool whitespace_exact(const std::string& text) {
  return text.find("  ") == std::string::npos && text.front() != ' ' && text.back() != ' ';
}

TEST(Tokenizer, RoundTripsIncludingByteFallback) {
  for (const char* rel : {kStories, kLlama2}) {
    EAGLE2_SHARED_FILE(path, rel);
    auto tok = Tokenizer::load(path);
    const bool keeps_whitespace = rel == kLlama2;
    for (const std::string& text : multilingual_texts()) {
      if (!keeps_whitespace && !whitespace_exact(text)) continue;
      const auto ids = tok->encode(text, true);
      EXPECT_EQ(tok->decode(ids), text) << rel;
    }
  }
  EAGLE2_SHARED_FILE(path, kStories);
  auto tok = Tokenizer::load(path);
  EXPECT_EQ(tok->decode(tok->encode("  two  spaces ", true)), "two spaces");
}

TEST(Tokenizer, SmallVocabularyUsesByteFallbackForEmojiAndCjk) {
  EAGLE2_SHARED_FILE(path, kStories);
  auto tok = Tokenizer::load(path);
  const int32_t e2 = piece_id(*tok, "<0xE2>"), x82 = piece_id(*tok, "<0x82>"),
                ac = piece_id(*tok, "<0xAC>");
  const std::vector<int32_t> smile = tok->encode("\xF0\x9F\x98\x80", false);  // U+1F600
  ASSERT_GE(smile.size(), 4u);
  EXPECT_EQ(std::vector<int32_t>(smile.end() - 4, smile.end()),
            (std::vector<int32_t>{piece_id(*tok, "<0xF0>"), piece_id(*tok, "<0x9F>"),
                                  piece_id(*tok, "<0x98>"), piece_id(*tok, "<0x80>")}));
  for (const std::string text : {"\xF0\x9F\x98\x80", "\xE4\xBD\xA0\xE5\xA5\xBD"}) {
    int bytes = 0;
    for (int32_t id : tok->encode(text, false)) bytes += tok->piece(id).rfind("<0x", 0) == 0;
    EXPECT_EQ(bytes, static_cast<int>(text.size())) << text;
  }
  EXPECT_EQ(tok->decode({e2, x82, ac}), "\xE2\x82\xAC");
}

// What a token adds mid-text (a server's logprobs): its bytes, the dummy-prefix space kept, byte
// fallback tokens one raw byte each (half a character here), control tokens nothing.
TEST(Tokenizer, TokenBytesAddUpToTheTextMidSequence) {
  for (const char* rel : {kStories, kLlama2}) {
    EAGLE2_SHARED_FILE(path, rel);
    auto tok = Tokenizer::load(path);
    const std::string text = "Hello world, caf\xC3\xA9 \xF0\x9F\x98\x80 ok";
    std::string bytes;
    for (const int32_t id : tok->encode(text, true)) bytes += tok->token_bytes(id);
    EXPECT_EQ(bytes, " " + text) << rel;  // SentencePiece's dummy prefix, kept mid-text
    EXPECT_EQ(tok->token_bytes(tok->bos_id()), "");
  }
  EAGLE2_SHARED_FILE(path, kStories);
  auto tok = Tokenizer::load(path);
  const std::vector<int32_t> emoji = tok->encode("\xF0\x9F\x98\x80", false);
  ASSERT_GE(emoji.size(), 4u);  // byte fallback in a 512-token vocabulary
  EXPECT_EQ(tok->token_bytes(emoji[emoji.size() - 4]), "\xF0");
  EXPECT_THROW(tok->token_bytes(tok->vocab_size()), Error);
}

TEST(Tokenizer, IdsOutOfRangeAreErrors) {
  EAGLE2_SHARED_FILE(path, kStories);
  auto tok = Tokenizer::load(path);
  EXPECT_EQ(test::error_of([&] {
              tok->decode({5, 512});
            }),
            "tokenizer: token id 512 is out of range [0, 512)");
  EXPECT_EQ(test::error_of([&] { tok->piece(-1); }),
            "tokenizer: token id -1 is out of range [0, 512)");
  StreamingDecoder dec(*tok);
  EXPECT_EQ(test::error_of([&] { dec.push(9999); }),
            "tokenizer: token id 9999 is out of range [0, 512)");
  EXPECT_EQ(dec.push(403), "Once");  // the decoder is still usable after a rejected id
}

// ---------------------------------------------------------------------------------------------
// Streaming

TEST(StreamingDecoder, HoldsBackIncompleteCharacters) {
  EAGLE2_SHARED_FILE(path, kStories);
  auto tok = Tokenizer::load(path);
  const int32_t e2 = piece_id(*tok, "<0xE2>"), x82 = piece_id(*tok, "<0x82>"),
                ac = piece_id(*tok, "<0xAC>");
  StreamingDecoder dec(*tok, {1});
  EXPECT_EQ(dec.push(403), "Once");
  EXPECT_EQ(dec.push(407), " upon");
  EXPECT_EQ(dec.push(e2), "");
  EXPECT_EQ(dec.push(x82), "");
  EXPECT_EQ(dec.push(ac), "\xE2\x82\xAC");
  EXPECT_EQ(dec.finish(), "");

  // An unfinished character is flushed by finish() as SentencePiece decodes it: one U+FFFD per
  // byte.
  StreamingDecoder cut(*tok, {1, 403});
  EXPECT_EQ(cut.push(e2), "");
  EXPECT_EQ(cut.push(x82), "");
  EXPECT_EQ(cut.finish(), "\xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_EQ(tok->decode({1, 403, e2, x82}), "Once\xEF\xBF\xBD\xEF\xBF\xBD");

  // A context ending inside a character: the character is emitted whole once complete.
  StreamingDecoder split(*tok, {1, 403, e2});
  EXPECT_EQ(split.push(x82), "");
  EXPECT_EQ(split.push(ac), "\xE2\x82\xAC");

  // A non-byte token ends the run: the unfinished bytes become U+FFFD right away.
  StreamingDecoder broken(*tok, {1, 403});
  EXPECT_EQ(broken.push(e2), "");
  EXPECT_EQ(broken.push(407), "\xEF\xBF\xBD upon");
}

TEST(StreamingDecoder, LeadingSpaceFollowsContext) {
  EAGLE2_SHARED_FILE(path, kStories);
  auto tok = Tokenizer::load(path);
  // With no text before it, the first piece's dummy-prefix space is dropped, as decode() does...
  EXPECT_EQ(test::streamed_text(*tok, {}, {403, 407}), "Once upon");
  EXPECT_EQ(test::streamed_text(*tok, {1}, {403, 407}), "Once upon");
  // ...and after a context with text it is kept.
  EXPECT_EQ(test::streamed_text(*tok, {1, 403}, {407, 261}), " upon a");
}

TEST(StreamingDecoder, RealEncodingsMatchFullDecode) {
  for (const char* rel : {kStories, kLlama2}) {
    EAGLE2_SHARED_FILE(path, rel);
    auto tok = Tokenizer::load(path);
    const auto prompt = tok->encode("Prompt:", true);
    for (const std::string& text : multilingual_texts()) {
      const auto with_bos = tok->encode(text, true);
      EXPECT_EQ(test::streamed_text(*tok, {}, with_bos), tok->decode(with_bos)) << rel;
      const auto ids = tok->encode(text, false);
      EXPECT_EQ(test::streamed_text(*tok, prompt, ids), expected_stream(*tok, prompt, ids))
          << rel << ": " << text;
    }
  }
}

// Random id sequences, rich in byte-fallback pieces (valid characters, stray and truncated
// bytes), control and unknown tokens and whitespace pieces, after several kinds of context.
TEST(StreamingDecoder, RandomSequencesMatchFullDecode) {
  for (const char* rel : {kStories, kLlama2}) {
    EAGLE2_SHARED_FILE(path, rel);
    auto tok = Tokenizer::load(path);
    std::vector<int32_t> byte_id(256);
    for (int b = 0; b < 256; ++b) {
      char name[8];
      std::snprintf(name, sizeof name, "<0x%02X>", b);
      byte_id[b] = piece_id(*tok, name);
    }
    const int32_t space = piece_id(*tok, "\xE2\x96\x81");
    std::mt19937 gen(1234);
    auto below = [&gen](int n) { return static_cast<int>(gen() % static_cast<unsigned>(n)); };
    const std::vector<std::string> chars = {"\xC3\xA9",     "\xE2\x82\xAC",     "\xF0\x9F\x98\x80",
                                            "\xE4\xBD\xA0", "\xF4\x8F\xBF\xBF", "a"};
    auto random_ids = [&](int len) {
      std::vector<int32_t> ids;
      while (static_cast<int>(ids.size()) < len) {
        switch (below(10)) {
          case 0:
          case 1: {  // a valid character spelled in bytes
            for (unsigned char c : chars[below(static_cast<int>(chars.size()))])
              ids.push_back(byte_id[c]);
            break;
          }
          case 2: {  // the first 1-3 bytes of a character: truncated
            const std::string& c = chars[below(4)];
            for (size_t i = 0, n = 1 + below(static_cast<int>(c.size()) - 1); i < n; ++i)
              ids.push_back(byte_id[static_cast<unsigned char>(c[i])]);
            break;
          }
          case 3:
            ids.push_back(byte_id[below(256)]);
            break;  // any byte
          case 4:
            ids.push_back(below(3));
            break;  // <unk>, <s>, </s>
          case 5:
            ids.push_back(space);
            break;
          default:
            ids.push_back(below(tok->vocab_size()));
            break;
        }
      }
      ids.resize(len);
      return ids;
    };
    for (int trial = 0; trial < 1500; ++trial) {
      std::vector<int32_t> context;
      switch (trial % 5) {
        case 0:
          break;
        case 1:
          context = {tok->bos_id()};
          break;
        case 2:
          context = tok->encode("The end.", true);
          break;
        case 3:
          context = {tok->bos_id(), space};
          break;
        default:  // random, ending on a plain piece so that its text is final
          context = random_ids(below(6));
          context.push_back(tok->encode("x", false).back());
      }
      const auto ids = random_ids(1 + below(40));
      ASSERT_EQ(test::streamed_text(*tok, context, ids), expected_stream(*tok, context, ids))
          << rel << " trial " << trial;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// UTF-8

TEST(Utf8, FirstInvalid) {
  const auto npos = std::string::npos;
  EXPECT_EQ(first_invalid_utf8(""), npos);
  EXPECT_EQ(first_invalid_utf8("plain ascii"), npos);
  EXPECT_EQ(first_invalid_utf8(std::string("nul\0inside", 10)), npos);
  EXPECT_EQ(first_invalid_utf8("\xE2\x82\xAC\xF0\x9F\x98\x80\xC3\xA9"), npos);
  EXPECT_EQ(first_invalid_utf8("\xED\x9F\xBF"), npos);      // U+D7FF, just below surrogates
  EXPECT_EQ(first_invalid_utf8("\xEE\x80\x80"), npos);      // U+E000, just above
  EXPECT_EQ(first_invalid_utf8("\xF4\x8F\xBF\xBF"), npos);  // U+10FFFF
  EXPECT_EQ(first_invalid_utf8("\xEF\xBF\xBD"), npos);      // U+FFFD itself

  EXPECT_EQ(first_invalid_utf8("abc\xC3"), 3u);  // truncated at the end
  EXPECT_EQ(first_invalid_utf8("ok\xE2\x82"), 2u);
  EXPECT_EQ(first_invalid_utf8("\xF0\x9F\x98 x"), 0u);    // truncated in the middle
  EXPECT_EQ(first_invalid_utf8("\x80"), 0u);              // lone continuation
  EXPECT_EQ(first_invalid_utf8("a\xC0\xAF"), 1u);         // overlong '/'
  EXPECT_EQ(first_invalid_utf8("\xC1\xBF"), 0u);          // overlong
  EXPECT_EQ(first_invalid_utf8("ab\xE0\x80\xAF"), 2u);    // overlong 3-byte
  EXPECT_EQ(first_invalid_utf8("\xF0\x80\x80\xAF"), 0u);  // overlong 4-byte
  EXPECT_EQ(first_invalid_utf8("\xED\xA0\x80"), 0u);      // U+D800 surrogate
  EXPECT_EQ(first_invalid_utf8("x\xED\xBF\xBF"), 1u);     // U+DFFF surrogate
  EXPECT_EQ(first_invalid_utf8("\xF4\x90\x80\x80"), 0u);  // U+110000
  EXPECT_EQ(first_invalid_utf8("\xF5\x80\x80\x80"), 0u);
  EXPECT_EQ(first_invalid_utf8("\xFF"), 0u);
  EXPECT_EQ(first_invalid_utf8("\xE2\x28\xA1"), 0u);  // bad continuation
}

TEST(Utf8, CompletePrefix) {
  EXPECT_EQ(complete_utf8_prefix(""), 0u);
  EXPECT_EQ(complete_utf8_prefix("abc"), 3u);
  EXPECT_EQ(complete_utf8_prefix("\xE2\x82\xAC"), 3u);
  EXPECT_EQ(complete_utf8_prefix("a\xE2"), 1u);
  EXPECT_EQ(complete_utf8_prefix("a\xE2\x82"), 1u);
  EXPECT_EQ(complete_utf8_prefix("\xF0\x9F\x98"), 0u);
  EXPECT_EQ(complete_utf8_prefix("\xF0\x9F\x98\x80"), 4u);
  EXPECT_EQ(complete_utf8_prefix("\xC3"), 0u);
  // Already invalid: no later byte can complete it, so it counts as done.
  EXPECT_EQ(complete_utf8_prefix("\xE0\x80"), 2u);
  EXPECT_EQ(complete_utf8_prefix("\xED\xA0"), 2u);
  EXPECT_EQ(complete_utf8_prefix("\xF4\x90"), 2u);
  EXPECT_EQ(complete_utf8_prefix("\xC0"), 1u);
  EXPECT_EQ(complete_utf8_prefix("\x80\x80\x80"), 3u);
  EXPECT_EQ(complete_utf8_prefix("\xE2\x82\xAC\x82"), 4u);
}

TEST(Tokenizer, InvalidUtf8PromptIsAnError) {
  EAGLE2_SHARED_FILE(path, kStories);
  auto tok = Tokenizer::load(path);
  EXPECT_EQ(test::error_of([&] { tok->encode("abc\xC3", true); }),
            "prompt is not valid UTF-8 at byte 3");
  EXPECT_EQ(test::error_of([&] { tok->encode("\xED\xA0\x80", true); }),
            "prompt is not valid UTF-8 at byte 0");
  EXPECT_EQ(test::error_of([&] { tok->encode("hi \xC0\xAF", false); }),
            "prompt is not valid UTF-8 at byte 3");
  EXPECT_EQ(test::error_of([&] { tok->encode("\xE2\x82\xAC \xF4\x90\x80\x80", false); }),
            "prompt is not valid UTF-8 at byte 4");
}

// ---------------------------------------------------------------------------------------------
// Files

TEST(Tokenizer, MissingFileIsAnError) {
  EXPECT_EQ(test::error_of([] { Tokenizer::load("/nonexistent/dir/tokenizer.model"); }),
            "/nonexistent/dir/tokenizer.model: cannot open: No such file or directory");
  const std::string dir = test::temp_dir("tokenizer_dir");
  EXPECT_EQ(test::error_of([&] { Tokenizer::load(dir); }), dir + ": not a regular file");
}

TEST(Tokenizer, CorruptFileIsAnError) {
  const std::string dir = test::temp_dir("tokenizer_corrupt");
  auto write = [&](const std::string& name, const std::string& bytes) {
    std::ofstream(dir + "/" + name, std::ios::binary) << bytes;
    return dir + "/" + name;
  };
  const std::string empty = write("empty.model", "");
  EXPECT_EQ(test::error_of([&] { Tokenizer::load(empty); }),
            "tokenizer: " + empty + " is not a SentencePiece model (empty file)");

  std::mt19937 gen(7);
  std::string noise(4096, '\0');
  for (char& c : noise) c = static_cast<char>(gen());
  const std::string garbage = write("garbage.model", noise);
  const std::string msg = test::error_of([&] { Tokenizer::load(garbage); });
  EXPECT_EQ(msg.rfind("tokenizer: " + garbage + " is not a valid SentencePiece model", 0), 0u)
      << msg;

  const std::string text = write("text.model", "{\"not\": \"a tokenizer\"}\n");
  EXPECT_NE(test::error_of([&] { Tokenizer::load(text); }).find(text), std::string::npos);
}

TEST(Tokenizer, TruncatedModelIsAnError) {
  EAGLE2_SHARED_FILE(path, kStories);
  const std::string bytes = test::read_file(path);
  const std::string dir = test::temp_dir("tokenizer_truncated");
  for (size_t keep : {bytes.size() / 2, bytes.size() - 1, size_t{7}}) {
    const std::string cut = dir + "/cut" + std::to_string(keep) + ".model";
    std::ofstream(cut, std::ios::binary) << bytes.substr(0, keep);
    const std::string msg = test::error_of([&] { Tokenizer::load(cut); });
    EXPECT_EQ(msg, "tokenizer: " + cut +
                       " is not a valid SentencePiece model (cannot parse it: truncated, or not a "
                       "tokenizer.model)");
  }
}

}  // namespace
}  // namespace eagle2

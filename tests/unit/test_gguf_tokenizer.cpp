// Tokenizers from GGUF metadata: the SentencePiece-style vocabulary agrees with libsentencepiece
// on the same model (stories260K and the bundled code-lm ship both), the merge and byte-fallback
// rules on a tiny vocabulary, and hostile tokenizer metadata gives one clear Error.
// (llama.cpp's vocabulary tests: tests/golden/test_gguf_vocab.cpp.)
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>

#include "io/gguf.h"
#include "support/errors.h"
#include "support/gguf_writer.h"
#include "support/shared_data.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer_load/load_tokenizer.h"

namespace eagle2 {
namespace {

using test::error_of;

const std::vector<std::string>& texts() {
  static const std::vector<std::string> t = {
      "Once upon a time, there was a little girl named Lily.",
      "Hello, world! \xF0\x9F\x98\x80 caf\xC3\xA9 na\xC3\xAFve \xE2\x80\x94 "
      "\xE2\x80\x9Cquotes\xE2\x80\x9D",
      "\xE4\xBD\xA0\xE5\xA5\xBD\xEF\xBC\x8C\xE4\xB8\x96\xE7\x95\x8C\xE3\x80\x82",
      "def add(a, b):\n    return a + b\n\nprint(add(1, 2))",
      "x<s>y</s>z",
      "\xD0\x9F\xD1\x80\xD0\xB8\xD0\xB2\xD0\xB5\xD1\x82, \xD0\xBC\xD0\xB8\xD1\x80!",
  };
  return t;
}

// The same model as a GGUF and as a tokenizer.model: identical ids and text.
// stories260K's tokenizer.model collapses runs of spaces (remove_extra_whitespaces), which a GGUF
// vocabulary cannot express (llama.cpp keeps every space); its <unk> surface is also its own.
void expect_same_as_sentencepiece(const std::string& gguf, const std::string& model,
                                  bool collapses_spaces) {
  auto g = load_tokenizer(gguf);
  auto s = Tokenizer::load(model);
  EXPECT_STREQ(g->kind(), "gguf-spm");
  ASSERT_EQ(g->vocab_size(), s->vocab_size());
  EXPECT_EQ(g->bos_id(), s->bos_id());
  EXPECT_EQ(g->eos_id(), s->eos_id());
  for (int32_t id = 0; id < g->vocab_size(); ++id) ASSERT_EQ(g->piece(id), s->piece(id)) << id;
  for (const std::string& text : texts()) {
    // libsentencepiece reads "<s>" in a text as characters; GGUF vocabularies, as llama.cpp and
    // Hugging Face do, as the control token.
    if (text.find("<s>") != std::string::npos) continue;
    if (collapses_spaces && text.find("  ") != std::string::npos) continue;
    EXPECT_EQ(g->encode(text, true), s->encode(text, true)) << text;
  }
  std::mt19937 gen(5);
  for (int trial = 0; trial < 300; ++trial) {
    std::vector<int32_t> ids(1 + gen() % 30);
    // Ids from 1: the <unk> surface is the tokenizer.model's own (stories260K's is escaped text).
    for (int32_t& id : ids)
      id = 1 + static_cast<int32_t>(gen() % (trial % 2 ? 300 : g->vocab_size() - 1));
    ASSERT_EQ(g->decode(ids), s->decode(ids)) << "trial " << trial;
  }
}

TEST(GgufTokenizer, AgreesWithLibsentencepieceOnTheSameModel) {
  EAGLE2_SHARED_FILE(gguf, "data/gguf/stories260K-f32.gguf");
  EAGLE2_SHARED_FILE(model, "data/models/stories260K-hf/tokenizer.model");
  expect_same_as_sentencepiece(gguf, model, true);
  EAGLE2_SHARED_FILE(code_gguf, "data/gguf/code-lm-q8_0.gguf");
  expect_same_as_sentencepiece(
      code_gguf, std::string(EAGLE2_SOURCE_DIR) + "/models/code-lm/tokenizer.model", false);
}

std::string write_temp_gguf(const std::string& name, const std::string& bytes) {
  static const std::string dir = test::temp_dir("gguf_tok");
  const std::string path = dir + "/" + name + ".gguf";
  test::write_file(path, bytes);
  return path;
}

TEST(GgufTokenizer, MergesByScoreWithByteFallback) {
  auto t = load_tokenizer(write_temp_gguf("tiny", test::tiny_spm_gguf()));
  EXPECT_EQ(t->vocab_size(), 9);
  EXPECT_TRUE(t->adds_bos());
  // "▁ab": "ab" (-0.25) outscores "▁a" (-0.5); "▁ab" is no entry, so ▁ + ab.
  EXPECT_EQ(t->encode("ab", true), (std::vector<int32_t>{1, 4, 8}));
  EXPECT_EQ(t->encode("a", false), (std::vector<int32_t>{7}));
  // "A" is no entry: its byte token; "é" has no byte tokens at all: <unk> per byte.
  EXPECT_EQ(t->encode("A", false), (std::vector<int32_t>{4, 3}));
  EXPECT_EQ(t->encode("\xC3\xA9", false), (std::vector<int32_t>{4, 0, 0}));
  // Control tokens in the text are those tokens, and the text after one gets its space prefix.
  EXPECT_EQ(t->encode("a</s>a", false), (std::vector<int32_t>{7, 2, 7}));
  EXPECT_EQ(t->decode({1, 7, 4, 8, 2}), "a ab");
  EXPECT_EQ(t->decode({3, 0}), "A \xE2\x81\x87 ");
  EXPECT_EQ(t->piece(7),
            "\xE2\x96\x81"
            "a");
}

TEST(GgufTokenizer, HostileMetadataGivesOneClearError) {
  auto err = [](const std::string& name, const std::function<void(test::GgufWriter&)>& add) {
    test::GgufWriter w;
    add(w);
    const std::string path = write_temp_gguf(name, w.bytes());
    const std::string msg = error_of([&] { load_tokenizer(path); });
    const std::string prefix = path + ": ";
    EXPECT_EQ(msg.rfind(prefix, 0), 0u) << msg;
    return msg.substr(std::min(msg.size(), prefix.size()));
  };
  const std::vector<std::string> tokens = {"<unk>", "<s>", "</s>", "a"};
  EXPECT_EQ(err("no_model", [](test::GgufWriter&) {}), "GGUF: no tokenizer.ggml.model");
  EXPECT_EQ(err("bert", [](test::GgufWriter& w) { w.kv_string("tokenizer.ggml.model", "bert"); }),
            "GGUF: tokenizer.ggml.model 'bert' is not supported (llama, gpt2 are)");
  EXPECT_EQ(
      err("no_tokens", [](test::GgufWriter& w) { w.kv_string("tokenizer.ggml.model", "llama"); }),
      "GGUF: no tokenizer.ggml.tokens");
  EXPECT_EQ(err("scores",
                [&](test::GgufWriter& w) {
                  w.kv_string("tokenizer.ggml.model", "llama");
                  w.kv_strings("tokenizer.ggml.tokens", tokens);
                  w.kv_f32s("tokenizer.ggml.scores", {0, 0});
                }),
            "GGUF: tokenizer.ggml.scores has 2 entries for 4 tokens");
  EXPECT_EQ(err("nan",
                [&](test::GgufWriter& w) {
                  w.kv_string("tokenizer.ggml.model", "llama");
                  w.kv_strings("tokenizer.ggml.tokens", tokens);
                  w.kv_f32s("tokenizer.ggml.scores", {0, 0, std::nanf(""), 0});
                }),
            "the score of token 2 is not a finite number");
  EXPECT_EQ(err("types",
                [&](test::GgufWriter& w) {
                  w.kv_string("tokenizer.ggml.model", "llama");
                  w.kv_strings("tokenizer.ggml.tokens", tokens);
                  w.kv_i32s("tokenizer.ggml.token_type", {2, 3, 3, 9});
                }),
            "GGUF: tokenizer.ggml.token_type[3] = 9 is not a token type (0 to 6)");
  EXPECT_EQ(err("bos",
                [&](test::GgufWriter& w) {
                  w.kv_string("tokenizer.ggml.model", "llama");
                  w.kv_strings("tokenizer.ggml.tokens", tokens);
                  w.kv_u32("tokenizer.ggml.bos_token_id", 99);
                }),
            "GGUF: tokenizer.ggml.bos_token_id = 99 is not a token id (the vocabulary has 4)");
  EXPECT_EQ(err("dup",
                [](test::GgufWriter& w) {
                  w.kv_string("tokenizer.ggml.model", "llama");
                  w.kv_strings("tokenizer.ggml.tokens", {"<unk>", "<s>", "</s>", "a", "a"});
                }),
            "token 4 ('a') repeats token 3");
  EXPECT_EQ(err("byte",
                [&](test::GgufWriter& w) {
                  w.kv_string("tokenizer.ggml.model", "llama");
                  w.kv_strings("tokenizer.ggml.tokens", {"<unk>", "<s>", "</s>", "<0xZZ>"});
                  w.kv_i32s("tokenizer.ggml.token_type", {2, 3, 3, 6});
                }),
            "byte token 3 is '<0xZZ>', expected <0xAB>");
  EXPECT_EQ(err("no_merges",
                [&](test::GgufWriter& w) {
                  w.kv_string("tokenizer.ggml.model", "gpt2");
                  w.kv_strings("tokenizer.ggml.tokens", tokens);
                }),
            "GGUF: no tokenizer.ggml.merges");
  EXPECT_EQ(err("pre",
                [&](test::GgufWriter& w) {
                  w.kv_string("tokenizer.ggml.model", "gpt2");
                  w.kv_string("tokenizer.ggml.pre", "tekken");
                  w.kv_strings("tokenizer.ggml.tokens", tokens);
                  w.kv_strings("tokenizer.ggml.merges", {});
                }),
            "GGUF: tokenizer.ggml.pre 'tekken' is not supported (default, gpt-2, llama-bpe, qwen2, "
            "deepseek-coder, starcoder are)");
  EXPECT_EQ(err("merge",
                [&](test::GgufWriter& w) {
                  w.kv_string("tokenizer.ggml.model", "gpt2");
                  w.kv_strings("tokenizer.ggml.tokens", tokens);
                  w.kv_strings("tokenizer.ggml.merges", {"a q"});
                }),
            "merge 0 ('a q') needs 'q', which is not in the vocabulary");
  EXPECT_EQ(err("tokens_type",
                [](test::GgufWriter& w) {
                  w.kv_string("tokenizer.ggml.model", "gpt2");
                  w.kv_f32s("tokenizer.ggml.tokens", {1});
                }),
            "GGUF: tokenizer.ggml.tokens is an array of float32, expected an array of string");
}

}  // namespace
}  // namespace eagle2

// Byte-level BPE: the byte alphabet, merges by rank, added/special tokens in the text, BOS/EOS
// from tokenizer_config.json, NFC, the folder precedence of tokenizer.json over tokenizer.model,
// and hostile tokenizer.json files with exact messages. (Exact encodings of real text:
// tests/golden/test_bpe_golden.cpp; streaming: test_token_streams.cpp.)
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "support/errors.h"
#include "support/shared_data.h"
#include "tokenizer/byte_level.h"
#include "tokenizer/tokenizer_json.h"
#include "tokenizer_load/load_tokenizer.h"

namespace eagle2 {
namespace {

using nlohmann::json;
using test::error_of;
namespace fs = std::filesystem;

// The real tokenizers, loaded once per test binary (each takes a fraction of a second).
const Tokenizer& shared_tokenizer(const std::string& path) {
  static std::map<std::string, std::unique_ptr<Tokenizer>> cache;
  auto& t = cache[path];
  if (!t) t = load_tokenizer(path);
  return *t;
}

TEST(ByteLevel, AlphabetIsGpt2s) {
  EXPECT_EQ(byte_level_char(' '), "\xC4\xA0");   // Ġ U+0120
  EXPECT_EQ(byte_level_char('\n'), "\xC4\x8A");  // Ċ U+010A
  EXPECT_EQ(byte_level_char('a'), "a");
  EXPECT_EQ(byte_level_char(0xE9), "\xC3\xA9");  // é stands for itself
  EXPECT_EQ(byte_level_char(0xAD), "\xC5\x83");  // the soft hyphen is the last moved: U+0143
  std::string all;
  for (int b = 0; b < 256; ++b) all += static_cast<char>(b);
  std::string back;
  ASSERT_TRUE(from_byte_level(to_byte_level(all), &back));
  EXPECT_EQ(back, all);
  EXPECT_FALSE(from_byte_level("\xE2\x82\xAC", &back));  // € is outside the alphabet
  EXPECT_FALSE(from_byte_level("\xC4", &back));          // truncated
}

// A tokenizer.json with the 256 byte entries, "ab", "bc", "abc" and the given merges.
json tiny_json(const json& merges) {
  json vocab = json::object();
  for (int b = 0; b < 256; ++b) vocab[byte_level_char(static_cast<uint8_t>(b))] = b;
  vocab["ab"] = 256;
  vocab["bc"] = 257;
  vocab["abc"] = 258;
  return {
      {"model", {{"type", "BPE"}, {"vocab", vocab}, {"merges", merges}}},
      {"pre_tokenizer", {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", true}}},
      {"added_tokens",
       json::array(
           {{{"id", 259}, {"content", "<|x|>"}, {"special", true}},
            {{"id", 260}, {"content", "<|xy|>"}, {"special", true}},
            {{"id", 261}, {"content", "<tag>"}, {"special", false}, {"normalized", false}}})}};
}

std::string write_json(const std::string& name, const json& j) {
  const std::string dir = test::temp_dir("bpe_" + name);
  test::write_file(dir + "/tokenizer.json", j.dump());
  return dir + "/tokenizer.json";
}

TEST(BpeTokenizer, MergesApplyLowestRankFirst) {
  // "b c" has the lowest rank: "abc" becomes a + bc, and no merge joins those two.
  auto t1 = load_tokenizer_json(write_json("rank1", tiny_json({"b c", "a b", "ab c"})));
  EXPECT_EQ(t1->encode("abc", false), (std::vector<int32_t>{'a', 257}));
  // With "a b" first, ab + c then merge into abc (merges in the newer [a, b] list form).
  auto t2 = load_tokenizer_json(
      write_json("rank2", tiny_json(json::array({{"a", "b"}, {"b", "c"}, {"ab", "c"}}))));
  EXPECT_EQ(t2->encode("abc", false), (std::vector<int32_t>{258}));
  EXPECT_EQ(t2->encode("abcabc", false), (std::vector<int32_t>{258, 258}));
  EXPECT_EQ(t2->decode({258, ' ' + 0}), "abc ");  // ' ' is byte 32's entry Ġ, id 32
  EXPECT_EQ(t2->piece(32), "\xC4\xA0");
  EXPECT_EQ(t2->vocab_size(), 262);
  EXPECT_STREQ(t2->kind(), "bpe");
}

TEST(BpeTokenizer, AddedTokensAreFoundInTheTextLeftmostLongest) {
  auto t = load_tokenizer_json(write_json("added", tiny_json({"a b"})));
  EXPECT_EQ(t->encode("a<|x|>b", false), (std::vector<int32_t>{'a', 259, 'b'}));
  EXPECT_EQ(t->encode("<|xy|><|x|>", false), (std::vector<int32_t>{260, 259}));
  EXPECT_EQ(t->encode("ab<tag>ab", false), (std::vector<int32_t>{256, 261, 256}));
  // Control tokens decode to no text, other added tokens to their content.
  EXPECT_EQ(t->decode({'a', 259, 261, 'b'}), "a<tag>b");
  EXPECT_EQ(t->piece(259), "<|x|>");
}

TEST(BpeTokenizer, RealSpecialTokensInText) {
  EAGLE2_SHARED_FILE(llama3, "data/tokenizers/llama3/tokenizer.json");
  const Tokenizer& l = shared_tokenizer(llama3);
  EXPECT_EQ(l.encode("<|begin_of_text|>", false), std::vector<int32_t>{128000});
  std::vector<int32_t> want{128000, 128006};
  for (int32_t id : l.encode("user", false)) want.push_back(id);
  want.push_back(128007);
  EXPECT_EQ(l.encode("<|begin_of_text|><|start_header_id|>user<|end_header_id|>", false), want);
  EXPECT_EQ(l.decode(want), "user");

  EAGLE2_SHARED_FILE(qwen3, "data/tokenizers/qwen3/tokenizer.json");
  const Tokenizer& q = shared_tokenizer(qwen3);
  want = {151644};
  for (int32_t id : q.encode("user\nhi", false)) want.push_back(id);
  want.push_back(151645);
  EXPECT_EQ(q.encode("<|im_start|>user\nhi<|im_end|>", false), want);
  // <think> is an added token but not a special one: it is text when decoded.
  EXPECT_EQ(q.encode("<think>", false), std::vector<int32_t>{151667});
  EXPECT_EQ(q.decode({151667, 151645}), "<think>");
}

TEST(BpeTokenizer, BosAndEosComeFromTokenizerConfig) {
  EAGLE2_SHARED_FILE(llama3, "data/tokenizers/llama3/tokenizer.json");
  const Tokenizer& l = shared_tokenizer(llama3);
  EXPECT_EQ(l.bos_id(), 128000);
  EXPECT_EQ(l.eos_id(), 128001);
  EXPECT_EQ(l.vocab_size(), 128256);
  EXPECT_EQ(l.encode("Hello", true), (std::vector<int32_t>{128000, 9906}));
  // This tokenizer.json's post-processor adds no template and the config sets no add_bos_token.
  EXPECT_FALSE(l.adds_bos());

  EAGLE2_SHARED_FILE(qwen3, "data/tokenizers/qwen3/tokenizer.json");
  const Tokenizer& q = shared_tokenizer(qwen3);
  EXPECT_EQ(q.bos_id(), -1);
  EXPECT_EQ(q.eos_id(), 151645);  // <|im_end|>
  EXPECT_FALSE(q.adds_bos());
  EXPECT_EQ(error_of([&] { q.encode("hi", true); }), "tokenizer: the model has no BOS token");

  // add_bos_token and {"content": ...} token objects, as older configs write them.
  const std::string path = write_json("config", tiny_json({"a b"}));
  test::write_file(
      fs::path(path).parent_path() / "tokenizer_config.json",
      R"({"add_bos_token": true, "bos_token": {"content": "<|x|>"}, "eos_token": "<|xy|>"})");
  auto t = load_tokenizer_json(path);
  EXPECT_TRUE(t->adds_bos());
  EXPECT_EQ(t->bos_id(), 259);
  EXPECT_EQ(t->eos_id(), 260);
  // split_special_tokens: special tokens in the text are text; other added tokens still match.
  test::write_file(fs::path(path).parent_path() / "tokenizer_config.json",
                   R"({"split_special_tokens": true})");
  EXPECT_EQ(load_tokenizer_json(path)->encode("<|x|><tag>", false),
            (std::vector<int32_t>{'<', '|', 'x', '|', '>', 261}));
  test::write_file(fs::path(path).parent_path() / "tokenizer_config.json",
                   R"({"bos_token": "<nope>"})");
  EXPECT_EQ(error_of([&] { load_tokenizer_json(path); }),
            (fs::path(path).parent_path() / "tokenizer_config.json").string() +
                ": bos_token '<nope>' is not a token of " + path);
}

TEST(BpeTokenizer, NfcNormalizerComposes) {
  EAGLE2_SHARED_FILE(qwen3, "data/tokenizers/qwen3/tokenizer.json");
  EAGLE2_SHARED_FILE(llama3, "data/tokenizers/llama3/tokenizer.json");
  const std::string composed = "caf\xC3\xA9", decomposed = "cafe\xCC\x81";
  const Tokenizer& q = shared_tokenizer(qwen3);
  EXPECT_EQ(q.encode(decomposed, false), q.encode(composed, false));
  const Tokenizer& l = shared_tokenizer(llama3);  // no normalizer: the bytes differ, so do the ids
  EXPECT_NE(l.encode(decomposed, false), l.encode(composed, false));
}

TEST(BpeTokenizer, LongWhitespaceRunsAndInvalidUtf8) {
  EAGLE2_SHARED_FILE(llama3, "data/tokenizers/llama3/tokenizer.json");
  const Tokenizer& l = shared_tokenizer(llama3);
  const std::string spaces = "a" + std::string(200000, ' ') + "b\n\n";
  EXPECT_EQ(l.decode(l.encode(spaces, false)), spaces);
  EXPECT_EQ(error_of([&] { l.encode("ok\xFF", false); }), "prompt is not valid UTF-8 at byte 2");
  EXPECT_EQ(error_of([&] { l.decode({128256}); }),
            "tokenizer: token id 128256 is out of range [0, 128256)");
}

TEST(LoadTokenizer, TokenizerJsonWinsOverTokenizerModel) {
  EAGLE2_SHARED_FILE(json_path, "data/tokenizers/llama3/tokenizer.json");
  EAGLE2_SHARED_FILE(model_path, "data/models/stories260K-hf/tokenizer.model");
  const std::string both = test::temp_dir("both");
  fs::create_symlink(json_path, both + "/tokenizer.json");
  fs::create_symlink(model_path, both + "/tokenizer.model");
  EXPECT_STREQ(load_tokenizer(both)->kind(), "bpe");

  const std::string model_only = test::temp_dir("model_only");
  fs::create_symlink(model_path, model_only + "/tokenizer.model");
  EXPECT_STREQ(load_tokenizer(model_only)->kind(), "sentencepiece");

  // A tokenizer.json converted from SentencePiece is served by the tokenizer.model beside it...
  json sp = tiny_json({"a b"});
  sp.erase("pre_tokenizer");
  const std::string converted = test::temp_dir("converted");
  test::write_file(converted + "/tokenizer.json", sp.dump());
  fs::create_symlink(model_path, converted + "/tokenizer.model");
  EXPECT_STREQ(load_tokenizer(converted)->kind(), "sentencepiece");
  // ...and refused on its own.
  fs::remove(converted + "/tokenizer.model");
  EXPECT_EQ(error_of([&] { load_tokenizer(converted); }),
            converted +
                "/tokenizer.json: a SentencePiece-style BPE (no ByteLevel pre-tokenizer, or "
                "byte_fallback); "
                "only byte-level BPE is supported from tokenizer.json (load the tokenizer.model "
                "instead)");
  const std::string empty = test::temp_dir("no_tokenizer");
  EXPECT_EQ(error_of([&] { load_tokenizer(empty); }),
            empty + ": no tokenizer.json or tokenizer.model in this folder");
}

TEST(BpeTokenizer, HostileTokenizerJsonGivesOneClearError) {
  auto err = [](const std::string& name, const std::string& text) {
    const std::string dir = test::temp_dir("hostile_json_" + name);
    test::write_file(dir + "/tokenizer.json", text);
    const std::string msg = error_of([&] { load_tokenizer_json(dir + "/tokenizer.json"); });
    const std::string prefix = dir + "/tokenizer.json: ";
    EXPECT_EQ(msg.rfind(prefix, 0), 0u) << msg;
    return msg.substr(std::min(msg.size(), prefix.size()));
  };
  const std::string good = tiny_json({"a b"}).dump();
  EXPECT_EQ(err("truncated", good.substr(0, good.size() / 2))
                .rfind("not valid JSON (parse error at byte ", 0),
            0u);
  EXPECT_EQ(err("array", "[1, 2]"), "not a JSON object");
  EXPECT_EQ(err("missing_merge", tiny_json({"a b", "ab q"}).dump()),
            "merge 1 ('ab q') needs 'abq', which is not in the vocabulary");
  EXPECT_EQ(err("missing_part", tiny_json({"a zz"}).dump()),
            "merge 0 ('a zz') needs 'zz', which is not in the vocabulary");
  EXPECT_EQ(err("bad_merge", tiny_json({"abc"}).dump()),
            "model.merges[0] ('abc') is not two tokens separated by one space");
  json j = tiny_json({"a b"});
  j["model"]["vocab"]["zz"] = 1 << 30;
  EXPECT_EQ(err("huge_id", j.dump()), "model.vocab['zz'] = 1073741824 is out of range [0, 263)");
  j = tiny_json({"a b"});
  j["model"]["vocab"]["zz"] = 5;
  EXPECT_EQ(err("dup_id", j.dump()),
            "model.vocab gives id 5 to both 'zz' and '\xC4\x85'");  // byte 5 is U+0105
  j = tiny_json({"a b"});
  j["model"]["vocab"]["zz"] = "7";
  EXPECT_EQ(err("string_id", j.dump()), "model.vocab['zz'] is a string, expected an integer");
  j = tiny_json({"a b"});
  j["added_tokens"][0]["id"] = -4294967297LL;  // would wrap to -1 as int32
  EXPECT_EQ(err("wrap_id", j.dump()), "added_tokens[0].id = -4294967297 is out of range");
  j = tiny_json({"a b"});
  j["post_processor"] = {{"type", 5}};
  EXPECT_EQ(err("bad_shape", j.dump()).rfind("unexpected JSON content (", 0), 0u);
  j = tiny_json({"a b"});
  j["added_tokens"][0]["id"] = -3;
  EXPECT_EQ(err("neg_added", j.dump()), "added token '<|x|>' has id -3, out of range [0, 262)");
  j = tiny_json({"a b"});
  j["model"]["type"] = "WordPiece";
  EXPECT_EQ(err("wordpiece", j.dump()), "model type 'WordPiece' is not supported (BPE is)");
  j = tiny_json({"a b"});
  j["pre_tokenizer"] = {
      {"type", "Split"}, {"pattern", {{"Regex", "(unclosed"}}}, {"behavior", "Isolated"}};
  j["pre_tokenizer"] = {
      {"type", "Sequence"},
      {"pretokenizers", {j["pre_tokenizer"], {{"type", "ByteLevel"}, {"use_regex", false}}}}};
  EXPECT_EQ(
      err("regex", j.dump()),
      "pre-tokenizer regex '(unclosed' does not compile: missing closing parenthesis at offset 9");
  j["pre_tokenizer"]["pretokenizers"][0]["behavior"] = "Removed";
  EXPECT_EQ(err("removed", j.dump()),
            "pre_tokenizer.pretokenizers[0] has behavior 'Removed'; only Isolated is supported");
  j = tiny_json({"a b"});
  j["normalizer"] = {{"type", "NFKC"}};
  EXPECT_EQ(err("nfkc", j.dump()), "normalizer type 'NFKC' is not supported (NFC is)");
  j = tiny_json({"a b"});
  j["model"]["vocab"].erase("a");
  EXPECT_EQ(err("missing_byte", j.dump()), "no token has id 97");
}

}  // namespace
}  // namespace eagle2

// eagle2 tokenize, run as a user would: the ids of the reference implementations for byte-level
// BPE tokenizer.json files (../shared/golden/bpe_tokenizers.json) and llama.cpp's GGUF vocabularies
// (../shared/data/gguf_vocab), --decode back to the text, and one-line errors.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "support/cli.h"
#include "support/shared_data.h"

namespace eagle2 {
namespace {

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string quoted(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string comma_joined(const std::vector<int32_t>& ids) {
  std::string line;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i) line += ',';
    line += std::to_string(ids[i]);
  }
  return line;
}

// Two texts of each golden tokenizer.json through the CLI (the library test covers them all; each
// run loads a multi-megabyte tokenizer.json, 10x slower under the sanitizers: their pass, with
// EAGLE2_TEST_SCALE < 1, runs one), and their ids decoded back to the text.
TEST(CliTokenize, TokenizerJsonIdsAreTheReferences) {
  EAGLE2_SHARED_FILE(golden, "golden/bpe_tokenizers.json");
  const auto all = nlohmann::json::parse(read_text(golden));
  const int texts = test::scaled(2);
  for (const char* name : {"llama3", "qwen3"}) {
    const std::string dir = test::shared_dir() + "/data/tokenizers/" + name;
    int n = 0;
    for (const auto& entry : all.at(name)) {
      if (n++ == texts) break;
      const std::string text = entry.at("text").get<std::string>();
      const std::string want = comma_joined(entry.at("ids").get<std::vector<int32_t>>());
      const test::CliRun run =
          test::run_cli_split("tokenize -m " + dir + " --no-bos -p " + quoted(text));
      EXPECT_EQ(run.code, 0) << run.err;
      EXPECT_EQ(run.out, want + "\n") << name << ": " << text;
      const test::CliRun back = test::run_cli_split("tokenize -m " + dir + " --decode " + want);
      EXPECT_EQ(back.out, text) << name;
    }
  }
}

// The first texts of every llama.cpp vocabulary test (GGUF, SentencePiece and BPE kinds).
TEST(CliTokenize, GgufVocabularyIdsAreLlamaCpps) {
  EAGLE2_SHARED_FILE(first, "data/gguf_vocab/ggml-vocab-gpt-2.gguf");
  for (const char* name : {"llama-spm", "phi-3", "gpt-2", "starcoder", "deepseek-coder"}) {
    const std::string gguf = test::shared_dir() + "/data/gguf_vocab/ggml-vocab-" + name + ".gguf";
    std::vector<std::string> texts;
    {
      const std::string inp = read_text(gguf + ".inp"), sep = "\n__ggml_vocab_test__\n";
      for (size_t at = 0, next; (next = inp.find(sep, at)) != std::string::npos && texts.size() < 3;
           at = next + sep.size())
        texts.push_back(inp.substr(at, next - at));
    }
    std::istringstream out(read_text(gguf + ".out"));
    for (const std::string& text : texts) {
      std::string line;
      std::getline(out, line);
      std::istringstream ids(line);
      std::vector<int32_t> want;
      for (int32_t id; ids >> id;) want.push_back(id);
      const test::CliRun run =
          test::run_cli_split("tokenize -m " + gguf + " --no-bos -p " + quoted(text));
      EXPECT_EQ(run.code, 0) << name << ": " << run.err;
      EXPECT_EQ(run.out, comma_joined(want) + "\n") << name << ": '" << text << "'";
    }
  }
}

TEST(CliTokenize, BadInputIsOneLine) {
  const std::string& model = test::kBundledModel;
  for (const auto& [args, message] : std::vector<std::pair<std::string, std::string>>{
           {"-m " + model, "tokenize: give exactly one of -p TEXT and --decode IDS"},
           {"-m " + model + " -p x --decode 1",
            "tokenize: give exactly one of -p TEXT and --decode IDS"},
           {"-m " + model + " --decode 1,4096", "--decode: '4096' is not a token id in [0, 4096)"},
           {"-m " + model + " --decode 1,x", "--decode: 'x' is not a token id in [0, 4096)"},
       }) {
    const test::CliRun run = test::run_cli_split("tokenize " + args);
    std::string why;
    EXPECT_TRUE(test::is_one_clean_error(run, &why)) << args << ": " << why;
    EXPECT_EQ(run.err, "error: " + message + "\n") << args;
  }
  // The bundled model's SentencePiece tokenizer adds BOS (id 1) unless told not to.
  EXPECT_EQ(test::run_cli_split("tokenize -m " + model + " -p 'def'").out.rfind("1,", 0), 0u);
  EXPECT_NE(test::run_cli_split("tokenize -m " + model + " --no-bos -p 'def'").out.rfind("1,", 0),
            0u);
}

}  // namespace
}  // namespace eagle2

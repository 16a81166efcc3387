// GGUF tokenizers against llama.cpp's vocabulary tests (../shared/data/gguf_vocab): for each
// vocab-only GGUF file, every text of its .inp must encode (without BOS) to exactly the ids of
// the matching line of its .out, which Hugging Face's tokenizers produced for the original model.
// SentencePiece (llama-spm, phi-3) and byte-level BPE (gpt-2, starcoder, deepseek-coder).
#include <gtest/gtest.h>

#include <sstream>

#include "support/shared_data.h"
#include "tokenizer_load/load_tokenizer.h"

namespace eagle2 {
namespace {

// Texts separated by the line "__ggml_vocab_test__" (the newline before it is not text).
std::vector<std::string> read_inputs(const std::string& path) {
  const std::string all = test::read_file(path);
  const std::string sep = "\n__ggml_vocab_test__\n";
  std::vector<std::string> texts;
  size_t begin = 0;
  while (begin < all.size()) {
    const size_t end = all.find(sep, begin);
    if (end == std::string::npos) break;
    texts.push_back(all.substr(begin, end - begin));
    begin = end + sep.size();
  }
  return texts;
}

std::vector<std::vector<int32_t>> read_outputs(const std::string& path) {
  std::istringstream in(test::read_file(path));
  std::vector<std::vector<int32_t>> out;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ids(line);
    out.emplace_back();
    for (int32_t id; ids >> id;) out.back().push_back(id);
  }
  return out;
}

void check_vocab(const std::string& name, const char* kind) {
  const std::string rel = "data/gguf_vocab/ggml-vocab-" + name + ".gguf";
  EAGLE2_SHARED_FILE(gguf, rel);
  EAGLE2_SHARED_FILE(inp, rel + ".inp");
  EAGLE2_SHARED_FILE(outp, rel + ".out");
  const auto texts = read_inputs(inp);
  const auto want = read_outputs(outp);
  ASSERT_EQ(texts.size(), want.size()) << name;
  ASSERT_GE(texts.size(), 40u);
  auto tok = load_tokenizer(gguf);
  EXPECT_STREQ(tok->kind(), kind);
  for (size_t i = 0; i < texts.size(); ++i) {
    EXPECT_EQ(tok->encode(texts[i], false), want[i])
        << name << " text #" << i << ": '" << texts[i] << "'";
  }
}

TEST(GgufVocab, LlamaSpm) {
  check_vocab("llama-spm", "gguf-spm");
}
TEST(GgufVocab, Phi3) {
  check_vocab("phi-3", "gguf-spm");
}
TEST(GgufVocab, Gpt2) {
  check_vocab("gpt-2", "bpe");
}
TEST(GgufVocab, Starcoder) {
  check_vocab("starcoder", "bpe");
}
TEST(GgufVocab, DeepseekCoder) {
  check_vocab("deepseek-coder", "bpe");
}

}  // namespace
}  // namespace eagle2

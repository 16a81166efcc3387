// Byte-level BPE from tokenizer.json against the reference implementation: every text of
// ../shared/golden/bpe_tokenizers.json (Hugging Face tokenizers' encodings of LLaMA-3 and Qwen3,
// no special tokens added) must give exactly its ids, and decode back to the text.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "support/shared_data.h"
#include "tokenizer/tokenizer_json.h"

namespace eagle2 {
namespace {

using nlohmann::json;

void check_model(const std::string& name) {
  EAGLE2_SHARED_FILE(golden_path, "golden/bpe_tokenizers.json");
  EAGLE2_SHARED_FILE(path, "data/tokenizers/" + name + "/tokenizer.json");
  const json golden = json::parse(test::read_file(golden_path));
  ASSERT_TRUE(golden.contains(name));
  auto tok = load_tokenizer_json(path);
  int checked = 0;
  for (const json& entry : golden[name]) {
    const std::string text = entry["text"].get<std::string>();
    const auto want = entry["ids"].get<std::vector<int32_t>>();
    EXPECT_EQ(tok->encode(text, false), want) << name << ": " << text;
    EXPECT_EQ(tok->decode(want), text) << name;
    ++checked;
  }
  EXPECT_GE(checked, 10);
}

TEST(BpeGolden, Llama3) {
  check_model("llama3");
}
TEST(BpeGolden, Qwen3) {
  check_model("qwen3");
}

}  // namespace
}  // namespace eagle2

// Lossless on quantized targets: llama.cpp's Q8_0, Q4_0 and Q4_K_M files of the bundled model
// (shared data) and one with every type of issue 42 (made by llama-quantize), decoded greedily with
// every drafter kind and the bundled EAGLE head bound to the quantized target (and quantized like
// it, as api::Head::load does by default), give plain greedy decoding's tokens, alone and in
// batches of several sequences (BatchDecoder, shared KV pool). The quantized kernels keep the batch
// invariance contract (quant_matmul.h), so a verify batch scores each tree node with exactly the
// bits plain decoding gives that position.
#include <gtest/gtest.h>

#include "draft/eagle_head.h"
#include "support/batch_runs.h"
#include "support/equality_runs.h"
#include "support/shared_data.h"
#include "tokenizer_load/load_tokenizer.h"

namespace eagle2 {
namespace {

// light: two code prompts and one random one, batches of 3 (CI time), else four and one, batches
// of 3 and 8.
void check_path(const std::string& gguf, bool light = false) {
  const std::string name = gguf.substr(gguf.rfind('/') + 1);
  auto target = LlamaModel::load(gguf);
  auto head = EagleHead::load(std::string(EAGLE2_SOURCE_DIR) + "/models/code-lm-eagle", *target);
  const std::optional<DType> head_type = EagleHead::weights_type_for(*target);
  ASSERT_TRUE(head_type.has_value()) << name;
  head->quantize_weights(*head_type);
  auto tok = load_tokenizer(gguf);
  std::vector<std::vector<int32_t>> prompts;
  for (const char* code :
       {"def fibonacci(n):\n", "import os\n\nclass Config:\n    def __init__(self",
        "for i in range(10):\n    print(", "    return sorted(items, key=lambda"})
    if (!light || prompts.size() < 2) prompts.push_back(tok->encode(code, true));
  for (auto& p : test::random_prompts(7, 1, target->config().vocab_size)) prompts.push_back(p);
  ThreadPool pool(2);
  GenerationOptions opt;
  opt.max_new_tokens = 32;
  test::Coverage cov;
  test::check_equality(*target, test::drafter_cases(*head, pool, target->config().vocab_size, 512),
                       prompts, opt, 512, pool, cov);
  // The head drafts well on code: some cycles must have accepted several tokens, and some none.
  int64_t deep = 0;
  for (size_t a = 3; a < 7; ++a) deep += cov.at("dynamic-60-5-10", a);
  EXPECT_GT(deep, 0) << name << ": no dynamic-tree cycle accepted 3 or more tokens";
  EXPECT_GT(cov.at("scripted", 0), 0);
  // In company: every sequence of a batch (mixed drafters, continuous joins) decodes to its
  // plain tokens alone, whatever rows share the quantized matmuls with it.
  test::BatchRunOptions batch;
  batch.sequence_counts = light ? std::vector<int>{3} : std::vector<int>{3, 8};
  batch.ctx = 512;
  EXPECT_EQ(test::check_batch_equality(
                *target, test::drafter_cases(*head, pool, target->config().vocab_size, 512),
                prompts, batch, pool),
            light ? 3 : 3 + 8)
      << name;
}

// The sanitizer pass (scale < 1) checks each file light: its kernels compile without the
// sanitizers there (src/CMakeLists.txt), and the code it does check is the same for every file.
void check_file(const std::string& name) {
  EAGLE2_SHARED_FILE(gguf, "data/gguf/" + name);
  check_path(gguf, /*light=*/test::test_scale() < 1.0);
}

TEST(QuantizedEquality, Q8_0EveryDrafter) {
  check_file("code-lm-q8_0.gguf");
}
TEST(QuantizedEquality, Q4_0EveryDrafter) {
  check_file("code-lm-q4_0.gguf");
}
TEST(QuantizedEquality, Q4_K_MEveryDrafter) {
  check_file("code-lm-q4_k_m.gguf");
}

// Issue 42's types (Q4_1, Q5_0, Q5_1, IQ4_NL, Q5_K, Q3_K, Q2_K, IQ4_XS), all in one file made by
// llama-quantize (tests/support/shared_data.h: quant_types_file).
TEST(QuantizedEquality, EveryNewTypeInOneFileEveryDrafter) {
  std::string why;
  const std::string mixed = test::quant_types_file(&why);
  if (mixed.empty()) GTEST_SKIP() << why;
  ASSERT_FALSE(HasFailure());
  check_path(mixed, /*light=*/true);
}

}  // namespace
}  // namespace eagle2

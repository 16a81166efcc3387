// GGUF files as models (io/gguf_weights.h, LlamaConfig::from_gguf): llama.cpp's own conversions
// of the bundled model (bf16) and of stories260K (f32) give the logits and features of the
// Hugging Face folders bit for bit (the same weights, with Q/K rows put back in rotate-half
// order), the CLI runs them, and files it cannot run are one error naming the tensor and type.
#include <gtest/gtest.h>

#include <cstring>
#include <tuple>

#include "io/gguf.h"
#include "model/llama_model.h"
#include "support/cli.h"
#include "support/errors.h"
#include "support/gguf_writer.h"
#include "support/shared_data.h"

namespace eagle2 {
namespace {

// The same prompt through both models: every logit and every final-norm feature, bit for bit.
// tied: whether the GGUF ties the lm_head to the embedding as the folder does (llama.cpp's
// stories260K conversion stores output.weight, a copy of the embedding, instead).
void expect_same_model(const std::string& gguf, const std::string& folder, bool tied) {
  auto a = LlamaModel::load(gguf), b = LlamaModel::load(folder);
  const LlamaConfig &ca = a->config(), &cb = b->config();
  EXPECT_EQ(ca.hidden_size, cb.hidden_size);
  EXPECT_EQ(ca.intermediate_size, cb.intermediate_size);
  EXPECT_EQ(ca.num_layers, cb.num_layers);
  EXPECT_EQ(ca.num_heads, cb.num_heads);
  EXPECT_EQ(ca.num_kv_heads, cb.num_kv_heads);
  EXPECT_EQ(ca.head_dim, cb.head_dim);
  EXPECT_EQ(ca.vocab_size, cb.vocab_size);
  EXPECT_EQ(ca.rms_norm_eps, cb.rms_norm_eps);
  EXPECT_EQ(ca.rope_theta, cb.rope_theta);
  EXPECT_EQ(ca.tie_word_embeddings, tied);
  ThreadPool pool(2);
  std::vector<int32_t> ids;
  for (int i = 0; i < 40; ++i) ids.push_back((i * 37 + 5) % static_cast<int>(ca.vocab_size));
  std::vector<int32_t> rows(ids.size());
  for (size_t i = 0; i < rows.size(); ++i) rows[i] = static_cast<int32_t>(i);
  ForwardResult ra, rb;
  KvCache ka = a->make_cache(64), kb = b->make_cache(64);
  a->forward(Batch::causal(ids, 0), ka, rows, ra, pool);
  b->forward(Batch::causal(ids, 0), kb, rows, rb, pool);
  ASSERT_EQ(ra.logits.size(), rb.logits.size());
  EXPECT_EQ(std::memcmp(ra.logits.data(), rb.logits.data(), ra.logits.size() * sizeof(float)), 0)
      << gguf << ": logits differ from " << folder;
  EXPECT_EQ(std::memcmp(ra.hidden.data(), rb.hidden.data(), ra.hidden.size() * sizeof(float)), 0)
      << gguf << ": features differ from " << folder;
}

TEST(GgufWeights, BundledModelBf16IsTheFolderBitForBit) {
  EAGLE2_SHARED_FILE(gguf, "data/gguf/code-lm-bf16.gguf");
  expect_same_model(gguf, std::string(EAGLE2_SOURCE_DIR) + "/models/code-lm", true);
}

TEST(GgufWeights, Stories260KF32IsTheFolderBitForBit) {
  EAGLE2_SHARED_FILE(gguf, "data/gguf/stories260K-f32.gguf");
  EAGLE2_SHARED_FILE(cfg, "data/models/stories260K-hf/config.json");
  expect_same_model(gguf, cfg.substr(0, cfg.rfind('/')), false);
}

// generate -m FILE.gguf prints what generate -m FOLDER prints, plain and speculative with the
// bundled head (which binds to the GGUF target's embedding).
TEST(GgufWeights, GenerateOnTheGgufFile) {
  EAGLE2_SHARED_FILE(gguf, "data/gguf/code-lm-bf16.gguf");
  const std::string folder = std::string(EAGLE2_SOURCE_DIR) + "/models/code-lm";
  const std::string head = std::string(EAGLE2_SOURCE_DIR) + "/models/code-lm-eagle";
  const std::string args = " -p 'def fibonacci(n):' -n 24 -t 1";
  const test::CliRun want = test::run_cli_split("generate -m " + folder + args);
  ASSERT_EQ(want.code, 0) << want.err;
  for (const std::string& extra :
       std::vector<std::string>{"", " --draft " + head + " --spec dynamic:auto:8:1:cal"}) {
    const test::CliRun got = test::run_cli_split("generate -m " + gguf + args + extra);
    EXPECT_EQ(got.code, 0) << got.err;
    EXPECT_EQ(got.out, want.out) << extra;
  }
}

// Crafted files: another architecture, missing sizes, Q rows that are not whole heads.
TEST(GgufWeights, CraftedFilesAreOneClearError) {
  const std::string dir = test::temp_dir("gguf-weights");
  auto write = [&](const std::string& name, const test::GgufWriter& w) {
    const std::string path = dir + "/" + name + ".gguf";
    test::write_file(path, w.bytes());
    return path;
  };
  auto llama = [](test::GgufWriter& w, uint32_t heads) {
    w.kv_string("general.architecture", "llama");
    w.kv_u32("llama.embedding_length", 8);
    w.kv_u32("llama.feed_forward_length", 16);
    w.kv_u32("llama.block_count", 1);
    w.kv_u32("llama.attention.head_count", heads);
    w.kv_u32("llama.context_length", 32);
    w.kv_u32("llama.vocab_size", 10);
  };
  test::GgufWriter gpt2;
  gpt2.kv_string("general.architecture", "gpt2");
  const std::string p1 = write("gpt2", gpt2);
  EXPECT_EQ(test::error_of([&] { LlamaModel::load(p1); }),
            p1 + ": GGUF: general.architecture is \"gpt2\"; eagle2 runs llama (and Mixtral), "
                 "qwen2, qwen3 and qwen3moe GGUF files");
  test::GgufWriter no_layers;
  no_layers.kv_string("general.architecture", "llama");
  no_layers.kv_u32("llama.embedding_length", 8);
  no_layers.kv_u32("llama.feed_forward_length", 16);
  const std::string p2 = write("no-layers", no_layers);
  EXPECT_EQ(test::error_of([&] { LlamaModel::load(p2); }), p2 + ": GGUF: no llama.block_count");
  // head_dim 4 (8 / 2 heads), but attn_q has 6 rows.
  test::GgufWriter odd;
  llama(odd, 2);
  odd.tensor("blk.0.attn_q.weight", {8, 6}, 0, 8 * 6 * 4);
  const std::string p3 = write("odd-q", odd);
  EXPECT_EQ(test::error_of([&] { LlamaModel::load(p3); }),
            p3 + ": tensor blk.0.attn_q.weight has 6 rows, not a whole number of heads of 4");
  // Block types without a kernel here (IQ2_XXS, IQ3_S, TQ1_0): one error naming tensor and type.
  for (const auto& [type, name, bytes] : std::vector<std::tuple<uint32_t, std::string, uint64_t>>{
           {16, "IQ2_XXS", 66}, {21, "IQ3_S", 110}, {34, "TQ1_0", 54}}) {
    test::GgufWriter other;
    llama(other, 2);
    other.tensor("blk.0.ffn_down.weight", {256, 2}, type, 2 * bytes);
    const std::string p = write("type-" + name, other);
    EXPECT_EQ(
        test::error_of([&] { LlamaModel::load(p); }),
        p + ": tensor blk.0.ffn_down.weight has type " + name + ", which eagle2 does not support");
  }
  // Alignment 1 and a 2-byte F16 tensor before an F32 one: the F32 data (if not the F16's already)
  // would be read through a misaligned pointer.
  test::GgufWriter misaligned;
  llama(misaligned, 2);
  misaligned.kv_u32("general.alignment", 1);
  misaligned.tensor("blk.0.attn_norm.weight", {1}, 1, 2);
  misaligned.tensor("blk.0.ffn_norm.weight", {8}, 0, 32);
  const std::string p5 = dir + "/misaligned.gguf";
  test::write_file(p5, misaligned.bytes(1));
  const std::string e5 = test::error_of([&] { LlamaModel::load(p5); });
  EXPECT_TRUE(e5.starts_with(p5 + ": tensor blk.0.")) << e5;
  EXPECT_NE(e5.find("data is not aligned to 2 bytes as its F16 data needs"), std::string::npos)
      << e5;
  // A complete header but no tensors: the loader names the first one it misses.
  test::GgufWriter empty;
  llama(empty, 2);
  const std::string p4 = write("no-tensors", empty);
  const std::string e4 = test::error_of([&] { LlamaModel::load(p4); });
  EXPECT_TRUE(e4.starts_with(p4 + ": tensor '")) << e4;
}

}  // namespace
}  // namespace eagle2

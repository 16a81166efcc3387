// LLaMA-3 (rope_scaling llama3), Qwen2 (q/k/v biases) and Qwen3 (q/k norms, head_dim apart from
// hidden / heads) written to GGUF as llama.cpp's converter writes them (quantize/): the random GGUF
// model is the random folder of the same seed (same logits through the real loaders), Q/K rows are
// interleaved for llama only, the converter's keys and tensors are there, LLaMA-3.1's rope scaling
// travels as rope_freqs factors that give Hugging Face's frequencies; byte-level BPE vocabularies
// (quantize/bpe_gguf_vocab.h) read back from the GGUF file encode exactly as the tokenizer.json,
// with the converter's token types and padding; a Hugging Face folder with a tokenizer.json
// quantizes to the random GGUF model. The real LLaMA-3 and Qwen3 tokenizers come from ../shared
// (skipped where absent); the rest runs on a synthetic tokenizer.json.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "io/gguf.h"
#include "model/llama_model.h"
#include "model/random_model.h"
#include "quantize/bpe_gguf_vocab.h"
#include "quantize/llama_gguf_metadata.h"
#include "quantize/quantize_model.h"
#include "quantize/random_gguf.h"
#include "support/errors.h"
#include "support/shared_data.h"
#include "tokenizer/byte_level.h"
#include "tokenizer/tokenizer_json.h"
#include "tokenizer_load/load_tokenizer.h"

namespace eagle2 {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const std::string kSpmTokenizer =
    std::string(EAGLE2_SOURCE_DIR) + "/models/code-lm/tokenizer.model";
const RandomScales kScales{0.1f, 8.0f};

LlamaConfig arch_config(const std::string& arch, int64_t vocab) {
  LlamaConfig c;
  c.architecture = arch == "llama3"  ? "LlamaForCausalLM"
                   : arch == "qwen2" ? "Qwen2ForCausalLM"
                                     : "Qwen3ForCausalLM";
  c.hidden_size = 64;
  c.intermediate_size = 96;
  c.num_layers = 2;
  c.num_heads = 4;
  c.num_kv_heads = 2;
  c.head_dim = arch == "qwen3" ? 32 : 16;
  c.vocab_size = vocab;
  c.max_position_embeddings = 4096;
  c.rms_norm_eps = 1e-5f;
  c.rope_theta = arch == "llama3" ? 500000.0f : 1000000.0f;
  if (arch == "llama3") {
    c.rope_scaling = RopeScaling::Llama3;
    c.rope_factor = 32.0f;
    c.rope_low_freq_factor = 1.0f;
    c.rope_high_freq_factor = 4.0f;
    c.rope_original_max_position = 8192;
  }
  c.tie_word_embeddings = arch != "qwen2";  // one untied model: output.weight is written
  c.bos_token_id = 1;
  c.eos_token_ids = {2};
  return LlamaConfig::parse(c.to_json(), arch);  // derives qkv_bias / qk_norm
}

std::vector<float> logits_of(LlamaModel& m, const std::vector<int32_t>& ids) {
  ThreadPool pool(1);
  KvCache kv = m.make_cache(static_cast<int64_t>(ids.size()));
  std::vector<int32_t> rows(ids.size());
  for (size_t i = 0; i < rows.size(); ++i) rows[i] = static_cast<int32_t>(i);
  ForwardResult r;
  m.forward(Batch::causal(ids, 0), kv, rows, r, pool);
  return r.logits;
}

std::vector<float> gguf_floats(const GgufFile& g, const std::string& name) {
  for (const GgufTensorInfo& t : g.tensors()) {
    if (t.name != name) continue;
    EXPECT_EQ(t.type, 0u) << name;  // F32
    std::vector<float> out(static_cast<size_t>(t.bytes / 4));
    std::memcpy(out.data(), g.tensor_data(t), static_cast<size_t>(t.bytes));
    return out;
  }
  ADD_FAILURE() << "no tensor " << name;
  return {};
}

bool has_tensor(const GgufFile& g, const std::string& name) {
  for (const GgufTensorInfo& t : g.tensors())
    if (t.name == name) return true;
  return false;
}

TEST(GgufArchitectures, RandomGgufIsTheRandomFolder) {
  for (const std::string arch : {"llama3", "qwen2", "qwen3"}) {
    const LlamaConfig cfg = arch_config(arch, 4096);
    const std::string dir = test::temp_dir("gguf-arch-" + arch);
    write_random_model(dir + "/folder", cfg, DType::F32, 3, kScales);
    write_random_gguf(dir + "/m.gguf", cfg, DType::F32, 3, kSpmTokenizer, kScales);
    const GgufFile g(dir + "/m.gguf");
    const std::string gguf_arch = arch == "llama3" ? "llama" : arch;
    EXPECT_EQ(g.string("general.architecture"), gguf_arch);
    EXPECT_EQ(g.integer_or(gguf_arch + ".attention.key_length", -1), cfg.head_dim) << arch;
    EXPECT_EQ(g.integer_or(gguf_arch + ".embedding_length", -1), 64) << arch;
    EXPECT_EQ(has_tensor(g, "blk.1.attn_q.bias"), arch == "qwen2");
    EXPECT_EQ(has_tensor(g, "blk.1.attn_k_norm.weight"), arch == "qwen3");
    EXPECT_EQ(has_tensor(g, "rope_freqs.weight"), arch == "llama3");
    EXPECT_EQ(has_tensor(g, "output.weight"), !cfg.tie_word_embeddings);

    // Q rows as stored: interleaved for llama.cpp's llama, as Hugging Face has them otherwise.
    const std::vector<float> q = gguf_floats(g, "blk.0.attn_q.weight");
    std::vector<float> hf(q.size());
    const TensorSpec spec{"model.layers.0.self_attn.q_proj.weight",
                          DType::F32,
                          {cfg.num_heads * cfg.head_dim, cfg.hidden_size}};
    random_tensor_values(3, spec, kScales, 0, hf.size(), hf.data());
    const size_t d = static_cast<size_t>(cfg.hidden_size);
    const size_t row1_from = arch == "llama3" ? static_cast<size_t>(cfg.head_dim / 2) : 1;
    EXPECT_EQ(std::memcmp(&q[d], &hf[row1_from * d], d * sizeof(float)), 0) << arch;

    // Both loaders give the same model: the same logits (LLaMA-3's frequencies reach the GGUF
    // model as divisors, rounded apart from Hugging Face's formula by an ulp or so).
    auto a = LlamaModel::load(dir + "/folder");
    auto b = LlamaModel::load(dir + "/m.gguf");
    EXPECT_EQ(b->config().qkv_bias, arch == "qwen2");
    EXPECT_EQ(b->config().qk_norm, arch == "qwen3");
    const std::vector<int32_t> ids = {1, 900, 17, 4000, 256, 31, 77, 3};
    const std::vector<float> la = logits_of(*a, ids), lb = logits_of(*b, ids);
    ASSERT_EQ(la.size(), lb.size());
    for (size_t i = 0; i < la.size(); ++i) {
      if (arch == "llama3") {
        ASSERT_NEAR(la[i], lb[i], 1e-4f * (1 + std::fabs(la[i]))) << arch << " logit " << i;
      } else {
        ASSERT_EQ(la[i], lb[i]) << arch << " logit " << i;
      }
    }
  }
}

// LLaMA-3.1-8B's rope scaling: the rope_freqs divisors (1 for short wavelengths, the factor for
// long ones, interpolated between) applied to the plain frequencies give Hugging Face's.
TEST(GgufArchitectures, RopeFreqsAreLlama3Divisors) {
  LlamaConfig c = arch_config("llama3", 128256);
  c.hidden_size = 4096;
  c.num_heads = 32;
  c.num_kv_heads = 8;
  c.head_dim = 128;
  c.rope_factor = 8.0f;
  const std::vector<float> factors = llama3_rope_freq_factors(c);
  ASSERT_EQ(factors.size(), 64u);
  LlamaConfig plain = c;
  plain.rope_scaling = RopeScaling::None;
  const std::vector<float> base = plain.rope_inv_freq(), hf = c.rope_inv_freq();
  int ones = 0, full = 0;
  for (size_t i = 0; i < factors.size(); ++i) {
    ones += factors[i] == 1.0f;
    full += factors[i] == 8.0f;
    if (i > 0) {
      EXPECT_GE(factors[i], factors[i - 1]) << i;
    }
    EXPECT_NEAR(base[i] / factors[i], hf[i], 1e-6f * hf[i]) << i;
  }
  // Wavelengths 2 pi 500000^(i/64) below 2048 (i <= 28) keep their frequency; above 8192 (i >= 35)
  // it is divided by the factor; the six between are interpolated.
  EXPECT_EQ(ones, 29);
  EXPECT_EQ(full, 29);
  EXPECT_TRUE(llama3_rope_freq_factors(arch_config("qwen3", 100)).empty());
}

// A GPT-2-style tokenizer.json of 262 ids (256 bytes, 3 merges, 3 added tokens).
std::string synthetic_tokenizer(const std::string& name, const json& pre) {
  json vocab = json::object();
  for (int b = 0; b < 256; ++b) vocab[byte_level_char(static_cast<uint8_t>(b))] = b;
  vocab["ab"] = 256;
  vocab["bc"] = 257;
  vocab["abc"] = 258;
  const json j = {
      {"model", {{"type", "BPE"}, {"vocab", vocab}, {"merges", {"a b", "b c", "ab c"}}}},
      {"pre_tokenizer", pre},
      {"added_tokens", json::array({{{"id", 259}, {"content", "<|end|>"}, {"special", true}},
                                    {{"id", 260}, {"content", "<|look|>"}, {"special", false}},
                                    {{"id", 261}, {"content", "<tag>"}, {"special", false}}})}};
  const std::string dir = test::temp_dir("gguf-arch-tok-" + name);
  test::write_file(dir + "/tokenizer.json", j.dump());
  test::write_file(dir + "/tokenizer_config.json",
                   json{{"eos_token", "<|end|>"}, {"chat_template", "{{ messages }}"}}.dump());
  return dir + "/tokenizer.json";
}

const json kGpt2Pre = {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", true}};

TEST(GgufArchitectures, BpeVocabularyAsTheConverterWritesIt) {
  const std::string path = synthetic_tokenizer("gpt2", kGpt2Pre);
  const BpeGgufVocab v = bpe_gguf_vocab(path, 300);
  EXPECT_EQ(v.pre, "gpt-2");
  ASSERT_EQ(v.tokens.size(), 300u);
  EXPECT_EQ(v.tokens[32], "\xC4\xA0");  // byte ' ' in the byte-level alphabet
  EXPECT_EQ(v.tokens[258], "abc");
  EXPECT_EQ(v.types[258], 1);  // normal
  EXPECT_EQ(v.tokens[259], "<|end|>");
  EXPECT_EQ(v.types[259], 3);  // special: control
  EXPECT_EQ(v.types[260], 3);  // not special, but "<|...|>" looks it: control, as the converter
  EXPECT_EQ(v.types[261], 4);  // user-defined
  EXPECT_EQ(v.tokens[262], "[PAD262]");
  EXPECT_EQ(v.types[299], 5);  // unused
  EXPECT_EQ(v.merges, (std::vector<std::string>{"a b", "b c", "ab c"}));
  EXPECT_EQ(v.eos_id, 259);
  EXPECT_EQ(v.bos_id, -1);
  EXPECT_FALSE(v.add_bos);
  EXPECT_EQ(v.chat_template, "{{ messages }}");

  // Written into a model and read back, it encodes as the tokenizer.json does.
  const std::string out = test::temp_dir("gguf-arch-gpt2") + "/m.gguf";
  write_random_gguf(out, arch_config("qwen2", 300), DType::Q8_0, 1, path, kScales);
  const GgufFile g(out);
  EXPECT_EQ(g.string("tokenizer.ggml.model"), "gpt2");
  EXPECT_EQ(g.string("tokenizer.ggml.pre"), "gpt-2");
  EXPECT_EQ(g.integer_or("tokenizer.ggml.eos_token_id", -1), 259);
  EXPECT_EQ(g.integer_or("tokenizer.ggml.bos_token_id", -1), 1);  // the config's, as converted
  EXPECT_FALSE(g.boolean_or("tokenizer.ggml.add_bos_token", true));
  EXPECT_EQ(g.string("tokenizer.chat_template"), "{{ messages }}");
  const auto from_gguf = load_tokenizer(out), from_json = load_tokenizer(path);
  for (const std::string text : {"abcab c<|end|>x<tag>y", "  naïve 123 abc\n\n<|look|>"})
    EXPECT_EQ(from_gguf->encode(text, false), from_json->encode(text, false)) << text;
}

TEST(GgufArchitectures, UnwritableBpeVocabulariesAreOneError) {
  const std::string path = synthetic_tokenizer("gpt2-small", kGpt2Pre);
  EXPECT_EQ(test::error_of([&] { bpe_gguf_vocab(path, 200); }),
            path +
                ": the tokenizer has ids up to 261 but vocab_size is 200 (a byte-level BPE "
                "vocabulary cannot be cut)");
  const std::string split = synthetic_tokenizer(
      "split",
      {{"type", "Sequence"},
       {"pretokenizers",
        json::array(
            {{{"type", "Split"}, {"pattern", {{"Regex", "\\s+"}}}, {"behavior", "Isolated"}},
             {{"type", "ByteLevel"}, {"use_regex", false}}})}});
  EXPECT_EQ(test::error_of([&] { bpe_gguf_vocab(split, 300); }),
            split +
                ": its pre-tokenizer is not one llama.cpp names (LLaMA-3's, Qwen2's and "
                "GPT-2's are written to GGUF)");
  const std::string prefix = synthetic_tokenizer(
      "prefix", {{"type", "ByteLevel"}, {"add_prefix_space", true}, {"use_regex", true}});
  EXPECT_EQ(test::error_of([&] { bpe_gguf_vocab(prefix, 300); }),
            prefix +
                ": ByteLevel adds a prefix space, which llama.cpp's \"gpt-2\" tokenizer does "
                "not");
}

// The real tokenizers: LLaMA-3's and Qwen3's vocabularies, as the converter types them, encode
// from the GGUF file exactly as from their tokenizer.json.
TEST(GgufArchitectures, RealTokenizersReadBackFromGguf) {
  EAGLE2_SHARED_FILE(llama3, "data/tokenizers/llama3/tokenizer.json");
  EAGLE2_SHARED_FILE(qwen3, "data/tokenizers/qwen3/tokenizer.json");
  const BpeGgufVocab l = bpe_gguf_vocab(llama3, 128256);
  EXPECT_EQ(l.pre, "llama-bpe");
  EXPECT_EQ(l.tokens[128000], "<|begin_of_text|>");
  EXPECT_EQ(l.types[128000], 3);
  EXPECT_EQ(l.types[127999], 1);
  EXPECT_EQ(l.merges.size(), 280147u);
  EXPECT_EQ(l.bos_id, 128000);
  EXPECT_EQ(l.eos_id, 128001);
  EXPECT_FALSE(l.add_bos);  // this tokenizer.json's post-processor adds no BOS
  EXPECT_FALSE(l.chat_template.empty());
  const BpeGgufVocab q = bpe_gguf_vocab(qwen3, 151936);
  EXPECT_EQ(q.pre, "qwen2");
  EXPECT_EQ(q.types[151643], 3);  // <|endoftext|>
  EXPECT_EQ(q.types[151657], 4);  // <tool_call>: not special, user-defined
  EXPECT_EQ(q.types[151659], 3);  // <|fim_prefix|>: not special, but looks it
  EXPECT_EQ(q.tokens[151667], "<think>");
  EXPECT_EQ(q.types[151667], 4);
  EXPECT_EQ(q.tokens[151669], "[PAD151669]");
  EXPECT_EQ(q.types[151935], 5);
  EXPECT_EQ(q.eos_id, 151645);  // <|im_end|>
  EXPECT_EQ(q.bos_id, -1);
  EXPECT_EQ(test::error_of([&] { bpe_gguf_vocab(qwen3, 128256); }),
            qwen3 +
                ": the tokenizer has ids up to 151668 but vocab_size is 128256 (a byte-level "
                "BPE vocabulary cannot be cut)");

  const std::vector<std::string> texts = {
      "Hello, world! It's 2024-05-01: 1234567 items cost $3.14.",
      "  leading spaces,\ttabs\n\n\nand newlines \n",
      "unicode: naïve café, 日本語のテキスト, Ελληνικά, 🦙🚀 👩‍💻",
      "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>",
      "<|im_start|>user\nHi<|im_end|>\n<think>\nhm</think><tool_call>{}</tool_call>",
  };
  // The sanitizer pass (EAGLE2_TEST_SCALE < 1) writes and reads back LLaMA-3's here and Qwen3's
  // in the next test: each round trip of a real vocabulary takes ~20 s under the sanitizers.
  const bool both = test::test_scale() >= 1;
  for (const auto& [arch, tokenizer] : {std::pair{"llama3", llama3}, {"qwen3", qwen3}}) {
    if (!both && arch != std::string("llama3")) continue;
    const std::string out = test::temp_dir(std::string("gguf-arch-real-") + arch) + "/m.gguf";
    write_random_gguf(out, arch_config(arch, arch == std::string("llama3") ? 128256 : 151936),
                      DType::Q4_0, 1, tokenizer, kScales);
    const auto from_gguf = load_tokenizer(out), from_json = load_tokenizer(tokenizer);
    EXPECT_EQ(from_gguf->vocab_size(), arch == std::string("llama3") ? 128256 : 151936);
    EXPECT_EQ(from_gguf->adds_bos(), from_json->adds_bos()) << arch;
    EXPECT_EQ(from_gguf->bos_id(), arch == std::string("llama3") ? 128000 : 1) << arch;
    EXPECT_EQ(from_gguf->eos_id(), from_json->eos_id()) << arch;
    for (const std::string& text : texts) {
      const std::vector<int32_t> ids = from_json->encode(text, from_json->adds_bos());
      EXPECT_EQ(from_gguf->encode(text, from_gguf->adds_bos()), ids) << arch << ": " << text;
      EXPECT_EQ(from_gguf->decode(ids), from_json->decode(ids)) << arch << ": " << text;
    }
  }
}

// quantize on a Hugging Face folder with a byte-level tokenizer.json writes the random GGUF model
// of the same seed: tensors byte for byte (rope_freqs included), the same vocabulary.
TEST(GgufArchitectures, FolderWithTokenizerJsonQuantizesToTheRandomGguf) {
  EAGLE2_SHARED_FILE(qwen3, "data/tokenizers/qwen3/tokenizer.json");
  EAGLE2_SHARED_FILE(llama3, "data/tokenizers/llama3/tokenizer.json");
  const bool both = test::test_scale() >= 1;  // the sanitizer pass: Qwen3's only (see above)
  for (const auto& [arch, tokenizer] : {std::pair{"qwen3", qwen3}, {"llama3", llama3}}) {
    if (!both && arch != std::string("qwen3")) continue;
    const LlamaConfig cfg = arch_config(arch, arch == std::string("llama3") ? 128256 : 151936);
    const std::string dir = test::temp_dir(std::string("gguf-arch-folder-") + arch);
    write_random_model(dir + "/folder", cfg, DType::F32, 5, kScales);
    const fs::path from = fs::path(tokenizer).parent_path();
    fs::copy_file(from / "tokenizer.json", dir + "/folder/tokenizer.json");
    fs::copy_file(from / "tokenizer_config.json", dir + "/folder/tokenizer_config.json");
    quantize_model(dir + "/folder", dir + "/quantized.gguf", DType::Q8_0);
    write_random_gguf(dir + "/random.gguf", cfg, DType::Q8_0, 5, tokenizer, kScales);
    const GgufFile a(dir + "/quantized.gguf"), b(dir + "/random.gguf");
    ASSERT_EQ(a.tensors().size(), b.tensors().size()) << arch;
    for (size_t i = 0; i < a.tensors().size(); ++i) {
      const GgufTensorInfo &ta = a.tensors()[i], &tb = b.tensors()[i];
      EXPECT_EQ(ta.name, tb.name) << arch;
      ASSERT_EQ(ta.bytes, tb.bytes) << arch << " " << ta.name;
      EXPECT_EQ(std::memcmp(a.tensor_data(ta), b.tensor_data(tb), static_cast<size_t>(ta.bytes)), 0)
          << arch << " " << ta.name;
    }
    EXPECT_EQ(a.tensors()[0].name,
              arch == std::string("llama3") ? "rope_freqs.weight" : "token_embd.weight");
    for (const char* key :
         {"tokenizer.ggml.tokens", "tokenizer.ggml.token_type", "tokenizer.ggml.merges"})
      EXPECT_EQ(a.find(key)->count, b.find(key)->count) << arch << " " << key;
    EXPECT_EQ(a.string("tokenizer.ggml.pre"), b.string("tokenizer.ggml.pre"));
  }
}

}  // namespace
}  // namespace eagle2

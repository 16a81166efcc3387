// config.json parsing: real configs, every refusal with its exact message, RoPE frequencies.
#include <gtest/gtest.h>

#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/error.h"
#include "model/llama_config.h"
#include "support/errors.h"
#include "support/shared_data.h"

namespace eagle2 {
namespace {

using test::error_of;

namespace fs = std::filesystem;
using nlohmann::json;

json base_config() {
  return json::parse(R"({
    "architectures": ["LlamaForCausalLM"], "model_type": "llama",
    "hidden_size": 64, "intermediate_size": 172, "num_hidden_layers": 2,
    "num_attention_heads": 8, "num_key_value_heads": 4, "vocab_size": 512,
    "hidden_act": "silu"})");
}

// The message of parsing base_config() after `edit`.
template <class Edit>
std::string config_error(Edit edit) {
  json j = base_config();
  edit(j);
  return error_of([&] { LlamaConfig::parse(j.dump(), "cfg.json"); });
}

TEST(LlamaConfig, Stories260K) {
  EAGLE2_SHARED_FILE(path, "data/models/stories260K-hf/config.json");
  const LlamaConfig c = LlamaConfig::load(path);
  EXPECT_EQ(c.architecture, "LlamaForCausalLM");
  EXPECT_EQ(c.hidden_size, 64);
  EXPECT_EQ(c.intermediate_size, 172);
  EXPECT_EQ(c.num_layers, 5);
  EXPECT_EQ(c.num_heads, 8);
  EXPECT_EQ(c.num_kv_heads, 4);
  EXPECT_EQ(c.head_dim, 8);
  EXPECT_EQ(c.vocab_size, 512);
  EXPECT_EQ(c.max_position_embeddings, 512);
  EXPECT_TRUE(c.tie_word_embeddings);
  EXPECT_EQ(c.rms_norm_eps, 1e-5f);
  EXPECT_EQ(c.rope_theta, 10000.0f);
  EXPECT_EQ(c.rope_scaling, RopeScaling::None);
  EXPECT_EQ(c.bos_token_id, 1);
  EXPECT_EQ(c.eos_token_ids, std::vector<int32_t>{2});
  EXPECT_FALSE(c.sliding_window.has_value());
}

// The EAGLE draft-head configs are LlamaConfigs of one decoder layer; all of them are accepted.
// (Their "bias" key is the EAGLE fc layer's bias, not attention_bias, and is ignored here.)
TEST(LlamaConfig, EagleHeadConfigs) {
  EAGLE2_SHARED_FILE(dir, "data/configs/eagle");
  int n = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() != ".json") continue;
    SCOPED_TRACE(entry.path().string());
    LlamaConfig c;
    ASSERT_NO_THROW(c = LlamaConfig::load(entry.path().string()));
    EXPECT_EQ(c.architecture, "LlamaForCausalLM");
    EXPECT_EQ(c.num_layers, 1);
    EXPECT_EQ(c.head_dim * c.num_heads, c.hidden_size);
    EXPECT_FALSE(c.tie_word_embeddings);
    ++n;
  }
  EXPECT_EQ(n, 10);
  const LlamaConfig l3 = LlamaConfig::load(dir + "/EAGLE-LLaMA3-Instruct-8B.json");
  EXPECT_EQ(l3.rope_theta, 500000.0f);
  EXPECT_EQ(l3.num_kv_heads, 8);
  EXPECT_EQ(l3.vocab_size, 128256);
  EXPECT_EQ(l3.bos_token_id, 128000);
  EXPECT_EQ(l3.eos_token_ids, std::vector<int32_t>{128001});
  const LlamaConfig v33 = LlamaConfig::load(dir + "/vicuna_33B_config.json");
  EXPECT_EQ(v33.head_dim, 128);
  EXPECT_EQ(v33.num_kv_heads, 13);
  EXPECT_EQ(v33.max_position_embeddings, 2048);  // it says max_sequence_length: the default applies
  EXPECT_EQ(LlamaConfig::load(dir + "/llama_2_chat_7B_config.json").num_kv_heads, 32);
}

TEST(LlamaConfig, Defaults) {
  json j = base_config();
  j.erase("num_key_value_heads");
  j.erase("hidden_act");
  const LlamaConfig c = LlamaConfig::parse(j.dump(), "cfg.json");
  EXPECT_EQ(c.num_kv_heads, 8);
  EXPECT_EQ(c.head_dim, 8);
  EXPECT_EQ(c.rms_norm_eps, 1e-6f);
  EXPECT_EQ(c.rope_theta, 10000.0f);
  EXPECT_EQ(c.max_position_embeddings, 2048);
  EXPECT_FALSE(c.tie_word_embeddings);
  EXPECT_FALSE(c.attention_bias);
  EXPECT_EQ(c.bos_token_id, 1);
  EXPECT_EQ(c.eos_token_ids, std::vector<int32_t>{2});
  EXPECT_EQ(c.rope_scaling, RopeScaling::None);

  // Explicit nulls mean "unset", as Hugging Face writes them.
  j["head_dim"] = nullptr;
  j["sliding_window"] = nullptr;
  j["rope_scaling"] = nullptr;
  j["bos_token_id"] = nullptr;
  EXPECT_EQ(LlamaConfig::parse(j.dump(), "cfg.json").head_dim, 8);

  j["head_dim"] = 16;  // given explicitly, it need not be hidden / heads
  EXPECT_EQ(LlamaConfig::parse(j.dump(), "cfg.json").head_dim, 16);
}

TEST(LlamaConfig, ArchitectureAndModelType) {
  json j = base_config();
  j.erase("architectures");
  EXPECT_EQ(LlamaConfig::parse(j.dump(), "c").architecture, "LlamaForCausalLM");
  j["model_type"] = "mistral";
  EXPECT_EQ(LlamaConfig::parse(j.dump(), "c").architecture, "MistralForCausalLM");
  j["architectures"] = {"MistralForCausalLM"};
  j["model_type"] = "something-else";  // architectures wins
  EXPECT_EQ(LlamaConfig::parse(j.dump(), "c").architecture, "MistralForCausalLM");
}

TEST(LlamaConfig, EosListAndMistralSlidingWindow) {
  json j = base_config();
  j["architectures"] = {"MistralForCausalLM"};
  j["model_type"] = "mistral";
  j["eos_token_id"] = {2, 32000, 7};
  j["bos_token_id"] = 5;
  j["sliding_window"] = 4096;
  const LlamaConfig c = LlamaConfig::parse(j.dump(), "cfg.json");
  EXPECT_EQ(c.architecture, "MistralForCausalLM");
  EXPECT_EQ(c.eos_token_ids, (std::vector<int32_t>{2, 32000, 7}));
  EXPECT_EQ(c.bos_token_id, 5);
  ASSERT_TRUE(c.sliding_window.has_value());
  EXPECT_EQ(*c.sliding_window, 4096);
}

TEST(LlamaConfig, Errors) {
  EXPECT_EQ(error_of([] { LlamaConfig::parse("{\"hidden_size\": ", "cfg.json"); }),
            "cfg.json: not valid JSON (parse error at byte 17)");
  EXPECT_EQ(error_of([] { LlamaConfig::parse("[]", "cfg.json"); }), "cfg.json: not a JSON object");
  const std::string missing = "/nonexistent/config.json";
  EXPECT_EQ(error_of([&] { LlamaConfig::load(missing); }),
            missing + ": cannot open: No such file or directory");

  EXPECT_EQ(config_error([](json& j) { j["architectures"] = json::array(); }),
            "cfg.json: \"architectures\" must be a non-empty list of strings");
  EXPECT_EQ(config_error([](json& j) { j["architectures"] = "LlamaForCausalLM"; }),
            "cfg.json: \"architectures\" must be a non-empty list of strings");
  EXPECT_EQ(config_error([](json& j) { j["architectures"] = {"GPT2LMHeadModel"}; }),
            "cfg.json: unsupported architecture 'GPT2LMHeadModel' (supported: LlamaForCausalLM, "
            "MistralForCausalLM, Qwen2ForCausalLM, Qwen3ForCausalLM, MixtralForCausalLM, "
            "Qwen3MoeForCausalLM)");
  EXPECT_EQ(config_error([](json& j) {
              j.erase("architectures");
              j["model_type"] = "gpt2";
            }),
            "cfg.json: unsupported model_type 'gpt2' (supported: llama, mistral, qwen2, qwen3, "
            "mixtral, qwen3_moe)");
  EXPECT_EQ(config_error([](json& j) {
              j.erase("architectures");
              j.erase("model_type");
            }),
            "cfg.json: neither \"architectures\" nor \"model_type\" is given");
  EXPECT_EQ(config_error([](json& j) { j["hidden_act"] = "gelu"; }),
            "cfg.json: hidden_act \"gelu\" is not supported (only \"silu\")");

  for (const char* key : {"hidden_size", "intermediate_size", "num_hidden_layers",
                          "num_attention_heads", "vocab_size"}) {
    EXPECT_EQ(config_error([&](json& j) { j.erase(key); }),
              std::string("cfg.json: missing required field \"") + key + "\"");
    EXPECT_EQ(config_error([&](json& j) { j[key] = 0; }),
              std::string("cfg.json: \"") + key + "\" must be positive, got 0");
  }
  EXPECT_EQ(config_error([](json& j) { j["hidden_size"] = "64"; }),
            "cfg.json: \"hidden_size\" must be an integer, got a string");
  EXPECT_EQ(config_error([](json& j) { j["hidden_size"] = 64.5; }),
            "cfg.json: \"hidden_size\" must be an integer, got a fractional number");
  EXPECT_EQ(config_error([](json& j) { j["vocab_size"] = -5; }),
            "cfg.json: \"vocab_size\" must be positive, got -5");
  EXPECT_EQ(config_error([](json& j) { j["vocab_size"] = 18446744073709551615ull; }),
            "cfg.json: \"vocab_size\" is too large");
  EXPECT_EQ(config_error([](json& j) { j["num_key_value_heads"] = 0; }),
            "cfg.json: \"num_key_value_heads\" must be positive, got 0");
  EXPECT_EQ(config_error([](json& j) { j["num_key_value_heads"] = 3; }),
            "cfg.json: num_attention_heads (8) is not a multiple of num_key_value_heads (3)");
  EXPECT_EQ(
      config_error([](json& j) { j["hidden_size"] = 60; }),
      "cfg.json: hidden_size (60) is not divisible by num_attention_heads (8) and no head_dim "
      "is given");
  EXPECT_EQ(config_error([](json& j) { j["head_dim"] = 7; }),
            "cfg.json: head_dim (7) must be even for RoPE");
  EXPECT_EQ(config_error([](json& j) { j["hidden_size"] = 72; }),  // head_dim 9
            "cfg.json: head_dim (9) must be even for RoPE");
  EXPECT_EQ(config_error([](json& j) { j["head_dim"] = -2; }),
            "cfg.json: \"head_dim\" must be positive, got -2");
  EXPECT_EQ(config_error([](json& j) { j["max_position_embeddings"] = 0; }),
            "cfg.json: \"max_position_embeddings\" must be positive, got 0");
  EXPECT_EQ(config_error([](json& j) { j["rms_norm_eps"] = -1; }),
            "cfg.json: \"rms_norm_eps\" must be positive, got -1");
  EXPECT_EQ(config_error([](json& j) { j["rms_norm_eps"] = 1e-50; }),
            "cfg.json: \"rms_norm_eps\" (1e-50) is out of float range");
  EXPECT_EQ(config_error([](json& j) { j["rope_theta"] = "10000"; }),
            "cfg.json: \"rope_theta\" must be a number, got a string");
  EXPECT_EQ(config_error([](json& j) { j["rope_theta"] = 1e300; }),
            "cfg.json: \"rope_theta\" (1e+300) is out of float range");

  EXPECT_EQ(config_error([](json& j) { j["rope_scaling"] = 2; }),
            "cfg.json: \"rope_scaling\" must be an object or null");
  EXPECT_EQ(config_error([](json& j) {
              j["rope_scaling"] = {{"factor", 2.0}};
            }),
            "cfg.json: rope_scaling has no \"rope_type\" or \"type\"");
  EXPECT_EQ(config_error([](json& j) {
              j["rope_scaling"] = {{"type", 1}};
            }),
            "cfg.json: rope_scaling type must be a string");
  for (const char* type : {"dynamic", "yarn", "longrope", "su"}) {
    EXPECT_EQ(config_error([&](json& j) {
                j["rope_scaling"] = {{"type", type}, {"factor", 2.0}};
              }),
              std::string("cfg.json: rope_scaling type '") + type +
                  "' is not supported (supported: linear, llama3)");
  }
  EXPECT_EQ(config_error([](json& j) {
              j["rope_scaling"] = {{"rope_type", "yarn"}, {"type", "linear"}};
            }),
            "cfg.json: rope_scaling type 'yarn' is not supported (supported: linear, llama3)");
  EXPECT_EQ(config_error([](json& j) {
              j["rope_scaling"] = {{"type", "linear"}};
            }),
            "cfg.json: rope_scaling type 'linear' needs \"factor\"");
  EXPECT_EQ(config_error([](json& j) {
              j["rope_scaling"] = {{"type", "linear"}, {"factor", 0}};
            }),
            "cfg.json: rope_scaling \"factor\" must be positive, got 0");
  EXPECT_EQ(config_error([](json& j) {
              j["rope_scaling"] = {{"type", "linear"}, {"factor", "2"}};
            }),
            "cfg.json: \"factor\" must be a number, got a string");
  EXPECT_EQ(config_error([](json& j) {
              j["rope_scaling"] = {{"rope_type", "llama3"},
                                   {"factor", 8.0},
                                   {"low_freq_factor", 1.0},
                                   {"high_freq_factor", 4.0}};
            }),
            "cfg.json: rope_scaling type 'llama3' needs \"original_max_position_embeddings\"");
  EXPECT_EQ(config_error([](json& j) {
              j["rope_scaling"] = {{"rope_type", "llama3"},
                                   {"factor", 8.0},
                                   {"high_freq_factor", 4.0},
                                   {"original_max_position_embeddings", 8192}};
            }),
            "cfg.json: rope_scaling type 'llama3' needs \"low_freq_factor\"");
  EXPECT_EQ(config_error([](json& j) {
              j["rope_scaling"] = {{"rope_type", "llama3"},
                                   {"factor", 8.0},
                                   {"low_freq_factor", 4.0},
                                   {"high_freq_factor", 1.0},
                                   {"original_max_position_embeddings", 8192}};
            }),
            "cfg.json: rope_scaling llama3 needs low_freq_factor (4) < high_freq_factor (1)");

  EXPECT_EQ(config_error([](json& j) { j["attention_bias"] = true; }),
            "cfg.json: attention_bias=true (biases on the attention projections) is not supported");
  EXPECT_EQ(config_error([](json& j) { j["mlp_bias"] = true; }),
            "cfg.json: mlp_bias=true (biases on the MLP projections) is not supported");
  EXPECT_EQ(config_error([](json& j) { j["tie_word_embeddings"] = "yes"; }),
            "cfg.json: \"tie_word_embeddings\" must be true or false, got a string");
  const std::string bad_eos =
      "cfg.json: \"eos_token_id\" must be a token id (an integer from 0 to 2147483647)";
  EXPECT_EQ(config_error([](json& j) { j["eos_token_id"] = json::array(); }),
            "cfg.json: \"eos_token_id\" is an empty list");
  EXPECT_EQ(config_error([](json& j) { j["eos_token_id"] = -1; }), bad_eos);
  EXPECT_EQ(config_error([](json& j) { j["eos_token_id"] = {2, "x"}; }), bad_eos);
  EXPECT_EQ(config_error([](json& j) { j["eos_token_id"] = 4294967296ull; }), bad_eos);
  EXPECT_EQ(config_error([](json& j) { j["bos_token_id"] = 1.5; }),
            "cfg.json: \"bos_token_id\" must be a token id (an integer from 0 to 2147483647)");
  EXPECT_EQ(config_error([](json& j) { j["sliding_window"] = 0; }),
            "cfg.json: \"sliding_window\" must be positive, got 0");
  EXPECT_EQ(config_error([](json& j) { j["sliding_window"] = "4096"; }),
            "cfg.json: \"sliding_window\" must be an integer, got a string");
}

// Every size is bounded and every size product is computed with overflow checks
// (config_limits): huge values are refused by the parser, never wrapped into plausible widths.
TEST(LlamaConfig, SizesAndProductsAreBounded) {
  using namespace config_limits;
  auto too_big = [](const std::string& key, int64_t v, int64_t limit) {
    return "cfg.json: \"" + key + "\" is " + std::to_string(v) +
           ", more than the supported maximum " + std::to_string(limit);
  };
  // The issue's reproducer: 2^62+8 heads of 2^61+4 kv heads, head_dim 8, used to wrap to real
  // widths and write out of bounds in the first forward.
  EXPECT_EQ(config_error([](json& j) {
              j["num_attention_heads"] = (int64_t{1} << 62) + 8;
              j["num_key_value_heads"] = (int64_t{1} << 61) + 4;
              j["head_dim"] = 8;
            }),
            too_big("num_attention_heads", (int64_t{1} << 62) + 8, kMaxHeads));
  const std::vector<std::pair<std::string, int64_t>> limits = {
      {"hidden_size", kMaxWidth},
      {"intermediate_size", kMaxWidth},
      {"num_hidden_layers", kMaxLayers},
      {"num_attention_heads", kMaxHeads},
      {"num_key_value_heads", kMaxHeads},
      {"vocab_size", kMaxVocab},
      {"head_dim", kMaxWidth},
      {"max_position_embeddings", kMaxPositions},
      {"sliding_window", kMaxPositions}};
  for (const auto& [key, limit] : limits) {
    SCOPED_TRACE(key);
    // Just past the limit, past every limit (5e9), and the largest int64.
    for (const int64_t v : {limit + 1, int64_t{5000000000}, std::numeric_limits<int64_t>::max()}) {
      EXPECT_EQ(config_error([&](json& j) { j[key] = v; }), too_big(key, v, limit));
    }
  }
  EXPECT_EQ(config_error([](json& j) {
              j["rope_scaling"] = {{"rope_type", "llama3"},
                                   {"factor", 8.0},
                                   {"low_freq_factor", 1.0},
                                   {"high_freq_factor", 4.0},
                                   {"original_max_position_embeddings", kMaxPositions + 1}};
            }),
            too_big("original_max_position_embeddings", kMaxPositions + 1, kMaxPositions));

  // Products of values each within its own limit.
  EXPECT_EQ(config_error([](json& j) {
              j["num_attention_heads"] = kMaxHeads;
              j["num_key_value_heads"] = kMaxHeads;
              j["head_dim"] = 32;
            }),
            "cfg.json: num_attention_heads (65536) * head_dim (32) is more than 1048576, the "
            "supported maximum projection width");
  EXPECT_EQ(config_error([](json& j) {
              j["num_hidden_layers"] = kMaxLayers;
              j["head_dim"] = 8192;  // 4 kv heads: 32768 key/value floats per layer
            }),
            "cfg.json: num_hidden_layers (65536) * num_key_value_heads * head_dim (32768) is more "
            "than 1073741824, the supported maximum key/value width of all layers");
  EXPECT_EQ(config_error([](json& j) {
              j["vocab_size"] = kMaxVocab;
              j["hidden_size"] = 1 << 18;
            }),
            "cfg.json: vocab_size (2147483647) * hidden_size (262144) is more than "
            "281474976710656, the supported maximum embedding size");

  // Values at the limits are accepted.
  json j = base_config();
  j["vocab_size"] = kMaxVocab;
  j["max_position_embeddings"] = kMaxPositions;
  j["sliding_window"] = kMaxPositions;
  j["num_hidden_layers"] = kMaxLayers;
  EXPECT_EQ(LlamaConfig::parse(j.dump(), "cfg.json").vocab_size, kMaxVocab);
  j = base_config();
  j["hidden_size"] = kMaxWidth;  // 8 heads of 131072
  j["intermediate_size"] = kMaxWidth;
  EXPECT_EQ(LlamaConfig::parse(j.dump(), "cfg.json").head_dim, kMaxWidth / 8);
}

TEST(LlamaConfig, RopeInvFreq) {
  // head_dim 8, theta 10000: 10000^-(2i/8) = 1, 0.1, 0.01, 0.001, each the nearest float.
  json j = base_config();
  LlamaConfig c = LlamaConfig::parse(j.dump(), "cfg.json");
  EXPECT_EQ(c.rope_inv_freq(), (std::vector<float>{1.0f, 0.1f, 0.01f, 0.001f}));

  j["rope_scaling"] = {{"type", "linear"}, {"factor", 4.0}};
  c = LlamaConfig::parse(j.dump(), "cfg.json");
  EXPECT_EQ(c.rope_scaling, RopeScaling::Linear);
  EXPECT_EQ(c.rope_factor, 4.0f);
  EXPECT_EQ(c.rope_inv_freq(), (std::vector<float>{0.25f, 0.025f, 0.0025f, 0.00025f}));

  // llama3 with original context 1024, low 1, high 4, factor 8: wavelengths 2*pi/f are 6.28 and
  // 62.8 (< 256, kept), 628.3 (between 256 and 1024, smoothed) and 6283 (> 1024, divided by 8).
  // Smoothed: s = (1024 / 628.3185 - 1) / 3 = 0.209917, f' = 0.01 * ((1 - s) / 8 + s) = 0.00308676.
  j["rope_scaling"] = {{"rope_type", "llama3"},
                       {"factor", 8.0},
                       {"low_freq_factor", 1.0},
                       {"high_freq_factor", 4.0},
                       {"original_max_position_embeddings", 1024}};
  c = LlamaConfig::parse(j.dump(), "cfg.json");
  EXPECT_EQ(c.rope_scaling, RopeScaling::Llama3);
  EXPECT_EQ(c.rope_original_max_position, 1024);
  const std::vector<float> l3 = c.rope_inv_freq();
  ASSERT_EQ(l3.size(), 4u);
  EXPECT_EQ(l3[0], 1.0f);
  EXPECT_EQ(l3[1], 0.1f);
  EXPECT_FLOAT_EQ(l3[2], 0.00308676064f);
  EXPECT_EQ(l3[3], 0.001f / 8.0f);

  // Llama 3.1's real setting (head_dim 128, theta 500000, factor 8, 1/4, 8192): the first
  // frequency is untouched and the last is divided by the factor.
  json big = base_config();
  big["hidden_size"] = 4096;
  big["num_attention_heads"] = 32;
  big["num_key_value_heads"] = 8;
  big["rope_theta"] = 500000.0;
  big["rope_scaling"] = {{"rope_type", "llama3"},
                         {"factor", 8.0},
                         {"low_freq_factor", 1.0},
                         {"high_freq_factor", 4.0},
                         {"original_max_position_embeddings", 8192}};
  const LlamaConfig b = LlamaConfig::parse(big.dump(), "cfg.json");
  const std::vector<float> f = b.rope_inv_freq();
  ASSERT_EQ(f.size(), 64u);
  EXPECT_EQ(f[0], 1.0f);
  LlamaConfig plain = b;
  plain.rope_scaling = RopeScaling::None;
  const std::vector<float> g = plain.rope_inv_freq();
  EXPECT_EQ(f[63], g[63] / 8.0f);
  for (size_t i = 0; i < 64; ++i) {
    EXPECT_LE(f[i], g[i]);
    EXPECT_GE(f[i], g[i] / 8.0f);
  }
}

void expect_same(const LlamaConfig& a, const LlamaConfig& b) {
  EXPECT_EQ(a.architecture, b.architecture);
  EXPECT_EQ(a.hidden_size, b.hidden_size);
  EXPECT_EQ(a.intermediate_size, b.intermediate_size);
  EXPECT_EQ(a.num_layers, b.num_layers);
  EXPECT_EQ(a.num_heads, b.num_heads);
  EXPECT_EQ(a.num_kv_heads, b.num_kv_heads);
  EXPECT_EQ(a.head_dim, b.head_dim);
  EXPECT_EQ(a.vocab_size, b.vocab_size);
  EXPECT_EQ(a.max_position_embeddings, b.max_position_embeddings);
  EXPECT_EQ(a.rms_norm_eps, b.rms_norm_eps);
  EXPECT_EQ(a.rope_theta, b.rope_theta);
  EXPECT_EQ(a.rope_scaling, b.rope_scaling);
  EXPECT_EQ(a.rope_factor, b.rope_factor);
  EXPECT_EQ(a.rope_low_freq_factor, b.rope_low_freq_factor);
  EXPECT_EQ(a.rope_high_freq_factor, b.rope_high_freq_factor);
  EXPECT_EQ(a.rope_original_max_position, b.rope_original_max_position);
  EXPECT_EQ(a.tie_word_embeddings, b.tie_word_embeddings);
  EXPECT_EQ(a.attention_bias, b.attention_bias);
  EXPECT_EQ(a.bos_token_id, b.bos_token_id);
  EXPECT_EQ(a.eos_token_ids, b.eos_token_ids);
  EXPECT_EQ(a.sliding_window, b.sliding_window);
}

TEST(LlamaConfig, ToJsonRoundTrip) {
  LlamaConfig a;
  a.architecture = "MistralForCausalLM";
  a.hidden_size = 96;
  a.intermediate_size = 250;
  a.num_layers = 3;
  a.num_heads = 6;
  a.num_kv_heads = 2;
  a.head_dim = 32;  // not hidden / heads
  a.vocab_size = 1000;
  a.max_position_embeddings = 4096;
  a.rms_norm_eps = 1e-5f;
  a.rope_theta = 1e6f;
  a.rope_scaling = RopeScaling::Llama3;
  a.rope_factor = 32.0f;
  a.rope_low_freq_factor = 0.7f;
  a.rope_high_freq_factor = 3.3f;
  a.rope_original_max_position = 2048;
  a.tie_word_embeddings = true;
  a.bos_token_id = 11;
  a.eos_token_ids = {12, 13};
  a.sliding_window = 1024;
  const std::string text = a.to_json();
  expect_same(LlamaConfig::parse(text, "rt.json"), a);
  EXPECT_NE(text.find("\"rms_norm_eps\": 1e-05"), std::string::npos) << text;

  a.architecture = "LlamaForCausalLM";
  a.rope_scaling = RopeScaling::Linear;
  a.rope_factor = 2.5f;
  a.rope_low_freq_factor = 1.0f;  // unused by linear, so back to the defaults parse() leaves
  a.rope_high_freq_factor = 4.0f;
  a.rope_original_max_position = 8192;
  a.eos_token_ids = {2};
  a.sliding_window.reset();
  expect_same(LlamaConfig::parse(a.to_json(), "rt.json"), a);
  a.rope_scaling = RopeScaling::None;
  a.rope_factor = 1.0f;
  expect_same(LlamaConfig::parse(a.to_json(), "rt.json"), a);

  EAGLE2_SHARED_FILE(path, "data/models/stories260K-hf/config.json");
  const LlamaConfig s = LlamaConfig::load(path);
  expect_same(LlamaConfig::parse(s.to_json(), "rt.json"), s);
}

// Whatever bytes a config holds, parsing ends in a config or an Error.
TEST(LlamaConfig, CorruptTextOnlyThrowsError) {
  const std::string good = base_config().dump();
  uint64_t state = 99;
  int refused = 0;
  for (int it = 0; it < test::scaled(5000); ++it) {
    std::string m = good;
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    const size_t pos = (state >> 33) % m.size();
    m[pos] = static_cast<char>(m[pos] ^ ((state >> 20) & 0xff ? (state >> 20) & 0xff : 1));
    if ((state >> 60) == 0) m.resize(pos);
    try {
      LlamaConfig::parse(m, "cfg.json");
    } catch (const Error&) {
      ++refused;
    }
  }
  EXPECT_GT(refused, 0);
}

}  // namespace
}  // namespace eagle2

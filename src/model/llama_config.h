// The architecture of a LLaMA-family model, read from a Hugging Face config.json
// (LlamaForCausalLM, MistralForCausalLM).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace eagle2 {

enum class RopeScaling { None, Linear, Llama3 };

struct LlamaConfig {
  std::string architecture;  // "LlamaForCausalLM" or "MistralForCausalLM"
  int64_t hidden_size = 0;
  int64_t intermediate_size = 0;
  int64_t num_layers = 0;
  int64_t num_heads = 0;
  int64_t num_kv_heads = 0;
  int64_t head_dim = 0;  // config "head_dim" if given, else hidden_size / num_heads
  int64_t vocab_size = 0;
  int64_t max_position_embeddings = 0;
  float rms_norm_eps = 1e-6f;
  float rope_theta = 10000.0f;
  RopeScaling rope_scaling = RopeScaling::None;
  float rope_factor = 1.0f;                // linear and llama3
  float rope_low_freq_factor = 1.0f;       // llama3
  float rope_high_freq_factor = 4.0f;      // llama3
  int64_t rope_original_max_position = 8192;  // llama3 "original_max_position_embeddings"
  bool tie_word_embeddings = false;
  bool attention_bias = false;             // q/k/v biases (not LLaMA; refused if true)
  int32_t bos_token_id = 1;
  std::vector<int32_t> eos_token_ids;      // "eos_token_id": int or list
  std::optional<int64_t> sliding_window;   // Mistral; null/absent = none

  // Parses config.json text; `where` names the file in error messages. Missing required fields,
  // wrong types, unsupported architectures or rope_scaling types, non-positive sizes and
  // inconsistent head counts are Errors: "<where>: ...".
  static LlamaConfig parse(const std::string& json_text, const std::string& where);
  static LlamaConfig load(const std::string& path);  // reads the file, then parse()

  std::string to_json() const;  // a config.json that parse() reads back to the same values

  // RoPE inverse frequencies (head_dim/2 of them) after rope_scaling, computed in float32
  // like Hugging Face's implementation.
  std::vector<float> rope_inv_freq() const;
};

}  // namespace eagle2

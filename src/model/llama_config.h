// The architecture of a LLaMA-family model, read from a Hugging Face config.json
// (LlamaForCausalLM, MistralForCausalLM, Qwen2ForCausalLM, Qwen3ForCausalLM, and the
// mixture-of-experts MixtralForCausalLM and Qwen3MoeForCausalLM).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace eagle2 {

class GgufFile;

enum class RopeScaling { None, Linear, Llama3 };

// Upper bounds on the sizes a config.json may give; LlamaConfig::parse refuses anything larger.
// Each sits far above every published LLaMA-family model, and together they keep every size
// product the engine forms (weight matrices, per-token buffers, KV caches of up to kMaxPositions
// tokens) well inside int64 and size_t, so a hostile config is an Error, never wrapped arithmetic.
namespace config_limits {
// hidden_size, intermediate_size, head_dim, and the query width num_heads * head_dim
// (largest published: intermediate 53248 in Llama-3.1-405B).
inline constexpr int64_t kMaxWidth = int64_t{1} << 20;
// num_attention_heads and num_key_value_heads (largest published: 128).
inline constexpr int64_t kMaxHeads = int64_t{1} << 16;
// num_hidden_layers (largest published: 126).
inline constexpr int64_t kMaxLayers = int64_t{1} << 16;
// vocab_size: token ids are int32.
inline constexpr int64_t kMaxVocab = 2147483647;
// max_position_embeddings, sliding_window, rope original_max_position_embeddings: positions are
// int32 in a batch and --ctx stops at 2^30.
inline constexpr int64_t kMaxPositions = int64_t{1} << 30;
// num_hidden_layers * num_key_value_heads * head_dim, the floats one token adds to the K (and to
// the V) cache: times kMaxPositions it stays below 2^60 floats.
inline constexpr int64_t kMaxKvWidth = int64_t{1} << 30;
// vocab_size * hidden_size, the largest matrix (embedding, lm_head): its byte size and any row
// offset stay far below 2^63 (largest published: about 2^32).
inline constexpr int64_t kMaxMatrixElements = int64_t{1} << 48;
// num_local_experts / num_experts (largest published: 512); num_experts_per_tok is at most that.
inline constexpr int64_t kMaxExperts = int64_t{1} << 12;
// num_experts_per_tok (largest published: 10). Each row's routing, scratch and sum scale with it.
inline constexpr int64_t kMaxExpertsUsed = 64;
}  // namespace config_limits

struct LlamaConfig {
  // "LlamaForCausalLM", "MistralForCausalLM", "Qwen2ForCausalLM", "Qwen3ForCausalLM",
  // "MixtralForCausalLM" or "Qwen3MoeForCausalLM"
  std::string architecture;
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
  float rope_factor = 1.0f;                   // linear and llama3
  float rope_low_freq_factor = 1.0f;          // llama3
  float rope_high_freq_factor = 4.0f;         // llama3
  int64_t rope_original_max_position = 8192;  // llama3 "original_max_position_embeddings"
  // From a GGUF's rope_freqs.weight (llama.cpp's form of LLaMA-3.1 scaling): each inverse
  // frequency is divided by its factor. Empty: none (config.json's rope_scaling applies instead).
  std::vector<float> rope_freq_factors;
  bool tie_word_embeddings = false;
  bool attention_bias = false;  // biases on q/k/v/o ("attention_bias"; refused if true)
  bool qkv_bias = false;        // Qwen2: biases on q, k and v (not o)
  bool qk_norm = false;         // Qwen3: RMSNorm of each q and k head before RoPE
  // Mixture of experts (Mixtral, Qwen3-MoE): every layer's MLP is num_experts SwiGLU experts of
  // width expert_intermediate_size, of which a router picks num_experts_used per token
  // (model/moe_ffn.h). num_experts 0: a dense model.
  int64_t num_experts = 0;               // "num_local_experts" (Mixtral), "num_experts" (Qwen3-MoE)
  int64_t num_experts_used = 0;          // "num_experts_per_tok"
  int64_t expert_intermediate_size = 0;  // Mixtral: intermediate_size; "moe_intermediate_size"
  // The chosen experts' softmax probabilities divided by their sum (Mixtral always, which is its
  // softmax over the top-k logits; Qwen3-MoE "norm_topk_prob").
  bool norm_topk_prob = false;
  bool is_moe() const { return num_experts > 0; }
  int32_t bos_token_id = 1;
  std::vector<int32_t> eos_token_ids;     // "eos_token_id": int or list
  std::optional<int64_t> sliding_window;  // Mistral; null/absent = none

  // Parses config.json text; `where` names the file in error messages. Missing required fields,
  // wrong types, unsupported architectures or rope_scaling types, non-positive sizes, sizes or
  // size products beyond config_limits and inconsistent head counts are Errors: "<where>: ...".
  static LlamaConfig parse(const std::string& json_text, const std::string& where);
  static LlamaConfig load(const std::string& path);  // reads the file, then parse()
  // The config a GGUF file's llama.* metadata describes (general.architecture "llama"), checked
  // by parse() like any config.json: Errors name the file.
  static LlamaConfig from_gguf(const GgufFile& file);

  std::string to_json() const;  // a config.json that parse() reads back to the same values

  // RoPE inverse frequencies (head_dim/2 of them) after rope_scaling, computed in float32
  // like Hugging Face's implementation.
  std::vector<float> rope_inv_freq() const;
};

}  // namespace eagle2

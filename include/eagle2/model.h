// A LLaMA-family target model (LLaMA-2/3, Vicuna, Mistral) in the Hugging Face layout: its
// config.json read into ModelConfig, and the model itself loaded over memory-mapped weights.
// Model owns its weights; the mapped files must not change while it lives. Every load and parse
// failure is an eagle2::Error naming the file and what is wrong (errors, threads: eagle2/error.h).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace eagle2::api {

enum class RopeScaling { None, Linear, Llama3 };
const char* rope_scaling_name(RopeScaling s);  // "none", "linear", "llama3"

// Element types of stored weights ("F32", "F16", "BF16": the safetensors spelling).
enum class DType { F32, F16, BF16 };
const char* dtype_name(DType t);

// What a config.json says, field for field as the engine reads it (same names and defaults as its
// internal config, so a ModelConfig written back is the config that was read).
struct ModelConfig {
  std::string architecture;  // "LlamaForCausalLM", "MistralForCausalLM", "Qwen2ForCausalLM" or
                             // "Qwen3ForCausalLM"
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
  bool tie_word_embeddings = false;
  bool attention_bias = false;  // q/k/v biases (not LLaMA; refused if true)
  int32_t bos_token_id = 1;
  std::vector<int32_t> eos_token_ids;
  std::optional<int64_t> sliding_window;  // Mistral
  // Mixture of experts ("MixtralForCausalLM", "Qwen3MoeForCausalLM"; 0 experts: dense):
  // num_experts_used of num_experts SwiGLU experts of width expert_intermediate_size per token,
  // their router weights renormalised to sum 1 when norm_topk_prob.
  int64_t num_experts = 0;
  int64_t num_experts_used = 0;
  int64_t expert_intermediate_size = 0;
  bool norm_topk_prob = false;
};

// Parses config.json text with every check a model load applies (sizes, limits, architecture);
// `where` names the source in errors: "<where>: ...".
ModelConfig parse_model_config(const std::string& json_text, const std::string& where);
ModelConfig load_model_config(const std::string& path);  // reads the file, then parses it
// The config of a model as -m names it: a folder's config.json, or a .gguf file's metadata (the
// tensors are not read).
ModelConfig model_config_of(const std::string& model);
std::string model_config_json(const ModelConfig& config);  // what parse_model_config reads back

class Model {
 public:
  // Reads dir/config.json and the safetensors weights (single file or sharded); checks every
  // tensor's name and shape.
  static Model load(const std::string& dir);
  ~Model();
  Model(Model&&) noexcept;
  Model& operator=(Model&&) noexcept;

  const ModelConfig& config() const;
  const std::string& dir() const;
  int64_t parameter_count() const;
  size_t weight_bytes() const;                     // bytes of the stored weights used
  size_t embedding_bytes() const;                  // of the embedding table alone
  std::vector<std::string> weight_dtypes() const;  // distinct dtypes, e.g. {"BF16", "F32"}

  struct Impl;  // the library's side of the handle (src/api)
  explicit Model(std::unique_ptr<Impl> impl);
  Impl& impl() const { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

// Writes dir/config.json and dir/model.safetensors of a model with random weights (no tokenizer:
// feed token ids). The same seed gives the same bytes. The config is checked as a load would.
void write_random_model(const std::string& dir, const ModelConfig& config, DType dtype,
                        uint64_t seed);

}  // namespace eagle2::api

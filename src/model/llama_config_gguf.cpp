// LlamaConfig from a GGUF file's metadata: the llama.* keys become the config.json they stand
// for, which parse() then checks exactly as it checks a Hugging Face folder's.
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "io/gguf.h"
#include "model/llama_config.h"

namespace eagle2 {

LlamaConfig LlamaConfig::from_gguf(const GgufFile& g) {
  const std::string arch(g.string("general.architecture"));
  if (arch != "llama")
    g.fail_at("general.architecture is \"" + arch + "\"; eagle2 runs llama GGUF files");
  auto required = [&](const char* key) {
    const int64_t v = g.integer_or(key, -1);
    if (v < 0) g.fail_at(std::string("no ") + key);
    return v;
  };
  nlohmann::json j;
  j["architectures"] = {"LlamaForCausalLM"};
  j["model_type"] = "llama";
  j["hidden_size"] = required("llama.embedding_length");
  j["intermediate_size"] = required("llama.feed_forward_length");
  j["num_hidden_layers"] = required("llama.block_count");
  j["num_attention_heads"] = required("llama.attention.head_count");
  j["num_key_value_heads"] =
      g.integer_or("llama.attention.head_count_kv", j["num_attention_heads"].get<int64_t>());
  if (const int64_t hd = g.integer_or("llama.attention.key_length", -1); hd > 0) j["head_dim"] = hd;
  j["max_position_embeddings"] = required("llama.context_length");
  if (const GgufValue* eps = g.find("llama.attention.layer_norm_rms_epsilon"))
    j["rms_norm_eps"] = eps->as_float("llama.attention.layer_norm_rms_epsilon");
  if (const GgufValue* theta = g.find("llama.rope.freq_base"))
    j["rope_theta"] = theta->as_float("llama.rope.freq_base");
  // The vocabulary: llama.vocab_size, else the tokenizer's token list, else the embedding's rows.
  int64_t vocab = g.integer_or("llama.vocab_size", -1);
  if (vocab < 0)
    if (const GgufValue* tokens = g.find("tokenizer.ggml.tokens"))
      vocab = static_cast<int64_t>(tokens->count);
  bool has_output = false;
  for (const GgufTensorInfo& t : g.tensors()) {
    if (t.name == "output.weight") has_output = true;
    if (vocab < 0 && t.name == "token_embd.weight" && t.dims.size() == 2) vocab = t.dims[1];
  }
  if (vocab < 0) g.fail_at("no llama.vocab_size, token list or token_embd.weight");
  j["vocab_size"] = vocab;
  j["tie_word_embeddings"] = !has_output;  // no output.weight: the embedding is the lm_head
  j["bos_token_id"] = g.integer_or("tokenizer.ggml.bos_token_id", 1);
  j["eos_token_id"] = g.integer_or("tokenizer.ggml.eos_token_id", 2);
  return parse(j.dump(), g.path());
}

}  // namespace eagle2

// LlamaConfig from a GGUF file's metadata: the <arch>.* keys (llama, qwen2, qwen3) become the
// config.json they stand for, which parse() then checks exactly as it checks a Hugging Face
// folder's; llama.cpp's rope_freqs tensor (LLaMA-3.1 scaling) becomes per-frequency divisors.
#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "io/gguf.h"
#include "model/llama_config.h"

namespace eagle2 {

LlamaConfig LlamaConfig::from_gguf(const GgufFile& g) {
  // llama.cpp's architecture names and the Hugging Face classes they were converted from (Mistral
  // files say "llama").
  const std::string arch(g.string("general.architecture"));
  std::string hf_arch;
  if (arch == "llama")
    hf_arch = "LlamaForCausalLM";
  else if (arch == "qwen2")
    hf_arch = "Qwen2ForCausalLM";
  else if (arch == "qwen3")
    hf_arch = "Qwen3ForCausalLM";
  else if (arch == "qwen3moe")
    hf_arch = "Qwen3MoeForCausalLM";
  else
    g.fail_at("general.architecture is \"" + arch +
              "\"; eagle2 runs llama (and Mixtral), qwen2, qwen3 and qwen3moe GGUF files");
  const std::string p = arch + ".";
  auto key = [&](const char* k) { return p + k; };
  auto required = [&](const char* k) {
    const int64_t v = g.integer_or(key(k), -1);
    if (v < 0) g.fail_at("no " + key(k));
    return v;
  };
  nlohmann::json j;
  j["architectures"] = {hf_arch};
  j["hidden_size"] = required("embedding_length");
  // Experts: Mixtral is llama with <arch>.expert_count; each expert is feed_forward_length wide
  // there, expert_feed_forward_length wide in qwen3moe. Counts are checked by parse().
  const int64_t experts = g.integer_or(key("expert_count"), 0);
  if (arch == "qwen3moe" && experts <= 0) g.fail_at("no " + key("expert_count") + " (or it is 0)");
  if (experts > 0 && arch != "llama" && arch != "qwen3moe")
    g.fail_at(key("expert_count") + " in a " + arch +
              " file: eagle2 runs experts in llama "
              "(Mixtral) and qwen3moe files only");
  if (experts > 0) {
    if (arch == "llama") j["architectures"] = {"MixtralForCausalLM"};
    j[arch == "llama" ? "num_local_experts" : "num_experts"] = experts;
    j["num_experts_per_tok"] = required("expert_used_count");
  }
  if (arch == "qwen3moe") {
    j["moe_intermediate_size"] = required("expert_feed_forward_length");
    // llama.cpp always renormalises the chosen experts' weights for qwen3moe.
    j["norm_topk_prob"] = true;
    j["intermediate_size"] =
        g.integer_or(key("feed_forward_length"), j["moe_intermediate_size"].get<int64_t>());
  } else {
    j["intermediate_size"] = required("feed_forward_length");
  }
  j["num_hidden_layers"] = required("block_count");
  j["num_attention_heads"] = required("attention.head_count");
  j["num_key_value_heads"] =
      g.integer_or(key("attention.head_count_kv"), j["num_attention_heads"].get<int64_t>());
  if (const int64_t hd = g.integer_or(key("attention.key_length"), -1); hd > 0) j["head_dim"] = hd;
  j["max_position_embeddings"] = required("context_length");
  if (const GgufValue* eps = g.find(key("attention.layer_norm_rms_epsilon")))
    j["rms_norm_eps"] = eps->as_float(key("attention.layer_norm_rms_epsilon"));
  if (const GgufValue* theta = g.find(key("rope.freq_base")))
    j["rope_theta"] = theta->as_float(key("rope.freq_base"));
  if (g.find(key("rope.scaling.type")) != nullptr) {
    const std::string t(g.string(key("rope.scaling.type")));
    if (t == "linear") {
      const GgufValue* factor = g.find(key("rope.scaling.factor"));
      if (factor == nullptr)
        g.fail_at("rope scaling \"linear\" without " + key("rope.scaling.factor"));
      j["rope_scaling"] = {{"rope_type", "linear"},
                           {"factor", factor->as_float(key("rope.scaling.factor"))}};
    } else if (t != "none") {
      g.fail_at(key("rope.scaling.type") + " is \"" + t +
                "\"; eagle2 supports none and linear (and llama3's rope_freqs)");
    }
  }
  // The vocabulary: <arch>.vocab_size, else the tokenizer's token list, else the embedding's rows.
  int64_t vocab = g.integer_or(key("vocab_size"), -1);
  if (vocab < 0)
    if (const GgufValue* tokens = g.find("tokenizer.ggml.tokens"))
      vocab = static_cast<int64_t>(tokens->count);
  bool has_output = false;
  const GgufTensorInfo* rope_freqs = nullptr;
  for (const GgufTensorInfo& t : g.tensors()) {
    if (t.name == "output.weight") has_output = true;
    if (t.name == "rope_freqs.weight") rope_freqs = &t;
    if (vocab < 0 && t.name == "token_embd.weight" && t.dims.size() == 2) vocab = t.dims[1];
  }
  if (vocab < 0) g.fail_at("no " + key("vocab_size") + ", token list or token_embd.weight");
  j["vocab_size"] = vocab;
  j["tie_word_embeddings"] = !has_output;  // no output.weight: the embedding is the lm_head
  j["bos_token_id"] = g.integer_or("tokenizer.ggml.bos_token_id", 1);
  j["eos_token_id"] = g.integer_or("tokenizer.ggml.eos_token_id", 2);
  LlamaConfig c = parse(j.dump(), g.path());
  if (rope_freqs != nullptr) {
    // LLaMA-3.1's rope scaling as llama.cpp's converter stores it: one divisor per frequency.
    if (rope_freqs->type != 0)  // ggml's F32
      g.fail_at("rope_freqs.weight is not F32");
    if (rope_freqs->dims.size() != 1 || rope_freqs->dims[0] != c.head_dim / 2)
      g.fail_at("rope_freqs.weight has " +
                std::to_string(rope_freqs->dims.empty() ? 0 : rope_freqs->dims[0]) +
                " factors, not head_dim / 2 = " + std::to_string(c.head_dim / 2));
    const unsigned char* data = g.tensor_data(*rope_freqs);
    c.rope_freq_factors.resize(static_cast<size_t>(c.head_dim / 2));
    std::memcpy(c.rope_freq_factors.data(), data, c.rope_freq_factors.size() * sizeof(float));
    for (float f : c.rope_freq_factors)
      if (!(f > 0.0f) || !std::isfinite(f))
        g.fail_at("rope_freqs.weight holds a factor that is not positive and finite");
  }
  return c;
}

}  // namespace eagle2

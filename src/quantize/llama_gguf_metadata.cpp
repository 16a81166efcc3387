#include "quantize/llama_gguf_metadata.h"

#include <numbers>
#include <vector>

#include "core/error.h"

namespace eagle2 {

namespace {

// ggml's GGML_QNT_VERSION: the layout version of the quantized blocks, which llama.cpp writes into
// every file it converts or quantizes.
constexpr uint32_t kQuantizationVersion = 2;

uint32_t u32_of(int64_t v, const char* what, const std::string& where) {
  if (v < 0 || v > 0xffffffffll) fail(where, ": ", what, " ", v, " does not fit GGUF's uint32");
  return static_cast<uint32_t>(v);
}

}  // namespace

uint32_t llama_file_type(DType t) {
  switch (t) {
    case DType::F32:
      return 0;
    case DType::F16:
      return 1;
    case DType::Q4_0:
      return 2;
    case DType::Q8_0:
      return 7;
    case DType::BF16:
      return 32;
    default:
      fail("GGUF: no llama file type for ", dtype_name(t));
  }
}

std::string gguf_architecture(const LlamaConfig& c, const std::string& where) {
  if (c.architecture == "LlamaForCausalLM" || c.architecture == "MistralForCausalLM" ||
      c.architecture == "MixtralForCausalLM")
    return "llama";
  if (c.architecture == "Qwen3MoeForCausalLM") return "qwen3moe";
  if (c.architecture == "Qwen2ForCausalLM") return "qwen2";
  if (c.architecture == "Qwen3ForCausalLM") return "qwen3";
  fail(where, ": ", c.architecture,
       " is not written to GGUF (LLaMA, Mistral, Mixtral, Qwen2, Qwen3 and Qwen3-MoE models are)");
}

void add_llama_metadata(GgufWriter& w, const LlamaConfig& c, const std::string& name, DType type,
                        const std::string& where) {
  const std::string arch = gguf_architecture(c, where);
  if (c.rope_scaling == RopeScaling::Llama3 && arch != "llama")
    fail(where, ": rope_scaling llama3 is written to GGUF for LLaMA models only (llama.cpp's ",
         arch, " reads no rope_freqs)");
  if (c.sliding_window)
    fail(where, ": sliding_window ", *c.sliding_window,
         " cannot be written to GGUF (llama.cpp's llama architecture has no sliding window)");
  const std::string p = arch + ".";
  auto u32 = [&](const char* key, int64_t v, const char* what) {
    w.add_u32(p + key, u32_of(v, what, where));
  };
  // In the order convert_hf_to_gguf.py writes them.
  w.add_string("general.architecture", arch);
  w.add_string("general.type", "model");
  w.add_string("general.name", name);
  u32("block_count", c.num_layers, "num_hidden_layers");
  u32("context_length", c.max_position_embeddings, "max_position_embeddings");
  u32("embedding_length", c.hidden_size, "hidden_size");
  u32("feed_forward_length", c.intermediate_size, "intermediate_size");
  u32("attention.head_count", c.num_heads, "num_attention_heads");
  u32("attention.head_count_kv", c.num_kv_heads, "num_key_value_heads");
  w.add_f32(p + "rope.freq_base", c.rope_theta);
  w.add_f32(p + "attention.layer_norm_rms_epsilon", c.rms_norm_eps);
  // Always written (the converter writes them when config.json names head_dim): Qwen3's head_dim
  // is not hidden_size / num_heads.
  u32("attention.key_length", c.head_dim, "head_dim");
  u32("attention.value_length", c.head_dim, "head_dim");
  if (c.is_moe()) {  // in the order convert_hf_to_gguf.py writes them
    u32("expert_count", c.num_experts, "num_experts");
    u32("expert_used_count", c.num_experts_used, "num_experts_per_tok");
    if (arch == "qwen3moe")
      u32("expert_feed_forward_length", c.expert_intermediate_size, "moe_intermediate_size");
    // llama.cpp renormalises the chosen experts' weights for both architectures, whatever a
    // file says: a config that does not cannot be written faithfully.
    if (!c.norm_topk_prob)
      fail(where,
           ": norm_topk_prob=false cannot be written to GGUF (llama.cpp renormalises the "
           "chosen experts' weights of ",
           arch, " models)");
  }
  w.add_u32("general.file_type", llama_file_type(type));
  if (arch == "llama") {  // LlamaModel's own additions
    u32("vocab_size", c.vocab_size, "vocab_size");
    u32("rope.dimension_count", c.head_dim, "head_dim");
  }
  if (c.rope_scaling == RopeScaling::Linear) {
    w.add_string(p + "rope.scaling.type", "linear");
    w.add_f32(p + "rope.scaling.factor", c.rope_factor);
  }
  w.add_u32("general.quantization_version", kQuantizationVersion);
}

std::vector<float> llama3_rope_freq_factors(const LlamaConfig& c) {
  if (c.rope_scaling != RopeScaling::Llama3) return {};
  LlamaConfig plain = c;
  plain.rope_scaling = RopeScaling::None;
  plain.rope_freq_factors.clear();
  const std::vector<float> freqs = plain.rope_inv_freq();
  // float32 throughout, as the converter's torch arithmetic runs (a Python scalar meets a float32
  // tensor as a float32); the thresholds are computed in double by Python.
  const float factor = c.rope_factor, low = c.rope_low_freq_factor, high = c.rope_high_freq_factor;
  const double old_len = static_cast<double>(c.rope_original_max_position);
  const float low_freq_wavelen = static_cast<float>(old_len / low);
  const float high_freq_wavelen = static_cast<float>(old_len / high);
  const float two_pi = static_cast<float>(2 * std::numbers::pi);
  std::vector<float> out;
  out.reserve(freqs.size());
  for (float f : freqs) {
    const float wavelen = two_pi / f;
    if (wavelen < high_freq_wavelen) {
      out.push_back(1.0f);
    } else if (wavelen > low_freq_wavelen) {
      out.push_back(factor);
    } else {
      const float smooth = (static_cast<float>(old_len) / wavelen - low) / (high - low);
      out.push_back(1.0f / ((1.0f - smooth) / factor + smooth));
    }
  }
  return out;
}

SpmVocabSpec fit_vocab(SpmVocabSpec spec, int64_t vocab_size, const std::string& where) {
  const auto n = static_cast<int64_t>(spec.tokens.size());
  if (n > vocab_size) {
    for (int64_t id = vocab_size; id < n; ++id) {
      const SpmTokenType t = spec.types.empty() ? SpmTokenType::kNormal : spec.types[id];
      if (t == SpmTokenType::kUnknown || t == SpmTokenType::kControl || t == SpmTokenType::kByte)
        fail(where, ": the tokenizer's ", n, " pieces cannot be cut to vocab_size ", vocab_size,
             ": piece ", id, " (", spec.tokens[id],
             ") is a special or byte piece the vocabulary needs");
    }
    spec.tokens.resize(static_cast<size_t>(vocab_size));
    if (!spec.scores.empty()) spec.scores.resize(static_cast<size_t>(vocab_size));
    if (!spec.types.empty()) spec.types.resize(static_cast<size_t>(vocab_size));
  }
  if (spec.scores.empty()) spec.scores.assign(spec.tokens.size(), 0.0f);
  if (spec.types.empty()) spec.types.assign(spec.tokens.size(), SpmTokenType::kNormal);
  for (int64_t i = 1; static_cast<int64_t>(spec.tokens.size()) < vocab_size; ++i) {
    spec.tokens.push_back("[PAD" + std::to_string(i) + "]");
    spec.scores.push_back(-1000.0f);
    spec.types.push_back(SpmTokenType::kUnused);
  }
  return spec;
}

void add_token_id_key(GgufWriter& w, const std::string& source, const char* key, int64_t id,
                      int64_t n_tokens) {
  if (id < 0) return;
  if (id >= n_tokens)
    fail(source, ": ", key, " ", id, " is not a token id (the vocabulary has ", n_tokens, ")");
  w.add_u32(key, static_cast<uint32_t>(id));
}

void add_spm_vocab(GgufWriter& w, const SpmVocabSpec& v, const LlamaConfig& c) {
  w.add_string("tokenizer.ggml.model", "llama");
  w.add_string("tokenizer.ggml.pre", "default");
  w.add_string_array("tokenizer.ggml.tokens", v.tokens);
  w.add_f32_array("tokenizer.ggml.scores", v.scores);
  std::vector<int32_t> types;
  types.reserve(v.types.size());
  for (SpmTokenType t : v.types) types.push_back(static_cast<int32_t>(t));
  w.add_i32_array("tokenizer.ggml.token_type", types);
  const auto n = static_cast<int64_t>(v.tokens.size());
  auto id_key = [&](const char* key, int64_t id) { add_token_id_key(w, v.source, key, id, n); };
  id_key("tokenizer.ggml.bos_token_id", c.bos_token_id);
  if (!c.eos_token_ids.empty()) id_key("tokenizer.ggml.eos_token_id", c.eos_token_ids.front());
  // llama.cpp and the reader here take 0 when the key is absent; the converter writes it only
  // when the model's files name an unknown token.
  if (v.unk_id > 0) id_key("tokenizer.ggml.unknown_token_id", v.unk_id);
}

}  // namespace eagle2

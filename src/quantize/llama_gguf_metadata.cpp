#include "quantize/llama_gguf_metadata.h"

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

void add_llama_metadata(GgufWriter& w, const LlamaConfig& c, const std::string& name, DType type,
                        const std::string& where) {
  if (c.architecture != "LlamaForCausalLM" && c.architecture != "MistralForCausalLM")
    fail(where, ": ", c.architecture, " is not written to GGUF yet (LLaMA and Mistral models are)");
  if (c.rope_scaling != RopeScaling::None)
    fail(where, ": rope_scaling is not written to GGUF yet (only models without it are)");
  if (c.sliding_window)
    fail(where, ": sliding_window ", *c.sliding_window,
         " cannot be written to GGUF (llama.cpp's llama architecture has no sliding window)");
  // In the order convert_hf_to_gguf.py writes them.
  w.add_string("general.architecture", "llama");
  w.add_string("general.type", "model");
  w.add_string("general.name", name);
  w.add_u32("llama.block_count", u32_of(c.num_layers, "num_hidden_layers", where));
  w.add_u32("llama.context_length",
            u32_of(c.max_position_embeddings, "max_position_embeddings", where));
  w.add_u32("llama.embedding_length", u32_of(c.hidden_size, "hidden_size", where));
  w.add_u32("llama.feed_forward_length", u32_of(c.intermediate_size, "intermediate_size", where));
  w.add_u32("llama.attention.head_count", u32_of(c.num_heads, "num_attention_heads", where));
  w.add_u32("llama.attention.head_count_kv", u32_of(c.num_kv_heads, "num_key_value_heads", where));
  w.add_f32("llama.rope.freq_base", c.rope_theta);
  w.add_f32("llama.attention.layer_norm_rms_epsilon", c.rms_norm_eps);
  w.add_u32("llama.attention.key_length", u32_of(c.head_dim, "head_dim", where));
  w.add_u32("llama.attention.value_length", u32_of(c.head_dim, "head_dim", where));
  w.add_u32("general.file_type", llama_file_type(type));
  w.add_u32("llama.vocab_size", u32_of(c.vocab_size, "vocab_size", where));
  w.add_u32("llama.rope.dimension_count", u32_of(c.head_dim, "head_dim", where));
  w.add_u32("general.quantization_version", kQuantizationVersion);
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
  auto id_key = [&](const char* key, int64_t id) {
    if (id < 0) return;
    if (id >= n)
      fail(v.source, ": ", key, " ", id, " is not a token id (the vocabulary has ", n, ")");
    w.add_u32(key, static_cast<uint32_t>(id));
  };
  id_key("tokenizer.ggml.bos_token_id", c.bos_token_id);
  if (!c.eos_token_ids.empty()) id_key("tokenizer.ggml.eos_token_id", c.eos_token_ids.front());
  // llama.cpp and the reader here take 0 when the key is absent; the converter writes it only
  // when the model's files name an unknown token.
  if (v.unk_id > 0) id_key("tokenizer.ggml.unknown_token_id", v.unk_id);
}

}  // namespace eagle2

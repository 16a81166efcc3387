// The metadata of a GGUF file written from a Hugging Face config (LLaMA, Mistral, Qwen2, Qwen3)
// and a SentencePiece vocabulary: the keys llama.cpp's convert_hf_to_gguf.py writes, so that
// llama.cpp and LlamaConfig::from_gguf / gguf_tokenizer() read back the model that was written
// (the inverse of model/llama_config_gguf.cpp and tokenizer_load/gguf_tokenizer.cpp). Byte-level
// BPE vocabularies: quantize/bpe_gguf_vocab.h.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "io/gguf_writer.h"
#include "model/llama_config.h"
#include "tokenizer/spm_vocab_tokenizer.h"

namespace eagle2 {

// ggml's general.file_type (enum llama_ftype) of a file whose matrices are all of type `t`:
// MOSTLY_Q8_0 = 7, MOSTLY_Q4_0 = 2, and ALL_F32 = 0, MOSTLY_F16 = 1, MOSTLY_BF16 = 32.
uint32_t llama_file_type(DType t);

// llama.cpp's general.architecture for cfg: "llama" (LLaMA and Mistral), "qwen2" or "qwen3";
// Error "<where>: ..." for any other.
std::string gguf_architecture(const LlamaConfig& cfg, const std::string& where);

// Whether llama.cpp's converter interleaves the rows of Q and K for this GGUF architecture: it
// does for "llama" (adjacent-pair RoPE), not for qwen2/qwen3 (rotate-half RoPE, as Hugging Face).
inline bool gguf_interleaves_qk(const std::string& arch) {
  return arch == "llama";
}

// general.* and <arch>.* keys of cfg, with general.file_type for `type`; linear rope scaling as
// <arch>.rope.scaling.type/factor. What llama.cpp cannot say is refused, "<where>: ... ": a
// sliding window (none in llama.cpp's llama architecture) and llama3 rope scaling outside LLaMA
// (it travels as the rope_freqs tensor, which only llama.cpp's llama reads). `name` becomes
// general.name.
void add_llama_metadata(GgufWriter& w, const LlamaConfig& cfg, const std::string& name, DType type,
                        const std::string& where);

// LLaMA-3.1's rope scaling as llama.cpp's converter stores it (rope_freqs.weight, F32): for each
// of the head_dim/2 frequencies, the divisor of its inverse frequency (1 for short wavelengths,
// the factor for long ones, interpolated between). Empty unless cfg's rope_scaling is llama3.
// The converter takes original_max_position_embeddings from the config's top level (8192 when
// absent); this takes rope_scaling's, which is what Hugging Face applies: they agree for every
// published LLaMA-3.1/3.2 config.
std::vector<float> llama3_rope_freq_factors(const LlamaConfig& cfg);

// The vocabulary with exactly vocab_size entries, as llama.cpp's converter makes it: a longer one
// is cut (every unknown, control and byte token must survive the cut: Error naming the first that
// would not), a shorter one padded with "[PAD1]", "[PAD2]", ... of type unused and score -1000.
SpmVocabSpec fit_vocab(SpmVocabSpec spec, int64_t vocab_size, const std::string& where);

// A token-id key (tokenizer.ggml.bos_token_id, ...) = id, left out when id < 0. Error
// "<source>: KEY ID is not a token id (the vocabulary has N)" when id >= n_tokens.
void add_token_id_key(GgufWriter& w, const std::string& source, const char* key, int64_t id,
                      int64_t n_tokens);

// tokenizer.ggml.*: model "llama", pre "default", tokens, scores, token types, the BOS and EOS ids
// of cfg (what config.json says, as the converter takes them), and the unknown id when not 0.
void add_spm_vocab(GgufWriter& w, const SpmVocabSpec& vocab, const LlamaConfig& cfg);

}  // namespace eagle2

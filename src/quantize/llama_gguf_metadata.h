// The metadata of a llama GGUF file written from a Hugging Face config and a SentencePiece
// vocabulary: the keys llama.cpp's convert_hf_to_gguf.py writes for a LlamaForCausalLM with a
// tokenizer.model, so that llama.cpp and LlamaConfig::from_gguf / gguf_tokenizer() read back the
// model that was written (the inverse of model/llama_config_gguf.cpp and
// tokenizer_load/gguf_tokenizer.cpp).
#pragma once

#include <cstdint>
#include <string>

#include "core/dtype.h"
#include "io/gguf_writer.h"
#include "model/llama_config.h"
#include "tokenizer/spm_vocab_tokenizer.h"

namespace eagle2 {

// ggml's general.file_type (enum llama_ftype) of a file whose matrices are all of type `t`:
// MOSTLY_Q8_0 = 7, MOSTLY_Q4_0 = 2, and ALL_F32 = 0, MOSTLY_F16 = 1, MOSTLY_BF16 = 32.
uint32_t llama_file_type(DType t);

// general.* and llama.* keys of cfg, with general.file_type for `type`. What llama.cpp's llama
// architecture cannot say is refused, "<where>: ... ": rope_scaling (the GGUF reader here does not
// read llama.rope.scaling.* yet, and llama3 scaling needs a rope_freqs tensor) and a sliding
// window (none in llama.cpp's llama architecture). `name` becomes general.name.
void add_llama_metadata(GgufWriter& w, const LlamaConfig& cfg, const std::string& name, DType type,
                        const std::string& where);

// The vocabulary with exactly vocab_size entries, as llama.cpp's converter makes it: a longer one
// is cut (every unknown, control and byte token must survive the cut: Error naming the first that
// would not), a shorter one padded with "[PAD1]", "[PAD2]", ... of type unused and score -1000.
SpmVocabSpec fit_vocab(SpmVocabSpec spec, int64_t vocab_size, const std::string& where);

// tokenizer.ggml.*: model "llama", pre "default", tokens, scores, token types, the BOS and EOS ids
// of cfg (what config.json says, as the converter takes them), and the unknown id when not 0.
void add_spm_vocab(GgufWriter& w, const SpmVocabSpec& vocab, const LlamaConfig& cfg);

}  // namespace eagle2

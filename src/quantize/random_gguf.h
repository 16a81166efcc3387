// Random-weight models written as GGUF files (eagle2 make-random --dtype q8_0|q4_0, and
// make-random --arch llama3|qwen2|qwen3 in any dtype): the cost curves of 1B and 7B shapes with
// quantized weights, and LLaMA-3 / Qwen2 / Qwen3 models to run side by side with llama.cpp, with
// no model to download. The values are those of model/random_model.h's folder of the same seed
// and scales, stored as the type asked for, and the vocabulary a real tokenizer's, so that
// generate and llama.cpp run the file.
#pragma once

#include <cstdint>
#include <string>

#include "core/dtype.h"
#include "model/llama_config.h"
#include "model/random_model.h"

namespace eagle2 {

// type: F32, F16, BF16, Q8_0 or Q4_0 (matrices; norm weights and biases are F32). tokenizer: a
// SentencePiece tokenizer.model, whose pieces are cut or padded to cfg.vocab_size
// (quantize/llama_gguf_metadata.h: fit_vocab), or a byte-level BPE tokenizer.json (with its
// tokenizer_config.json), padded to it (quantize/bpe_gguf_vocab.h). LLaMA-3.1 rope scaling is
// written as llama.cpp's rope_freqs tensor. `path` must end in .gguf, in a folder that exists.
// cfg is checked as a load would.
void write_random_gguf(const std::string& path, const LlamaConfig& cfg, DType type, uint64_t seed,
                       const std::string& tokenizer, const RandomScales& scales = {});

}  // namespace eagle2

// Random-weight LLaMA models written as quantized GGUF files (eagle2 make-random --dtype
// q8_0|q4_0): the cost curves of 1B and 7B shapes with quantized weights, with no model to
// download. The values are those of model/random_model.h's folder of the same seed, quantized,
// and the vocabulary a real SentencePiece tokenizer's, so that generate and llama.cpp run the file.
#pragma once

#include <cstdint>
#include <string>

#include "core/dtype.h"
#include "model/llama_config.h"

namespace eagle2 {

// type: Q8_0 or Q4_0 (matrices; norm weights are F32). tokenizer_model: a SentencePiece
// tokenizer.model whose pieces are cut or padded to cfg.vocab_size (quantize/llama_gguf_metadata.h:
// fit_vocab). `path` must end in .gguf, in a folder that exists. cfg is checked as a load would.
void write_random_gguf(const std::string& path, const LlamaConfig& cfg, DType type, uint64_t seed,
                       const std::string& tokenizer_model, float init_std = 0.02f);

}  // namespace eagle2

// Quantized GGUF files that llama.cpp and eagle2 both load: `eagle2 quantize` (a Hugging Face
// folder or a GGUF file -> Q8_0 or Q4_0 matrices, blocks rounded as ggml's reference quantizer
// rounds them) and random-weight models written straight to GGUF (`make-random --dtype q8_0`).
// What is quantized to what: docs/QUANTIZATION.md.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "eagle2/model.h"

namespace eagle2::api {

enum class QuantType { Q8_0, Q4_0 };
const char* quant_type_name(QuantType t);  // "Q8_0", "Q4_0" (ggml's spelling)
// "q8_0", "q4_0" (either case); false for anything else.
bool parse_quant_type(std::string_view text, QuantType* out);

struct QuantizeSummary {
  bool from_gguf = false;  // the source was a GGUF file (else a Hugging Face folder)
  int64_t tensors = 0;     // tensors written
  int64_t quantized = 0;   // of them, stored as the requested type (the rest: F32 from a
                           // folder, copied as they were from a GGUF file)
  uint64_t bytes = 0;      // size of the file written
};

// `in`: a Hugging Face folder (config.json, safetensors, tokenizer.model) or a llama .gguf file;
// `out`: the .gguf file to write, in a folder that exists. One Error naming the path on any fault;
// the output appears only once complete.
QuantizeSummary quantize(const std::string& in, const std::string& out, QuantType type);

// A random-weight model (the values write_random_model draws for the same seed, quantized) as one
// GGUF file, with the vocabulary of the SentencePiece `tokenizer_model` cut or padded to
// config.vocab_size. `path` must end in .gguf.
void write_random_gguf(const std::string& path, const ModelConfig& config, QuantType type,
                       uint64_t seed, const std::string& tokenizer_model);

}  // namespace eagle2::api

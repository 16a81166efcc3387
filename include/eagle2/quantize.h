// Quantized GGUF files that llama.cpp and eagle2 both load: `eagle2 quantize` (a Hugging Face
// folder or a GGUF file -> Q8_0 or Q4_0 matrices, blocks rounded as ggml's reference quantizer
// rounds them) and random-weight models written straight to GGUF (`make-random --dtype q8_0`).
// What is quantized to what: docs/QUANTIZATION.md.
//
// Contract. Units: bytes for sizes, counts for tensors. Ownership: the functions take paths and
// keep nothing. Errors: eagle2::Error naming the path, tensor or config field (a file that is not
// a model, an unexpected tensor, an output that is a folder or does not end in .gguf); the output
// file appears only once complete, so a failed call leaves no partial file. Threads: the work
// runs on the calling thread (eagle2/error.h).
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

// The element types a random GGUF model's matrices can have (norm weights and biases are F32).
enum class GgufDType { F32, F16, BF16, Q8_0, Q4_0 };
const char* gguf_dtype_name(GgufDType t);  // "F32", "F16", "BF16", "Q8_0", "Q4_0"
// "f32", "f16", "bf16", "q8_0", "q4_0" (either case); false for anything else.
bool parse_gguf_dtype(std::string_view text, GgufDType* out);

struct RandomWeights {
  uint64_t seed = 1;
  float init_std = 0.02f;   // matrices: N(0, init_std)
  float final_norm = 1.0f;  // the final norm's weights: N(final_norm, 0.1 * final_norm); above 1
                            // it sharpens the next-token distribution
};

// A random-weight model of any supported architecture (LLaMA with or without LLaMA-3.1 rope
// scaling, Mistral, Qwen2, Qwen3: config.architecture) as one GGUF file that llama.cpp loads, in
// llama.cpp's layout for that architecture (docs/ARCHITECTURES.md). `tokenizer`: a byte-level BPE
// tokenizer.json (LLaMA-3, Qwen; its tokenizer_config.json beside it gives BOS/EOS and the chat
// template), padded to config.vocab_size, or a SentencePiece tokenizer.model, cut or padded to
// it. `path` must end in .gguf. One Error naming the path, the tokenizer or the config.
void write_random_gguf(const std::string& path, const ModelConfig& config, GgufDType type,
                       const std::string& tokenizer, const RandomWeights& weights);

}  // namespace eagle2::api

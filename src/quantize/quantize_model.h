// eagle2 quantize: a LLaMA model (a Hugging Face folder or a llama GGUF file) written as a GGUF
// file whose matrices are Q8_0 or Q4_0, blocks rounded as ggml's reference quantizer rounds them,
// which llama.cpp and eagle2 both load (docs/QUANTIZATION.md).
//
// From a Hugging Face folder: the config's llama.* metadata, the SentencePiece vocabulary of its
// tokenizer.model (tokenizer.ggml.*, as llama.cpp's converter writes it), tensors under llama.cpp's
// names with the Q/K rows interleaved; matrices -> the type, norm weights -> F32.
// From a GGUF file: its metadata as it is (general.file_type set for the type, general.alignment
// dropped: the output uses 32) and its tensors in its order; each matrix whose rows are whole
// blocks is converted to the type (dequantized first if it is quantized; copied as it is when it
// already has the type), every other tensor is copied as it is.
#pragma once

#include <cstdint>
#include <string>

#include "core/dtype.h"

namespace eagle2 {

struct QuantizeResult {
  bool from_gguf = false;  // the source was a GGUF file (else a Hugging Face folder)
  int64_t tensors = 0;     // tensors written
  int64_t quantized = 0;   // of them, stored as the requested type
  uint64_t bytes = 0;      // size of the file written
};

// type: Q8_0 or Q4_0. `out` must end in ".gguf" (the suffix -m dispatches on) in a folder that
// exists. Every fault is one Error naming the path (or the flag), before anything is written
// where possible; the output appears only once complete.
QuantizeResult quantize_model(const std::string& in, const std::string& out, DType type);

// Refuses an output path quantize_model or write_random_gguf cannot write: no ".gguf" suffix, an
// existing folder, a folder that does not exist.
void check_gguf_output_path(const std::string& out);

// The metadata and tensors of a GGUF source (quantize_model's second half, in its own file).
QuantizeResult quantize_gguf_file(const std::string& in, const std::string& out, DType type);

}  // namespace eagle2

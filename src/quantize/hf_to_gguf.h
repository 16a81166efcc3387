// Tensors in the Hugging Face layout (a model folder's weights, a random model's values) written
// as llama.cpp's GGUF tensors: llama.cpp's names, dimensions listed contiguous-first, the rows of
// Q and K interleaved for llama.cpp's adjacent-pair RoPE (its "llama" architecture), and every
// matrix stored as the type asked for.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "io/gguf_writer.h"
#include "model/llama_config.h"

namespace eagle2 {

struct HfTensor {
  std::string hf_name;         // "model.layers.0.self_attn.q_proj.weight"
  std::vector<int64_t> shape;  // [rows, cols], [n] (one row), or [experts, rows, cols] (stacked)
  // Writes rows [first, first + count) as floats, in Hugging Face order, to out.
  std::function<void(int64_t first, int64_t count, float* out)> rows;
  // When set, the GGUF name as is: a tensor of llama.cpp's own with no Hugging Face counterpart
  // (rope_freqs.weight).
  std::string gguf_name = {};
};

// The type a tensor of this (Hugging Face) shape is stored as when `type` (F32, F16, BF16, Q8_0,
// Q4_0) is asked for: a matrix whose rows are whole blocks of `type` gets `type`; anything else
// (norm weights, biases, and any matrix with a ragged row) stays F32, which is exact for every
// source dtype.
DType gguf_storage_type(const std::vector<int64_t>& shape, DType type);

// The tensors llama.cpp's converter adds of its own, first in its files: LLaMA-3.1's rope scaling
// as rope_freqs.weight (quantize/llama_gguf_metadata.h: llama3_rope_freq_factors). Empty for a
// model without llama3 rope scaling.
std::vector<HfTensor> llama_cpp_extra_tensors(const LlamaConfig& cfg);

struct HfTensorCounts {
  int64_t quantized = 0;  // tensors stored as the requested type
  int64_t f32 = 0;        // tensors stored as F32
};

// Adds each tensor to `w` (under its GGUF name; an unknown name is an Error) and returns the fill
// that writes their data, for w.write(). head_dim: rows per attention head in Q and K;
// interleave_qk: whether their rows are interleaved (quantize/llama_gguf_metadata.h:
// gguf_interleaves_qk). Quantizing a non-finite value is an Error naming the tensor (ggml's
// rounding of it would be undefined).
GgufWriter::Fill add_hf_tensors(GgufWriter& w, std::vector<HfTensor> tensors, int64_t head_dim,
                                bool interleave_qk, DType type, HfTensorCounts* counts);

}  // namespace eagle2

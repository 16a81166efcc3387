// A GGUF file's tensors under the Hugging Face names the model loader binds (model.layers.N.
// self_attn.q_proj.weight, ...), in Hugging Face's layout: dimensions outermost first, and the
// rows of Q and K back in the order of Hugging Face's rotate-half RoPE. llama.cpp's converter
// interleaves them for its adjacent-pair RoPE: within each head of head_dim rows, its row 2i is
// row i and its row 2i + 1 is row i + head_dim / 2 (llama architecture only). F32, F16 and BF16
// tensors are supported; every other type is one error naming the tensor and its type.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "io/gguf.h"
#include "io/safetensors.h"

namespace eagle2 {

// head_dim: the rows of one attention head in Q and K; interleaved_qk: whether the converter
// interleaved them (llama.cpp does for its "llama" architecture, not for qwen2/qwen3, whose RoPE
// it runs in rotate-half form). The store keeps `file` alive.
TensorStore gguf_tensor_store(std::shared_ptr<const GgufFile> file, int64_t head_dim,
                              bool interleaved_qk);

// ggml's type id of a dtype, and the dtype of a ggml type id (false for a type eagle2 does not
// compute with).
uint32_t ggml_type_of(DType t);
bool dtype_of_ggml_type(uint32_t type, DType* out);

// The two spellings of a LLaMA tensor's name: llama.cpp's ("blk.3.attn_q.weight") and Hugging
// Face's ("model.layers.3.self_attn.q_proj.weight"); "" for a name outside the table. One table
// serves the reader and the writer (eagle2 quantize), so the two cannot drift apart.
std::string hf_tensor_name(const std::string& gguf_name);
std::string gguf_tensor_name(const std::string& hf_name);

// Whether a Hugging Face tensor's rows are stored interleaved in GGUF (q_proj and k_proj).
bool has_interleaved_rope_rows(const std::string& hf_name);

// The Hugging Face row that row `gguf_row` of an interleaved Q or K holds: within each head of
// head_dim (even) rows, GGUF row 2i is row i and row 2i + 1 is row i + head_dim / 2.
inline int64_t hf_row_of_gguf_row(int64_t gguf_row, int64_t head_dim) {
  const int64_t r = gguf_row % head_dim;
  return gguf_row - r + r / 2 + (r % 2) * (head_dim / 2);
}

}  // namespace eagle2

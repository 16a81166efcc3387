// A GGUF file's tensors under the Hugging Face names the model loader binds (model.layers.N.
// self_attn.q_proj.weight, ...), in Hugging Face's layout: dimensions outermost first, and the
// rows of Q and K back in the order of Hugging Face's rotate-half RoPE. llama.cpp's converter
// interleaves them for its adjacent-pair RoPE: within each head of head_dim rows, its row 2i is
// row i and its row 2i + 1 is row i + head_dim / 2 (llama architecture only). F32, F16 and BF16 tensors are supported;
// every other type is one error naming the tensor and its type.
#pragma once

#include <cstdint>
#include <memory>

#include "io/gguf.h"
#include "io/safetensors.h"

namespace eagle2 {

// head_dim: the rows of one attention head in Q and K; interleaved_qk: whether the converter
// interleaved them (llama.cpp does for its "llama" architecture, not for qwen2/qwen3, whose RoPE
// it runs in rotate-half form). The store keeps `file` alive.
TensorStore gguf_tensor_store(std::shared_ptr<const GgufFile> file, int64_t head_dim,
                              bool interleaved_qk);

}  // namespace eagle2

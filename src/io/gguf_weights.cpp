#include "io/gguf_weights.h"

#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "core/error.h"

namespace eagle2 {

namespace {

// ggml's type ids of the dtypes the engine computes with.
constexpr uint32_t kGgmlF32 = 0, kGgmlF16 = 1, kGgmlQ4_0 = 2, kGgmlQ8_0 = 8, kGgmlQ4_K = 12,
                   kGgmlQ6_K = 14, kGgmlBf16 = 30;

// llama.cpp's tensor names -> Hugging Face's (blk.N.* -> model.layers.N.*); "" for a name this
// loader does not know (left for the model's unused-tensor check to report).
std::string hf_name(const std::string& g) {
  static const std::map<std::string, std::string> globals = {
      {"token_embd.weight", "model.embed_tokens.weight"},
      {"output_norm.weight", "model.norm.weight"},
      {"output.weight", "lm_head.weight"},
  };
  if (auto it = globals.find(g); it != globals.end()) return it->second;
  static const std::map<std::string, std::string> per_layer = {
      {"attn_norm.weight", "input_layernorm.weight"},
      {"ffn_norm.weight", "post_attention_layernorm.weight"},
      {"attn_q.weight", "self_attn.q_proj.weight"},
      {"attn_k.weight", "self_attn.k_proj.weight"},
      {"attn_v.weight", "self_attn.v_proj.weight"},
      {"attn_q.bias", "self_attn.q_proj.bias"},
      {"attn_k.bias", "self_attn.k_proj.bias"},
      {"attn_v.bias", "self_attn.v_proj.bias"},
      {"attn_q_norm.weight", "self_attn.q_norm.weight"},
      {"attn_k_norm.weight", "self_attn.k_norm.weight"},
      {"attn_output.weight", "self_attn.o_proj.weight"},
      {"ffn_gate.weight", "mlp.gate_proj.weight"},
      {"ffn_up.weight", "mlp.up_proj.weight"},
      {"ffn_down.weight", "mlp.down_proj.weight"},
  };
  if (g.rfind("blk.", 0) != 0) return "";
  const size_t dot = g.find('.', 4);
  if (dot == std::string::npos || dot == 4) return "";
  const std::string layer = g.substr(4, dot - 4);
  if (layer.find_first_not_of("0123456789") != std::string::npos) return "";
  auto it = per_layer.find(g.substr(dot + 1));
  if (it == per_layer.end()) return "";
  return "model.layers." + layer + "." + it->second;
}

}  // namespace

TensorStore gguf_tensor_store(std::shared_ptr<const GgufFile> file, int64_t head_dim,
                              bool interleaved_qk) {
  const GgufFile& g = *file;
  std::map<std::string, TensorView> tensors;
  std::vector<std::shared_ptr<const void>> owners{file};
  for (const GgufTensorInfo& t : g.tensors()) {
    const std::string name(t.name);
    // LLaMA-3.1's RoPE factors are configuration (LlamaConfig::from_gguf reads them), not a weight.
    if (name == "rope_freqs.weight") continue;
    DType dtype;
    switch (t.type) {
      case kGgmlF32: dtype = DType::F32; break;
      case kGgmlF16: dtype = DType::F16; break;
      case kGgmlBf16: dtype = DType::BF16; break;
      case kGgmlQ8_0: dtype = DType::Q8_0; break;
      case kGgmlQ4_0: dtype = DType::Q4_0; break;
      case kGgmlQ4_K: dtype = DType::Q4_K; break;
      case kGgmlQ6_K: dtype = DType::Q6_K; break;
      default:
        fail(g.path(), ": tensor ", name, " has type ", ggml_type_name(t.type),
             ", which eagle2 does not support");
    }
    std::string hf = hf_name(name);
    if (hf.empty()) hf = name;  // unknown: reported by the model's unused-tensor check
    TensorView v;
    v.name = hf;
    v.file = g.path();
    v.dtype = dtype;
    v.shape.assign(t.dims.rbegin(), t.dims.rend());  // ggml lists the contiguous dimension first
    v.data = g.tensor_data(t);
    // general.alignment may be as small as 1: an element read through a misaligned pointer is
    // undefined behaviour, so such a file is refused rather than read.
    if (reinterpret_cast<uintptr_t>(v.data) % dtype_alignment(dtype) != 0)
      fail(g.path(), ": tensor ", name, " data is not aligned to ", dtype_alignment(dtype),
           " bytes as its ", dtype_name(dtype), " data needs (general.alignment ", g.alignment(), ")");
    const bool rope_rows = hf.ends_with("self_attn.q_proj.weight") ||
                           hf.ends_with("self_attn.k_proj.weight");
    if (interleaved_qk && rope_rows && v.shape.size() == 2) {
      const int64_t rows = v.shape[0];
      if (head_dim < 2 || head_dim % 2 != 0 || rows % head_dim != 0)
        fail(g.path(), ": tensor ", name, " has ", rows, " rows, not a whole number of heads of ",
             head_dim);
      // Undo the converter's interleaving, head by head, into memory of our own.
      // Quantized blocks never cross a row (the reader checked whole blocks per row), so this is
      // a row copy for every type.
      const size_t row_bytes = dtype_bytes(dtype, v.shape[1]);
      auto rows_copy = std::make_shared<std::vector<unsigned char>>(v.nbytes());
      const auto* src = static_cast<const unsigned char*>(v.data);
      const int64_t half = head_dim / 2;
      for (int64_t h = 0; h < rows / head_dim; ++h)
        for (int64_t i = 0; i < half; ++i)
          for (int64_t which = 0; which < 2; ++which) {
            const int64_t from = h * head_dim + 2 * i + which;  // GGUF row
            const int64_t to = h * head_dim + i + which * half;  // Hugging Face row
            std::memcpy(rows_copy->data() + static_cast<size_t>(to) * row_bytes,
                        src + static_cast<size_t>(from) * row_bytes, row_bytes);
          }
      v.data = rows_copy->data();
      owners.push_back(rows_copy);
    }
    if (!tensors.emplace(hf, std::move(v)).second)
      fail(g.path(), ": tensor ", name, " appears twice");
  }
  return TensorStore::from_views(g.path(), std::move(tensors), std::move(owners));
}

}  // namespace eagle2

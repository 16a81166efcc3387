#include "io/gguf_weights.h"

#include <cstring>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/error.h"

namespace eagle2 {

namespace {

// ggml's type ids of the dtypes the engine computes with.
constexpr uint32_t kGgmlF32 = 0, kGgmlF16 = 1, kGgmlQ4_0 = 2, kGgmlQ4_1 = 3, kGgmlQ5_0 = 6,
                   kGgmlQ5_1 = 7, kGgmlQ8_0 = 8, kGgmlQ2_K = 10, kGgmlQ3_K = 11, kGgmlQ4_K = 12,
                   kGgmlQ5_K = 13, kGgmlQ6_K = 14, kGgmlIQ4_NL = 20, kGgmlIQ4_XS = 23,
                   kGgmlBf16 = 30;

// llama.cpp's names of the per-layer tensors and the Hugging Face names they stand for.
const std::pair<const char*, const char*> kLayerNames[] = {
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
    // Mixtral and Qwen3-MoE: the router, and each projection of all experts stacked in one
    // [experts, rows, cols] tensor (Hugging Face folders hold one tensor per expert instead).
    {"ffn_gate_inp.weight", "mlp.gate.weight"},
    {"ffn_gate_exps.weight", "mlp.experts.gate_proj.weight"},
    {"ffn_up_exps.weight", "mlp.experts.up_proj.weight"},
    {"ffn_down_exps.weight", "mlp.experts.down_proj.weight"},
};
const std::pair<const char*, const char*> kGlobalNames[] = {
    {"token_embd.weight", "model.embed_tokens.weight"},
    {"output_norm.weight", "model.norm.weight"},
    {"output.weight", "lm_head.weight"},
};

// "<prefix>N.<rest>" -> N and rest; false unless N is a plain decimal number.
bool split_layer(const std::string& name, const std::string& prefix, std::string* layer,
                 std::string* rest) {
  if (name.rfind(prefix, 0) != 0) return false;
  const size_t dot = name.find('.', prefix.size());
  if (dot == std::string::npos || dot == prefix.size()) return false;
  *layer = name.substr(prefix.size(), dot - prefix.size());
  if (layer->find_first_not_of("0123456789") != std::string::npos) return false;
  *rest = name.substr(dot + 1);
  return true;
}

}  // namespace

bool dtype_of_ggml_type(uint32_t type, DType* out) {
  switch (type) {
    case kGgmlF32:
      *out = DType::F32;
      return true;
    case kGgmlF16:
      *out = DType::F16;
      return true;
    case kGgmlBf16:
      *out = DType::BF16;
      return true;
    case kGgmlQ8_0:
      *out = DType::Q8_0;
      return true;
    case kGgmlQ4_0:
      *out = DType::Q4_0;
      return true;
    case kGgmlQ4_K:
      *out = DType::Q4_K;
      return true;
    case kGgmlQ6_K:
      *out = DType::Q6_K;
      return true;
    case kGgmlQ4_1:
      *out = DType::Q4_1;
      return true;
    case kGgmlQ5_0:
      *out = DType::Q5_0;
      return true;
    case kGgmlQ5_1:
      *out = DType::Q5_1;
      return true;
    case kGgmlQ5_K:
      *out = DType::Q5_K;
      return true;
    case kGgmlQ3_K:
      *out = DType::Q3_K;
      return true;
    case kGgmlQ2_K:
      *out = DType::Q2_K;
      return true;
    case kGgmlIQ4_NL:
      *out = DType::IQ4_NL;
      return true;
    case kGgmlIQ4_XS:
      *out = DType::IQ4_XS;
      return true;
    default:
      return false;
  }
}

uint32_t ggml_type_of(DType t) {
  switch (t) {
    case DType::F32:
      return kGgmlF32;
    case DType::F16:
      return kGgmlF16;
    case DType::BF16:
      return kGgmlBf16;
    case DType::Q8_0:
      return kGgmlQ8_0;
    case DType::Q4_0:
      return kGgmlQ4_0;
    case DType::Q4_K:
      return kGgmlQ4_K;
    case DType::Q6_K:
      return kGgmlQ6_K;
    case DType::Q4_1:
      return kGgmlQ4_1;
    case DType::Q5_0:
      return kGgmlQ5_0;
    case DType::Q5_1:
      return kGgmlQ5_1;
    case DType::Q5_K:
      return kGgmlQ5_K;
    case DType::Q3_K:
      return kGgmlQ3_K;
    case DType::Q2_K:
      return kGgmlQ2_K;
    case DType::IQ4_NL:
      return kGgmlIQ4_NL;
    case DType::IQ4_XS:
      return kGgmlIQ4_XS;
    case DType::I64:
    case DType::BOOL:
      break;  // index tensors: the GGUF writers here write weights only
  }
  fail("ggml_type_of: no ggml type for ", dtype_name(t));
}

std::string hf_tensor_name(const std::string& g) {
  for (const auto& [gguf, hf] : kGlobalNames)
    if (g == gguf) return hf;
  std::string layer, rest;
  if (!split_layer(g, "blk.", &layer, &rest)) return "";
  for (const auto& [gguf, hf] : kLayerNames)
    if (rest == gguf) return "model.layers." + layer + "." + hf;
  return "";
}

std::string gguf_tensor_name(const std::string& h) {
  for (const auto& [gguf, hf] : kGlobalNames)
    if (h == hf) return gguf;
  std::string layer, rest;
  if (!split_layer(h, "model.layers.", &layer, &rest)) return "";
  for (const auto& [gguf, hf] : kLayerNames)
    if (rest == hf) return "blk." + layer + "." + gguf;
  return "";
}

bool has_interleaved_rope_rows(const std::string& hf) {
  return hf.ends_with("self_attn.q_proj.weight") || hf.ends_with("self_attn.k_proj.weight");
}

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
    if (!dtype_of_ggml_type(t.type, &dtype))
      fail(g.path(), ": tensor ", name, " has type ", ggml_type_name(t.type),
           ", which eagle2 does not support");
    std::string hf = hf_tensor_name(name);
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
           " bytes as its ", dtype_name(dtype), " data needs (general.alignment ", g.alignment(),
           ")");
    if (interleaved_qk && has_interleaved_rope_rows(hf) && v.shape.size() == 2) {
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
      for (int64_t from = 0; from < rows; ++from) {
        const int64_t to = hf_row_of_gguf_row(from, head_dim);
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

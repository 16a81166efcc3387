#include "quantize/hf_to_gguf.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>

#include "core/error.h"
#include "core/quant_blocks.h"
#include "io/gguf_weights.h"
#include "quantize/llama_gguf_metadata.h"

namespace eagle2 {

namespace {

// Rows are converted and quantized this many elements at a time: 16 MB of floats, whatever
// the tensor's size.
constexpr int64_t kConvertChunkElements = int64_t{1} << 22;

struct Planned {
  HfTensor t;
  DType type;
  int64_t rows, cols;
  bool interleave;
};

void check_finite(const float* x, int64_t n, const Planned& p, int64_t first_row) {
  for (int64_t i = 0; i < n; ++i)
    if (!std::isfinite(x[i]))
      fail("tensor '", p.t.hf_name, "' holds a non-finite value (", x[i], ") in row ",
           first_row + i / p.cols, ": it cannot be quantized to ", dtype_name(p.type));
}

void fill_tensor(const Planned& p, int64_t head_dim, unsigned char* dst) {
  // Whole heads per chunk for Q and K, so that a chunk's interleaved rows come from its own rows.
  int64_t step = std::max<int64_t>(1, kConvertChunkElements / std::max<int64_t>(1, p.cols));
  if (p.interleave) step = std::max<int64_t>(1, step / head_dim) * head_dim;
  step = std::min(step, p.rows);
  std::vector<float> hf(static_cast<size_t>(step * p.cols));
  std::vector<float> gguf(p.interleave ? hf.size() : 0);
  const size_t row_bytes = dtype_bytes(p.type, p.cols);
  for (int64_t first = 0; first < p.rows; first += step) {
    const int64_t n = std::min(step, p.rows - first);
    p.t.rows(first, n, hf.data());
    const float* rows = hf.data();
    if (p.interleave) {
      for (int64_t g = 0; g < n; ++g) {
        const int64_t h = hf_row_of_gguf_row(first + g, head_dim) - first;
        std::memcpy(gguf.data() + g * p.cols, hf.data() + h * p.cols,
                    static_cast<size_t>(p.cols) * sizeof(float));
      }
      rows = gguf.data();
    }
    unsigned char* out = dst + static_cast<size_t>(first) * row_bytes;
    const auto count = static_cast<size_t>(n * p.cols);
    if (p.type == DType::F32) {
      std::memcpy(out, rows, count * sizeof(float));
    } else if (p.type == DType::F16 || p.type == DType::BF16) {
      // Rounded to nearest even, as the converter's numpy astype / torch .to() round.
      auto* half = reinterpret_cast<uint16_t*>(out);
      for (size_t i = 0; i < count; ++i)
        half[i] = p.type == DType::F16 ? f32_to_f16(rows[i]) : f32_to_bf16(rows[i]);
    } else {
      check_finite(rows, n * p.cols, p, first);
      quantize_blocks(p.type, rows, out, n * p.cols);
    }
  }
}

}  // namespace

std::vector<HfTensor> llama_cpp_extra_tensors(const LlamaConfig& cfg) {
  std::vector<HfTensor> out;
  if (std::vector<float> factors = llama3_rope_freq_factors(cfg); !factors.empty()) {
    const auto n = static_cast<int64_t>(factors.size());
    out.push_back({"rope_freqs",
                   {n},
                   [factors](int64_t, int64_t, float* dst) {
                     std::copy(factors.begin(), factors.end(), dst);
                   },
                   "rope_freqs.weight"});
  }
  return out;
}

DType gguf_storage_type(const std::vector<int64_t>& shape, DType type) {
  if ((shape.size() == 2 || shape.size() == 3) && shape.back() > 0 &&
      shape.back() % dtype_block_elements(type) == 0)
    return type;
  return DType::F32;
}

GgufWriter::Fill add_hf_tensors(GgufWriter& w, std::vector<HfTensor> tensors, int64_t head_dim,
                                bool interleave_qk, DType type, HfTensorCounts* counts) {
  if (type != DType::F32 && type != DType::F16 && type != DType::BF16 && type != DType::Q8_0 &&
      type != DType::Q4_0)
    fail("GGUF tensors are written as F32, F16, BF16, Q8_0 or Q4_0, not ", dtype_name(type));
  auto plan = std::make_shared<std::vector<Planned>>();
  for (HfTensor& t : tensors) {
    const std::string name = t.gguf_name.empty() ? gguf_tensor_name(t.hf_name) : t.gguf_name;
    if (name.empty()) fail("tensor '", t.hf_name, "' has no llama.cpp name");
    if (t.shape.empty() || t.shape.size() > 3)
      fail("tensor '", t.hf_name, "' has ", t.shape.size(), " dimensions (1 to 3 are written)");
    Planned p{std::move(t), DType::F32, 1, 0, false};
    // A mixture of experts' router stays F32, as llama.cpp's converter and quantizer keep it.
    const bool router = p.t.hf_name.ends_with("mlp.gate.weight");
    p.type = router ? DType::F32 : gguf_storage_type(p.t.shape, type);
    p.rows = 1;  // a stacked [experts, rows, cols] tensor is experts * rows rows
    for (size_t i = 0; i + 1 < p.t.shape.size(); ++i) p.rows *= p.t.shape[i];
    p.cols = p.t.shape.back();
    p.interleave = interleave_qk && p.t.gguf_name.empty() && p.t.shape.size() == 2 &&
                   has_interleaved_rope_rows(p.t.hf_name);
    if (p.interleave && (head_dim < 2 || head_dim % 2 != 0 || p.rows % head_dim != 0))
      fail("tensor '", p.t.hf_name, "' has ", p.rows, " rows, not a whole number of heads of ",
           head_dim);
    std::vector<int64_t> dims(p.t.shape.rbegin(), p.t.shape.rend());
    w.add_tensor(name, dims, ggml_type_of(p.type));
    ++(p.type == DType::F32 ? counts->f32 : counts->quantized);
    plan->push_back(std::move(p));
  }
  // Indices of `w` count from its first tensor: the ones added here follow any added before.
  const size_t base = w.tensor_count() - plan->size();
  return [plan, base, head_dim](size_t index, unsigned char* dst) {
    fill_tensor(plan->at(index - base), head_dim, dst);
  };
}

}  // namespace eagle2

// quantize_model's GGUF source: metadata copied, matrices converted, everything else copied.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "core/error.h"
#include "core/quant_blocks.h"
#include "io/gguf.h"
#include "io/gguf_weights.h"
#include "io/gguf_writer.h"
#include "model/llama_config.h"
#include "quantize/llama_gguf_metadata.h"
#include "quantize/quantize_model.h"

namespace eagle2 {

namespace {

constexpr int64_t kRequantizeChunkElements = int64_t{1} << 20;

struct Source {
  const GgufTensorInfo* info;
  bool convert;        // else copied byte for byte
  DType from;          // when converting
  int64_t cols, rows;  // ne[0], and the product of the other dimensions
};

void convert_tensor(const GgufFile& g, const Source& s, DType type, unsigned char* dst) {
  const unsigned char* src = g.tensor_data(*s.info);
  if (!s.convert) {
    std::memcpy(dst, src, static_cast<size_t>(s.info->bytes));
    return;
  }
  const int64_t step = std::min(s.rows, std::max<int64_t>(1, kRequantizeChunkElements / s.cols));
  const size_t in_row = dtype_bytes(s.from, s.cols), out_row = dtype_bytes(type, s.cols);
  std::vector<float> rows(static_cast<size_t>(step * s.cols));
  for (int64_t first = 0; first < s.rows; first += step) {
    const int64_t n = std::min(step, s.rows - first);
    const size_t count = static_cast<size_t>(n * s.cols);
    convert_to_f32(s.from, src + static_cast<size_t>(first) * in_row, rows.data(), count);
    for (size_t i = 0; i < count; ++i)
      if (!std::isfinite(rows[i]))
        fail(g.path(), ": tensor ", s.info->name, " holds a non-finite value (", rows[i],
             ") in row ", first + static_cast<int64_t>(i) / s.cols, ": it cannot be quantized to ",
             dtype_name(type));
    quantize_blocks(type, rows.data(), dst + static_cast<size_t>(first) * out_row,
                    static_cast<int64_t>(count));
  }
}

}  // namespace

QuantizeResult quantize_gguf_file(const std::string& in, const std::string& out, DType type) {
  const GgufFile g(in);
  // What eagle2 and llama.cpp need to run the output: a llama config and a vocabulary.
  LlamaConfig::from_gguf(g);
  g.string("tokenizer.ggml.model");

  GgufWriter w;
  for (const GgufKv& kv : g.metadata()) {
    // The output's alignment is the writer's; the type and block version are the output's own.
    if (kv.key == "general.alignment") continue;
    if (kv.key == "general.file_type") {
      w.add_u32(kv.key, llama_file_type(type));
    } else if (kv.key == "general.quantization_version") {
      w.add_u32(kv.key, 2);
    } else {
      w.add_value(kv.key, kv.value);
    }
  }
  if (!w.has_key("general.quantization_version")) w.add_u32("general.quantization_version", 2);
  if (!w.has_key("general.file_type")) w.add_u32("general.file_type", llama_file_type(type));

  const uint32_t target = ggml_type_of(type);
  std::vector<Source> sources;
  QuantizeResult r;
  for (const GgufTensorInfo& t : g.tensors()) {
    Source s{&t, false, DType::F32, t.dims[0], 1};
    for (size_t d = 1; d < t.dims.size(); ++d)
      s.rows *= t.dims[d];  // the reader checked the product
    // A matrix is 2-D, or 3-D as a mixture of experts stacks its experts (ffn_*_exps: rows =
    // experts x rows of one). The router (ffn_gate_inp) stays F32 as llama-quantize keeps it: its
    // logits pick the experts, and a rounded logit flips a near-tie route.
    const bool router = t.name.ends_with("ffn_gate_inp.weight");
    const bool matrix = (t.dims.size() == 2 || t.dims.size() == 3) && !router && s.cols > 0 &&
                        s.cols % dtype_block_elements(type) == 0;
    s.convert = matrix && t.type != target;
    if (s.convert && !dtype_of_ggml_type(t.type, &s.from))
      fail(in, ": tensor ", t.name, " has type ", ggml_type_name(t.type),
           ", which eagle2 cannot convert to ", dtype_name(type));
    w.add_tensor(t.name, t.dims, matrix ? target : t.type);
    r.quantized += matrix ? 1 : 0;
    sources.push_back(s);
  }
  r.tensors = static_cast<int64_t>(sources.size());
  w.write(out, [&](size_t i, unsigned char* dst) { convert_tensor(g, sources[i], type, dst); });
  return r;
}

}  // namespace eagle2

// eagle2/quantize.h over quantize/quantize_model.h and quantize/random_gguf.h.
#include "eagle2/quantize.h"

#include "api/convert.h"
#include "quantize/quantize_model.h"
#include "quantize/random_gguf.h"

namespace eagle2::api {

namespace {

eagle2::DType to_internal(QuantType t) {
  return t == QuantType::Q4_0 ? eagle2::DType::Q4_0 : eagle2::DType::Q8_0;
}

eagle2::DType to_internal(GgufDType t) {
  switch (t) {
    case GgufDType::F32:
      return eagle2::DType::F32;
    case GgufDType::F16:
      return eagle2::DType::F16;
    case GgufDType::BF16:
      return eagle2::DType::BF16;
    case GgufDType::Q8_0:
      return eagle2::DType::Q8_0;
    case GgufDType::Q4_0:
      return eagle2::DType::Q4_0;
  }
  return eagle2::DType::F32;
}

}  // namespace

const char* quant_type_name(QuantType t) {
  return eagle2::dtype_name(to_internal(t));
}

bool parse_quant_type(std::string_view text, QuantType* out) {
  if (text == "q8_0" || text == "Q8_0") {
    *out = QuantType::Q8_0;
  } else if (text == "q4_0" || text == "Q4_0") {
    *out = QuantType::Q4_0;
  } else {
    return false;
  }
  return true;
}

QuantizeSummary quantize(const std::string& in, const std::string& out, QuantType type) {
  const QuantizeResult r = quantize_model(in, out, to_internal(type));
  return {r.from_gguf, r.tensors, r.quantized, r.bytes};
}

void write_random_gguf(const std::string& path, const ModelConfig& config, QuantType type,
                       uint64_t seed, const std::string& tokenizer_model) {
  eagle2::write_random_gguf(path, api::to_internal(config), to_internal(type), seed,
                            tokenizer_model);
}

const char* gguf_dtype_name(GgufDType t) {
  return eagle2::dtype_name(to_internal(t));
}

bool parse_gguf_dtype(std::string_view text, GgufDType* out) {
  for (GgufDType t :
       {GgufDType::F32, GgufDType::F16, GgufDType::BF16, GgufDType::Q8_0, GgufDType::Q4_0}) {
    const std::string_view name = gguf_dtype_name(t);
    bool same = name.size() == text.size();
    for (size_t i = 0; same && i < name.size(); ++i)
      same = text[i] == name[i] || text[i] == name[i] - 'A' + 'a';
    if (same) {
      *out = t;
      return true;
    }
  }
  return false;
}

void write_random_gguf(const std::string& path, const ModelConfig& config, GgufDType type,
                       const std::string& tokenizer, const RandomWeights& weights) {
  eagle2::write_random_gguf(path, api::to_internal(config), to_internal(type), weights.seed,
                            tokenizer, {weights.init_std, weights.final_norm});
}

}  // namespace eagle2::api

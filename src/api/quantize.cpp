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

}  // namespace eagle2::api

// eagle2 quantize IN OUT --type q8_0|q4_0: a Hugging Face folder or a GGUF file written as a
// quantized GGUF file that llama.cpp and eagle2 both load (docs/QUANTIZATION.md).
#include <cstdio>
#include <string>

#include "commands.h"
#include "eagle2/quantize.h"

namespace eagle2::cli {

using namespace eagle2::api;

namespace {

struct QuantizeFlags {
  std::string in, out, type;
};

int run_quantize(const QuantizeFlags& f) {
  QuantType type = QuantType::Q8_0;
  parse_quant_type(f.type, &type);  // the flag's validator accepted it
  const QuantizeSummary s = quantize(f.in, f.out, type);
  // The tensors not of the type: F32 from a folder (norm weights), copied as they were from a
  // GGUF file.
  std::printf("wrote %s: %lld tensors from a %s, %lld %s, %lld %s (%.1f MiB)\n", f.out.c_str(),
              static_cast<long long>(s.tensors), s.from_gguf ? "GGUF file" : "Hugging Face folder",
              static_cast<long long>(s.quantized), quant_type_name(type),
              static_cast<long long>(s.tensors - s.quantized), s.from_gguf ? "copied" : "F32",
              static_cast<double>(s.bytes) / (1024.0 * 1024.0));
  return 0;
}

}  // namespace

Command add_quantize(CLI::App& app) {
  auto f = std::make_shared<QuantizeFlags>();
  CLI::App* cmd = app.add_subcommand(
      "quantize", "Write a model as a Q8_0 or Q4_0 GGUF file (llama.cpp loads it too)");
  cmd->add_option("IN", f->in, "A Hugging Face model folder or a llama .gguf file")->required();
  cmd->add_option("OUT", f->out, "The .gguf file to write")->required();
  cmd->add_option("--type", f->type, "q8_0 or q4_0: the type of every matrix (norms stay F32)")
      ->required()
      ->check(CLI::Validator(
          [](std::string& text) -> std::string {
            QuantType t;
            return parse_quant_type(text, &t) ? std::string()
                                              : "'" + text + "' is not one of q8_0, q4_0";
          },
          "q8_0|q4_0"));
  return {cmd, [f] { return run_quantize(*f); }};
}

}  // namespace eagle2::cli

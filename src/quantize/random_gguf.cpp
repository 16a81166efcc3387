#include "quantize/random_gguf.h"

#include "core/error.h"
#include "io/gguf_writer.h"
#include "quantize/bpe_gguf_vocab.h"
#include "quantize/hf_to_gguf.h"
#include "quantize/llama_gguf_metadata.h"
#include "quantize/quantize_model.h"
#include "tokenizer/sentencepiece_tokenizer.h"

namespace eagle2 {

void write_random_gguf(const std::string& path, const LlamaConfig& config, DType type,
                       uint64_t seed, const std::string& tokenizer, const RandomScales& scales) {
  if (type != DType::F32 && type != DType::F16 && type != DType::BF16 && type != DType::Q8_0 &&
      type != DType::Q4_0)
    fail("make-random writes GGUF as F32, F16, BF16, Q8_0 or Q4_0, not ", dtype_name(type));
  // The same checks a reader will apply, before anything is written; the parsed config also
  // derives the architecture's extras (Qwen2's q/k/v biases, Qwen3's q/k norms).
  const LlamaConfig cfg = LlamaConfig::parse(config.to_json(), path);
  check_random_scales(scales, path);
  check_gguf_output_path(path);
  const std::string arch = gguf_architecture(cfg, path);

  GgufWriter w;
  add_llama_metadata(w, cfg, "eagle2 random model (seed " + std::to_string(seed) + ")", type, path);
  if (tokenizer.ends_with(".json")) {
    add_bpe_vocab(w, bpe_gguf_vocab(tokenizer, cfg.vocab_size), cfg);
  } else {
    SpmVocabSpec vocab = SentencePieceTokenizer(tokenizer).vocab_spec();
    vocab.source = tokenizer;
    add_spm_vocab(w, fit_vocab(std::move(vocab), cfg.vocab_size, tokenizer), cfg);
  }
  std::vector<HfTensor> tensors = llama_cpp_extra_tensors(cfg);
  for (const TensorSpec& s : llama_tensor_specs(cfg, DType::F32)) {
    const int64_t cols = s.shape.back();
    tensors.push_back(
        {s.name, s.shape, [s, seed, scales, cols](int64_t first, int64_t count, float* out) {
           random_tensor_values(seed, s, scales, static_cast<size_t>(first * cols),
                                static_cast<size_t>(count * cols), out);
         }});
  }
  HfTensorCounts counts;
  const GgufWriter::Fill fill =
      add_hf_tensors(w, std::move(tensors), cfg.head_dim, gguf_interleaves_qk(arch), type, &counts);
  w.write(path, fill);
}

}  // namespace eagle2

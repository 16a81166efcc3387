#include "quantize/random_gguf.h"

#include <cmath>

#include "core/error.h"
#include "io/gguf_writer.h"
#include "model/random_model.h"
#include "quantize/hf_to_gguf.h"
#include "quantize/llama_gguf_metadata.h"
#include "quantize/quantize_model.h"
#include "tokenizer/sentencepiece_tokenizer.h"

namespace eagle2 {

void write_random_gguf(const std::string& path, const LlamaConfig& cfg, DType type, uint64_t seed,
                       const std::string& tokenizer_model, float init_std) {
  if (type != DType::Q8_0 && type != DType::Q4_0)
    fail("make-random writes GGUF as Q8_0 or Q4_0, not ", dtype_name(type));
  // The same checks a reader will apply, before anything is written.
  LlamaConfig::parse(cfg.to_json(), path);
  if (!(init_std >= 0) || !std::isfinite(init_std))
    fail(path, ": random model init_std must be a finite non-negative number, got ", init_std);
  check_gguf_output_path(path);
  SpmVocabSpec vocab = SentencePieceTokenizer(tokenizer_model).vocab_spec();
  vocab.source = tokenizer_model;
  vocab = fit_vocab(std::move(vocab), cfg.vocab_size, tokenizer_model);

  GgufWriter w;
  add_llama_metadata(w, cfg, "eagle2 random model (seed " + std::to_string(seed) + ")", type, path);
  add_spm_vocab(w, vocab, cfg);
  std::vector<HfTensor> tensors;
  for (const TensorSpec& s : llama_tensor_specs(cfg, DType::F32)) {
    const int64_t cols = s.shape.back();
    tensors.push_back(
        {s.name, s.shape, [s, seed, init_std, cols](int64_t first, int64_t count, float* out) {
           random_tensor_values(seed, s, init_std, static_cast<size_t>(first * cols),
                                static_cast<size_t>(count * cols), out);
         }});
  }
  HfTensorCounts counts;
  const GgufWriter::Fill fill = add_hf_tensors(w, std::move(tensors), cfg.head_dim, type, &counts);
  w.write(path, fill);
}

}  // namespace eagle2

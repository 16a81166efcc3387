#include "quantize/quantize_model.h"

#include <filesystem>
#include <iterator>
#include <set>

#include "core/error.h"
#include "io/gguf_writer.h"
#include "io/safetensors.h"
#include "model/checkpoint_checks.h"
#include "model/llama_config.h"
#include "model/random_model.h"
#include "quantize/bpe_gguf_vocab.h"
#include "quantize/hf_to_gguf.h"
#include "quantize/llama_gguf_metadata.h"
#include "tokenizer/sentencepiece_tokenizer.h"
#include "tokenizer/tokenizer_json.h"

namespace eagle2 {

namespace fs = std::filesystem;

namespace {

// tokenizer.ggml.* of the folder's vocabulary, sized to the config's vocab_size: a byte-level BPE
// tokenizer.json (LLaMA-3, Qwen), else the SentencePiece tokenizer.model. A tokenizer.json wins
// over a tokenizer.model (as in Hugging Face) unless it is a conversion of that same SentencePiece
// model.
void add_folder_vocab(GgufWriter& w, const std::string& dir, const LlamaConfig& cfg) {
  const std::string json = (fs::path(dir) / "tokenizer.json").string();
  const std::string model = (fs::path(dir) / "tokenizer.model").string();
  std::error_code ec;
  const bool has_model = fs::exists(model, ec);
  if (fs::exists(json, ec)) {
    bool sentencepiece = false;
    if (load_tokenizer_json(json, has_model ? &sentencepiece : nullptr) != nullptr) {
      add_bpe_vocab(w, bpe_gguf_vocab(json, cfg.vocab_size), cfg);
      return;
    }
  }
  if (!has_model)
    fail(dir,
         ": no tokenizer.model or tokenizer.json: a GGUF file carries the model's vocabulary, and "
         "llama.cpp cannot load one without it");
  SpmVocabSpec spec = SentencePieceTokenizer(model).vocab_spec();
  spec.source = model;
  add_spm_vocab(w, fit_vocab(std::move(spec), cfg.vocab_size, model), cfg);
}

QuantizeResult quantize_folder(const std::string& dir, const std::string& out, DType type) {
  const std::string config_path = (fs::path(dir) / "config.json").string();
  std::error_code ec;
  if (!fs::exists(config_path, ec))
    fail(dir, ": not a model: no config.json (give a Hugging Face model folder or a .gguf file)");
  const LlamaConfig cfg = LlamaConfig::load(config_path);
  const std::string arch = gguf_architecture(cfg, config_path);
  const TensorStore store = TensorStore::open_dir(dir);

  // The tensors the model loader binds, with the shapes it checks; a tied lm_head that is stored
  // anyway is used, as the loader uses it.
  std::vector<TensorSpec> specs = llama_tensor_specs(cfg, DType::F32);
  if (cfg.tie_word_embeddings && store.has("lm_head.weight"))
    specs.push_back({"lm_head.weight", DType::F32, {cfg.vocab_size, cfg.hidden_size}});
  std::set<std::string> used;
  std::vector<HfTensor> tensors;
  for (const TensorSpec& s : specs) {
    const TensorView& v = require_float(store.get(s.name, s.shape));
    used.insert(s.name);
    const int64_t cols = s.shape.back();
    tensors.push_back({s.name, s.shape, [&v, cols](int64_t first, int64_t count, float* dst) {
                         const size_t row_bytes = dtype_bytes(v.dtype, cols);
                         convert_to_f32(v.dtype,
                                        static_cast<const unsigned char*>(v.data) +
                                            static_cast<size_t>(first) * row_bytes,
                                        dst, static_cast<size_t>(count * cols));
                       }});
  }
  if (const TensorView* extra = first_unused_tensor(store.tensors(), used))
    fail(extra->file, ": unexpected tensor '", extra->name,
         "': not a weight of the model config.json describes");

  // general.name: the folder's own name ("code-lm" of "models/code-lm/"), as the converter uses it.
  fs::path name = fs::absolute(dir, ec).lexically_normal();
  if (name.filename().empty()) name = name.parent_path();
  GgufWriter w;
  add_llama_metadata(w, cfg, name.filename().string(), type, config_path);
  add_folder_vocab(w, dir, cfg);
  std::vector<HfTensor> extra = llama_cpp_extra_tensors(cfg);
  tensors.insert(tensors.begin(), std::make_move_iterator(extra.begin()),
                 std::make_move_iterator(extra.end()));
  HfTensorCounts counts;
  const GgufWriter::Fill fill =
      add_hf_tensors(w, std::move(tensors), cfg.head_dim, gguf_interleaves_qk(arch), type, &counts);
  w.write(out, fill);
  QuantizeResult r;
  r.tensors = counts.quantized + counts.f32;
  r.quantized = counts.quantized;
  return r;
}

}  // namespace

void check_gguf_output_path(const std::string& out) {
  if (!out.ends_with(".gguf"))
    fail(out, ": the output is a GGUF file: give a name ending in .gguf");
  std::error_code ec;
  if (fs::is_directory(out, ec)) fail(out, ": is a folder: give the .gguf file to write");
  const fs::path parent = fs::path(out).parent_path();
  if (!parent.empty() && !fs::is_directory(parent, ec))
    fail(out, ": cannot write: the folder ", parent.string(), " does not exist");
}

QuantizeResult quantize_model(const std::string& in, const std::string& out, DType type) {
  if (type != DType::Q8_0 && type != DType::Q4_0)
    fail("quantize: ", dtype_name(type), " is not a quantization type (Q8_0, Q4_0 are)");
  check_gguf_output_path(out);
  std::error_code ec;
  const fs::file_status st = fs::status(in, ec);
  if (!fs::exists(st)) fail(in, ": not found (give a Hugging Face model folder or a .gguf file)");
  QuantizeResult r =
      fs::is_directory(st) ? quantize_folder(in, out, type) : quantize_gguf_file(in, out, type);
  r.from_gguf = !fs::is_directory(st);
  r.bytes = fs::file_size(out, ec);
  return r;
}

}  // namespace eagle2

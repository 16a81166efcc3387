#include "tokenizer_load/load_tokenizer.h"

#include <filesystem>

#include "core/error.h"
#include "io/gguf.h"
#include "tokenizer/sentencepiece_tokenizer.h"
#include "tokenizer/tokenizer_json.h"

namespace eagle2 {

namespace fs = std::filesystem;

namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

std::unique_ptr<Tokenizer> load_tokenizer(const std::string& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    const std::string json = (fs::path(path) / "tokenizer.json").string();
    const std::string model = (fs::path(path) / "tokenizer.model").string();
    const bool has_model = fs::exists(model, ec);
    if (fs::exists(json, ec)) {
      bool sentencepiece = false;
      auto tok = load_tokenizer_json(json, has_model ? &sentencepiece : nullptr);
      if (tok) return tok;
      return std::make_unique<SentencePieceTokenizer>(model);  // the same tokenizer, runnable here
    }
    if (has_model) return std::make_unique<SentencePieceTokenizer>(model);
    fail(path, ": no tokenizer.json or tokenizer.model in this folder");
  }
  if (ends_with(path, ".gguf")) return gguf_tokenizer(GgufFile(path));
  if (ends_with(path, ".json")) return load_tokenizer_json(path);
  return std::make_unique<SentencePieceTokenizer>(path);
}

}  // namespace eagle2

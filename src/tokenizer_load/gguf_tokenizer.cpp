// GGUF metadata (tokenizer.ggml.*) to the data the tokenizers take, with llama.cpp's meaning of
// every key and its defaults.
#include <limits>

#include "core/error.h"
#include "io/gguf.h"
#include "tokenizer/bpe_tokenizer.h"
#include "tokenizer/spm_vocab_tokenizer.h"
#include "tokenizer/tokenizer_json.h"
#include "tokenizer_load/load_tokenizer.h"

namespace eagle2 {

namespace {

// The pre-tokenizer regexes of tokenizer.ggml.pre, as llama.cpp maps the name, each applied in
// turn ("Isolated" splits).
bool split_patterns(std::string_view pre, std::vector<std::string>* out, bool* ignore_merges,
                    bool* add_bos) {
  if (pre == "default") {
    *out = {"[\\p{P}\\$\\+<=>\\^~\\|]+", kGpt2SplitRegex, "\\p{N}+", "[0-9][0-9][0-9]"};
  } else if (pre == "gpt-2") {
    *out = {kGpt2SplitRegex};
  } else if (pre == "llama-bpe" || pre == "llama3" || pre == "llama-v3") {
    *out = {kLlama3SplitRegex};
    *ignore_merges = true;
    *add_bos = true;
  } else if (pre == "qwen2") {
    *out = {kQwen2SplitRegex};
  } else if (pre == "deepseek-coder") {
    *out = {"[\\r\\n]", "\\s?\\p{L}+", "\\s?\\p{P}+",
            "[\\x{4E00}-\\x{9FA5}\\x{0800}-\\x{4E00}\\x{AC00}-\\x{D7FF}]+", "\\p{N}"};
  } else if (pre == "starcoder") {
    *out = {"\\p{N}", kGpt2SplitRegex};
  } else {
    return false;
  }
  return true;
}

std::vector<std::string> read_tokens(const GgufFile& f) {
  const GgufValue* tokens = f.array("tokenizer.ggml.tokens", GgufType::kString, true);
  if (tokens->count == 0) f.fail_at("tokenizer.ggml.tokens is empty");
  if (tokens->count > static_cast<uint64_t>(std::numeric_limits<int32_t>::max())) {
    f.fail_at("tokenizer.ggml.tokens has too many entries");
  }
  std::vector<std::string> out;
  out.reserve(tokens->strings.size());
  for (size_t i = 0; i < tokens->strings.size(); ++i) {
    // llama.cpp names empty entries so that every id stays distinct.
    out.emplace_back(tokens->strings[i].empty() ? "[EMPTY_" + std::to_string(i) + "]"
                                                : std::string(tokens->strings[i]));
  }
  return out;
}

// A token id key: absent -> fallback; present -> must name a token.
int32_t token_id(const GgufFile& f, const char* key, int32_t fallback, size_t n) {
  const int64_t id = f.integer_or(key, fallback);
  if (id != fallback && (id < 0 || static_cast<uint64_t>(id) >= n)) {
    f.fail_at(std::string(key) + " = " + std::to_string(id) +
              " is not a token id (the vocabulary has " + std::to_string(n) + ")");
  }
  return static_cast<int32_t>(id);
}

std::vector<int32_t> token_types(const GgufFile& f, size_t n) {
  std::vector<int32_t> types;
  if (const GgufValue* t = f.array("tokenizer.ggml.token_type", GgufType::kInt32, false)) {
    if (t->count != n) {
      f.fail_at("tokenizer.ggml.token_type has " + std::to_string(t->count) + " entries for " +
                std::to_string(n) + " tokens");
    }
    types.resize(n);
    for (size_t i = 0; i < n; ++i) {
      types[i] = gguf_i32_at(*t, i);
      if (types[i] < 0 || types[i] > 6) {
        f.fail_at("tokenizer.ggml.token_type[" + std::to_string(i) +
                  "] = " + std::to_string(types[i]) + " is not a token type (0 to 6)");
      }
    }
  }
  return types;
}

std::unique_ptr<Tokenizer> spm_tokenizer(const GgufFile& f) {
  SpmVocabSpec spec;
  spec.source = f.path();
  spec.tokens = read_tokens(f);
  const size_t n = spec.tokens.size();
  if (const GgufValue* s = f.array("tokenizer.ggml.scores", GgufType::kFloat32, false)) {
    if (s->count != n) {
      f.fail_at("tokenizer.ggml.scores has " + std::to_string(s->count) + " entries for " +
                std::to_string(n) + " tokens");
    }
    spec.scores.resize(n);
    for (size_t i = 0; i < n; ++i) spec.scores[i] = gguf_f32_at(*s, i);
  }
  for (int32_t t : token_types(f, n)) spec.types.push_back(static_cast<SpmTokenType>(t));
  // llama.cpp's defaults for a SentencePiece vocabulary: <unk> 0, <s> 1, </s> 2.
  spec.bos_id = token_id(f, "tokenizer.ggml.bos_token_id", n > 1 ? 1 : -1, n);
  spec.eos_id = token_id(f, "tokenizer.ggml.eos_token_id", n > 2 ? 2 : -1, n);
  spec.unk_id = token_id(f, "tokenizer.ggml.unknown_token_id", 0, n);
  spec.add_bos = f.boolean_or("tokenizer.ggml.add_bos_token", true);
  spec.add_space_prefix = f.boolean_or("tokenizer.ggml.add_space_prefix", true);
  return std::make_unique<SpmVocabTokenizer>(std::move(spec));
}

std::unique_ptr<Tokenizer> bpe_tokenizer(const GgufFile& f) {
  BpeSpec spec;
  spec.source = f.path();
  spec.vocab = read_tokens(f);
  const size_t n = spec.vocab.size();
  const std::vector<int32_t> types = token_types(f, n);
  for (size_t i = 0; i < types.size(); ++i) {
    // Control (3), user-defined (4) and unknown (2) tokens are matched in the text as written.
    if (types[i] == 2 || types[i] == 3 || types[i] == 4) {
      spec.added.push_back(
          {static_cast<int32_t>(i), spec.vocab[i], types[i] != 4, false, false, false});
    }
  }
  const GgufValue* merges = f.array("tokenizer.ggml.merges", GgufType::kString, true);
  spec.merges.reserve(merges->strings.size());
  for (size_t r = 0; r < merges->strings.size(); ++r) {
    const std::string_view m = merges->strings[r];
    // Split at the first space after the first character, as llama.cpp does.
    const size_t space = m.size() > 1 ? m.find(' ', 1) : std::string_view::npos;
    if (space == std::string_view::npos) {
      f.fail_at("tokenizer.ggml.merges[" + std::to_string(r) +
                "] is not two tokens separated by a space");
    }
    spec.merges.emplace_back(std::string(m.substr(0, space)), std::string(m.substr(space + 1)));
  }
  const std::string pre(f.string_or("tokenizer.ggml.pre", "default"));
  bool add_bos = false;
  if (!split_patterns(pre, &spec.split_patterns, &spec.ignore_merges, &add_bos)) {
    f.fail_at(
        "tokenizer.ggml.pre '" + pre +
        "' is not supported (default, gpt-2, llama-bpe, qwen2, deepseek-coder, starcoder are)");
  }
  spec.bos_id = token_id(f, "tokenizer.ggml.bos_token_id", -1, n);
  spec.eos_id = token_id(f, "tokenizer.ggml.eos_token_id", -1, n);
  spec.unk_id = token_id(f, "tokenizer.ggml.unknown_token_id", -1, n);
  spec.add_bos = f.boolean_or("tokenizer.ggml.add_bos_token", add_bos) && spec.bos_id >= 0;
  return std::make_unique<BpeTokenizer>(std::move(spec));
}

}  // namespace

std::unique_ptr<Tokenizer> gguf_tokenizer(const GgufFile& f) {
  const std::string model(f.string("tokenizer.ggml.model"));
  if (model == "llama") return spm_tokenizer(f);
  if (model == "gpt2") return bpe_tokenizer(f);
  f.fail_at("tokenizer.ggml.model '" + model + "' is not supported (llama, gpt2 are)");
}

}  // namespace eagle2

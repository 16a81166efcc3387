// Hugging Face tokenizer.json files of byte-level BPE models (LLaMA-3, Qwen2/3, GPT-2, StarCoder,
// DeepSeek), with BOS/EOS from the tokenizer_config.json beside them. What is read, and what is
// refused with an Error naming it, is listed in docs/TOKENIZERS.md.
#pragma once

#include <memory>
#include <string>

#include "tokenizer/bpe_tokenizer.h"
#include "tokenizer/tokenizer.h"

namespace eagle2 {

// The tokenizer of `path` (a tokenizer.json). Error "<path>: ..." for a file that is not valid
// JSON, lacks a field, holds a field of the wrong type or a feature this engine does not run.
// A SentencePiece model converted to tokenizer.json (no ByteLevel pre-tokenizer: LLaMA-2,
// Mistral, Gemma) gives nullptr with *sentencepiece set, so that a folder can fall back to its
// tokenizer.model, which is the same tokenizer; pass nullptr to get an Error instead.
std::unique_ptr<Tokenizer> load_tokenizer_json(const std::string& path,
                                               bool* sentencepiece = nullptr);

// The data of the byte-level BPE tokenizer load_tokenizer_json makes of `path` (the same checks
// and Errors; a SentencePiece-style tokenizer.json is an Error): what a GGUF writer stores.
BpeSpec load_bpe_spec(const std::string& path);

// The "chat_template" of the tokenizer_config.json beside `tokenizer_json` (a string, or the one
// named "default" of a list of {"name", "template"}); "" when there is no such file or key.
std::string tokenizer_config_chat_template(const std::string& tokenizer_json);

// The pre-tokenizer regexes llama.cpp knows by a GGUF tokenizer.ggml.pre name: GPT-2's
// (ByteLevel's use_regex, "gpt-2"), LLaMA-3's ("llama-bpe": digits in groups of up to three) and
// Qwen2's ("qwen2": one digit at a time). LLaMA-3 and Qwen2 keep their tokenizer.json's
// case-insensitive group, which PCRE2 runs as written.
extern const char* const kGpt2SplitRegex;
extern const char* const kLlama3SplitRegex;
extern const char* const kQwen2SplitRegex;

}  // namespace eagle2

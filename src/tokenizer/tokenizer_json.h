// Hugging Face tokenizer.json files of byte-level BPE models (LLaMA-3, Qwen2/3, GPT-2, StarCoder,
// DeepSeek), with BOS/EOS from the tokenizer_config.json beside them. What is read, and what is
// refused with an Error naming it, is listed in docs/TOKENIZERS.md.
#pragma once

#include <memory>
#include <string>

#include "tokenizer/tokenizer.h"

namespace eagle2 {

// The tokenizer of `path` (a tokenizer.json). Error "<path>: ..." for a file that is not valid
// JSON, lacks a field, holds a field of the wrong type or a feature this engine does not run.
// A SentencePiece model converted to tokenizer.json (no ByteLevel pre-tokenizer: LLaMA-2,
// Mistral, Gemma) gives nullptr with *sentencepiece set, so that a folder can fall back to its
// tokenizer.model, which is the same tokenizer; pass nullptr to get an Error instead.
std::unique_ptr<Tokenizer> load_tokenizer_json(const std::string& path,
                                               bool* sentencepiece = nullptr);

// The GPT-2 pre-tokenizer regex (ByteLevel's use_regex, GGUF "gpt-2").
extern const char* const kGpt2SplitRegex;

}  // namespace eagle2

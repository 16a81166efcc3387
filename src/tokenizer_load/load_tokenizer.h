// Which tokenizer a model folder or file holds. This folder sits above both io/ (the GGUF reader)
// and tokenizer/ (the algorithms, which take plain data): a GGUF vocabulary is read with the one
// and run by the other, so the bridge cannot live in either peer (docs/ARCHITECTURE.md).
#pragma once

#include <memory>
#include <string>

#include "tokenizer/tokenizer.h"

namespace eagle2 {

class GgufFile;

// `path` is one of:
//  * a folder: its tokenizer.json if present (as in Hugging Face, it wins over tokenizer.model),
//    else its tokenizer.model. A tokenizer.json converted from SentencePiece (no byte-level
//    pre-tokenizer) is served by the folder's tokenizer.model, the same tokenizer.
//  * a .gguf file: the vocabulary in its metadata (tokenizer.ggml.*);
//  * a tokenizer.json (any *.json) or a SentencePiece tokenizer.model (anything else).
// Error naming the path when none applies or the file is malformed.
std::unique_ptr<Tokenizer> load_tokenizer(const std::string& path);

// The tokenizer a parsed GGUF file describes: tokenizer.ggml.model "llama" (SentencePiece scores,
// types, byte fallback) or "gpt2" (byte-level BPE with tokenizer.ggml.pre one of default, gpt-2,
// llama-bpe, qwen2, deepseek-coder, starcoder). Error "<path>: GGUF: ..." otherwise.
std::unique_ptr<Tokenizer> gguf_tokenizer(const GgufFile& file);

}  // namespace eagle2

// A byte-level BPE vocabulary (a Hugging Face tokenizer.json: LLaMA-3, Qwen2/2.5, Qwen3, GPT-2) as
// llama.cpp's convert_hf_to_gguf.py writes it into a GGUF file (its _set_vocab_gpt2 and
// gguf.SpecialVocab), so that llama.cpp and gguf_tokenizer() (tokenizer_load/) encode text as
// the tokenizer.json does.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "io/gguf_writer.h"
#include "model/llama_config.h"

namespace eagle2 {

struct BpeGgufVocab {
  std::string source;               // the tokenizer.json, for messages
  std::string pre;                  // tokenizer.ggml.pre: "llama-bpe", "qwen2" or "gpt-2"
  std::vector<std::string> tokens;  // exactly vocab_size entries
  std::vector<int32_t> types;       // llama.cpp's token types (1 normal, 3 control, 4 user-defined,
                                    // 5 unused)
  std::vector<std::string> merges;  // "left right", by rank
  int32_t bos_id = -1, eos_id = -1, unk_id = -1;  // tokenizer_config.json's; -1: not named there
  bool add_bos = false;
  std::string chat_template;  // tokenizer_config.json's; "" when none
};

// The vocabulary of `tokenizer_json` (with the tokenizer_config.json beside it) padded to
// vocab_size as the converter pads it: every id no token holds becomes "[PAD<id>]" of type unused.
// Added tokens are control tokens when special (or when they look special: "<|...|>", as the
// converter decides), user-defined otherwise. tokenizer.ggml.pre is named from the pre-tokenizer's
// regex (what the converter's hash of a test encoding identifies): LLaMA-3's is "llama-bpe",
// Qwen2's "qwen2", GPT-2's "gpt-2"; any other is an Error, as are a vocab_size below the
// tokenizer's ids and a tokenizer llama.cpp would run differently (a prefix space).
BpeGgufVocab bpe_gguf_vocab(const std::string& tokenizer_json, int64_t vocab_size);

// tokenizer.ggml.*: model "gpt2", pre, tokens, token types, merges, the BOS and EOS ids
// (tokenizer_config.json's, else those of cfg, the converter's order), the unknown id when there is
// one, add_bos_token (always written: where tokenizer.json's own rule is silent llama.cpp's default
// for llama-bpe is true, Hugging Face's false) and tokenizer.chat_template.
void add_bpe_vocab(GgufWriter& w, const BpeGgufVocab& vocab, const LlamaConfig& cfg);

}  // namespace eagle2

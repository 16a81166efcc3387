// SentencePiece-style BPE over a vocabulary given as data (GGUF "llama": tokens, scores, types),
// which libsentencepiece cannot load. Encoding follows llama.cpp's SPM tokenizer, which matches
// Hugging Face's slow LLaMA tokenizer on its tests: control, user-defined and unknown tokens are
// cut out of the text first; each text fragment gets a leading space when it starts the text or
// follows such a token (add_space_prefix), spaces become U+2581, and the fragment, split into
// characters, is merged pair by pair, the pair whose merged text is the vocabulary entry with the
// highest score first (leftmost on ties). Symbols that are not entries become byte tokens
// (<0xAB>). Decoding is SentencePiece's: U+2581 reads as a space, the text's first piece loses its
// leading space, byte tokens give their byte (invalid UTF-8: one U+FFFD per byte), control tokens
// give nothing, the unknown token " ⁇ ".
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tokenizer/added_tokens.h"
#include "tokenizer/byte_tokenizer.h"

namespace eagle2 {

// llama.cpp's token types (tokenizer.ggml.token_type).
enum class SpmTokenType : int32_t {
  kUndefined = 0,
  kNormal = 1,
  kUnknown = 2,
  kControl = 3,
  kUserDefined = 4,
  kUnused = 5,
  kByte = 6,
};

struct SpmVocabSpec {
  std::string source;  // the file, for messages
  std::vector<std::string> tokens;
  std::vector<float> scores;        // per token; empty: all 0
  std::vector<SpmTokenType> types;  // per token; empty: all normal
  int32_t bos_id = -1, eos_id = -1, unk_id = -1;
  bool add_bos = true;
  bool add_space_prefix = true;
};

class SpmVocabTokenizer : public ByteTokenizer {
 public:
  // Error "<source>: ..." for repeated tokens, malformed byte tokens, ids out of range.
  explicit SpmVocabTokenizer(SpmVocabSpec spec);

  std::string piece(int32_t id) const override;
  int32_t vocab_size() const override { return static_cast<int32_t>(tokens_.size()); }
  int32_t bos_id() const override { return bos_id_; }
  int32_t eos_id() const override { return eos_id_; }
  bool adds_bos() const override { return add_bos_; }
  const char* kind() const override { return "gguf-spm"; }

 protected:
  void encode_text(std::string_view text, std::vector<int32_t>& out) const override;

 private:
  void encode_fragment(std::string_view escaped, std::vector<int32_t>& out) const;
  void encode_segment(std::string_view segment, std::vector<int32_t>& out) const;
  void emit_symbol(std::string_view symbol, std::vector<int32_t>& out) const;
  int32_t find(std::string_view text) const;

  std::vector<std::string> tokens_;
  std::vector<float> scores_;
  std::unordered_map<std::string_view, int32_t> id_of_;  // views into tokens_
  int32_t byte_id_[256];  // <0xAB> (or the one-byte entry), -1 if neither exists
  AddedTokenMatcher specials_;
  int32_t bos_id_, eos_id_, unk_id_;
  bool add_bos_, add_space_prefix_;
  // Whether no entry holds a U+2581 right after another character: then no merge crosses the
  // start of a word and each word can be merged on its own (same result, far less work).
  bool words_independent_ = true;
};

}  // namespace eagle2

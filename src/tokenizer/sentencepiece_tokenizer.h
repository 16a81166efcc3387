// A SentencePiece tokenizer.model through libsentencepiece (LLaMA-2 / Vicuna style: BOS, byte
// fallback, the model's own normalizer). `Tokenizer::load(path)` makes one.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tokenizer/spm_vocab_tokenizer.h"
#include "tokenizer/tokenizer.h"

namespace sentencepiece {
class SentencePieceProcessor;
}

namespace eagle2 {

class SentencePieceTokenizer : public Tokenizer {
 public:
  explicit SentencePieceTokenizer(const std::string& path);
  ~SentencePieceTokenizer() override;

  std::string piece(int32_t id) const override;
  std::string token_bytes(int32_t id) const override;
  int32_t vocab_size() const override;
  int32_t bos_id() const override;
  int32_t eos_id() const override;
  bool adds_bos() const override { return bos_id() >= 0; }
  const char* kind() const override { return "sentencepiece"; }
  std::unique_ptr<TokenStream> open_stream(std::vector<int32_t> context) const override;

  // The vocabulary as data, as llama.cpp's converter reads it for a GGUF file: each piece, its
  // score, and its type (unknown, control, unused, byte, else normal), with the unknown, BOS and
  // EOS ids. User-defined pieces read as normal and add_space_prefix stays at its default, as
  // that converter has them.
  SpmVocabSpec vocab_spec() const;

 protected:
  void encode_text(std::string_view text, std::vector<int32_t>& out) const override;
  std::string decode_ids(const std::vector<int32_t>& ids) const override;

 private:
  friend class SentencePieceStream;
  std::unique_ptr<sentencepiece::SentencePieceProcessor> sp_;
  // Value of each byte-fallback piece (<0xAB>), -1 for other pieces: the streaming decoder needs
  // the raw bytes to know whether a byte run ends inside a character.
  std::vector<int16_t> byte_value_;
  // A piece that decodes to non-empty text on its own (-1 if the vocabulary has none). Decoding
  // [anchor, x...] and dropping the anchor's text gives x's text as it reads mid-sequence, without
  // SentencePiece stripping the leading space it strips at the start of a text.
  int32_t anchor_id_ = -1;
  std::string anchor_text_;
};

}  // namespace eagle2

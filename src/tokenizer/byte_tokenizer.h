// The shared decoding of tokenizers whose text is the concatenation of each token's bytes
// (byte-level BPE, SentencePiece-style GGUF vocabularies): decode() and the streaming decoder are
// one algorithm, so a stream always equals the whole decode.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tokenizer/tokenizer.h"

namespace eagle2 {

class ByteTokenizer : public Tokenizer {
 public:
  std::unique_ptr<TokenStream> open_stream(std::vector<int32_t> context) const override;
  std::string token_bytes(int32_t id) const override {
    check_id(id);
    return token_bytes_[static_cast<size_t>(id)];
  }

 protected:
  std::string decode_ids(const std::vector<int32_t>& ids) const override;

  // Filled by the derived class when it loads. What each id adds to the text ("" for control
  // tokens such as BOS and EOS).
  std::vector<std::string> token_bytes_;
  // 1 where a token that starts the text loses its leading ' ' (SentencePiece's dummy prefix);
  // empty when no token does.
  std::vector<uint8_t> strips_leading_space_;
  Utf8Replacement replacement_ = Utf8Replacement::kMaximalSubpart;
  // SentencePiece decodes each run of byte tokens on its own: where this is set, a token that is
  // not a byte token (1 here) ends the run, and an unfinished character before it shows as U+FFFD
  // even when the token adds no text. Empty: bytes join across all tokens (byte-level BPE).
  std::vector<uint8_t> byte_token_;

 private:
  friend class ByteStream;
};

}  // namespace eagle2

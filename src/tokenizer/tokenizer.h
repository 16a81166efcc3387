// Text <-> token ids. `Tokenizer` is the interface every caller uses; its implementations are
// SentencePiece through libsentencepiece (tokenizer.model: `Tokenizer::load`, LLaMA-2 / Vicuna
// style), byte-level BPE (tokenizer.json, GGUF "gpt2": bpe_tokenizer.h) and SentencePiece-style
// BPE over a GGUF "llama" vocabulary (spm_vocab_tokenizer.h). Which one a model folder or file
// holds is decided by load_tokenizer (tokenizer_load/load_tokenizer.h). See docs/TOKENIZERS.md.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/utf8.h"

namespace eagle2 {

// The state of one streamed decoding (see StreamingDecoder); each tokenizer kind has its own.
class TokenStream {
 public:
  virtual ~TokenStream() = default;
  virtual std::string push(int32_t id) = 0;
  virtual std::string finish() = 0;
};

class Tokenizer {
 public:
  // Loads a SentencePiece tokenizer.model; Error naming the path when missing or corrupt.
  static std::unique_ptr<Tokenizer> load(const std::string& path);
  virtual ~Tokenizer() = default;

  // Text must be valid UTF-8, else Error ("prompt is not valid UTF-8 at byte N"). With add_bos
  // the BOS id comes first (Error "tokenizer: the model has no BOS token" if it has none).
  std::vector<int32_t> encode(std::string_view text, bool add_bos) const;
  // Every id must be in [0, vocab_size()), else Error. Control tokens (BOS, EOS, ...) show as no
  // text; bytes that do not form UTF-8 show as U+FFFD, so the result is always valid UTF-8.
  std::string decode(const std::vector<int32_t>& ids) const;
  // The vocabulary entry of `id` as the tokenizer stores it ("▁Hello", "ĠHello", "<0x0A>", "<s>").
  virtual std::string piece(int32_t id) const = 0;
  // The bytes `id` adds to a text in its middle (after other text): "▁the" -> " the", "<0x0A>"
  // -> "\n", a byte token -> its one byte (possibly half a UTF-8 character), control tokens -> "".
  virtual std::string token_bytes(int32_t id) const = 0;

  virtual int32_t vocab_size() const = 0;
  virtual int32_t bos_id() const = 0;  // -1 when the model has none
  virtual int32_t eos_id() const = 0;  // -1 when the model has none
  // Whether the model's own files ask for BOS before a prompt (tokenizer_config.json's
  // add_bos_token, the post-processor's template, GGUF's tokenizer.ggml.add_bos_token).
  virtual bool adds_bos() const = 0;
  // "sentencepiece", "bpe" or "gguf-spm" (for messages and `info`).
  virtual const char* kind() const = 0;

  // A fresh stream for StreamingDecoder, `context` being ids already shown.
  virtual std::unique_ptr<TokenStream> open_stream(std::vector<int32_t> context) const = 0;

  // Error "tokenizer: token id N is out of range [0, V)" unless 0 <= id < vocab_size().
  void check_id(int32_t id) const;

 protected:
  virtual void encode_text(std::string_view text, std::vector<int32_t>& out) const = 0;
  virtual std::string decode_ids(const std::vector<int32_t>& ids) const = 0;
};

// Turns a stream of generated ids into text chunks, never emitting half a UTF-8 character, and
// producing exactly what decode() of the whole sequence does: the concatenation of push() results
// plus finish() equals decode(context + ids pushed) without its first decode(context).size()
// bytes. (One exception: a context ending inside a character, which decode(context) shows as
// U+FFFD; the stream then emits that whole character once later ids complete it.)
// Each push does a constant amount of work (no re-decoding of the history once text exists);
// bytes of an unfinished character are held back until it is complete, or can no longer be (then
// U+FFFD, exactly as decode() shows them). finish() flushes held bytes the same way.
class StreamingDecoder {
 public:
  // `context` = ids already shown (e.g. the prompt), so the first piece gets the right spacing.
  StreamingDecoder(const Tokenizer& tokenizer, std::vector<int32_t> context = {});
  std::string push(int32_t id);  // the newly completed text (possibly empty)
  std::string finish();          // whatever is left (incomplete bytes as U+FFFD)

 private:
  const Tokenizer& tok_;
  std::unique_ptr<TokenStream> stream_;
};

}  // namespace eagle2

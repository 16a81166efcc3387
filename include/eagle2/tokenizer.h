// Text <-> token ids: SentencePiece tokenizer.model (LLaMA-2 / Vicuna style: BOS, byte fallback),
// byte-level BPE tokenizer.json (LLaMA-3, Qwen), and GGUF vocabularies; and the streaming
// detokenizer that prints generated text as it comes. Token ids are int32_t in
// [0, vocab_size()). Errors, ownership and threads: eagle2/error.h (one thread at a time per
// Tokenizer and per TextStream).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace eagle2::api {

class Tokenizer {
 public:
  // A SentencePiece tokenizer.model. Error naming the path when it is missing or not a tokenizer.
  static Tokenizer load(const std::string& path);
  // Whatever a model folder or file holds: a folder (tokenizer.json wins over tokenizer.model, as
  // in Hugging Face), a tokenizer.json, a .gguf file's vocabulary, or a tokenizer.model.
  static Tokenizer open(const std::string& path);
  ~Tokenizer();
  Tokenizer(Tokenizer&&) noexcept;
  Tokenizer& operator=(Tokenizer&&) noexcept;

  // Text must be valid UTF-8, else Error ("prompt is not valid UTF-8 at byte N").
  std::vector<int32_t> encode(std::string_view text, bool add_bos) const;
  std::string decode(const std::vector<int32_t>& ids) const;
  std::string piece(int32_t id) const;  // the token's piece as stored ("▁the", "<0x0A>")
  // The bytes the token adds to a text in its middle: "▁the" -> " the", "<0x0A>" -> "\n"; a
  // byte-fallback token -> its one byte (possibly part of a UTF-8 character); control -> "".
  std::string token_bytes(int32_t id) const;
  int32_t vocab_size() const;
  int32_t bos_id() const;
  int32_t eos_id() const;
  bool adds_bos() const;  // whether the model's tokenizer config asks for BOS before a prompt

  struct Impl;  // the library's side of the handle (src/api)
  explicit Tokenizer(std::unique_ptr<Impl> impl);
  Impl& impl() const { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

// Generated ids -> text chunks, never half a UTF-8 character, spaced as decode() of the whole
// sequence would be: the push() results plus finish() equal decode(context + ids) without the
// text of decode(context). The tokenizer must outlive the stream.
class TextStream {
 public:
  // `context`: the ids already shown (e.g. the prompt), so the first piece gets the right spacing.
  explicit TextStream(const Tokenizer& tokenizer, std::vector<int32_t> context = {});
  ~TextStream();
  TextStream(TextStream&&) noexcept;
  TextStream& operator=(TextStream&&) noexcept;

  std::string push(int32_t id);  // the newly completed text (possibly empty)
  std::string finish();          // whatever is left (incomplete bytes as U+FFFD)

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace eagle2::api

// Text <-> token ids through SentencePiece (LLaMA-2 / Vicuna style: BOS, byte fallback).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace sentencepiece {
class SentencePieceProcessor;
}

namespace eagle2 {

class Tokenizer {
 public:
  // Loads a SentencePiece tokenizer.model; Error naming the path when missing or corrupt.
  static std::unique_ptr<Tokenizer> load(const std::string& path);
  ~Tokenizer();

  // Text must be valid UTF-8, else Error ("prompt is not valid UTF-8 at byte N").
  std::vector<int32_t> encode(std::string_view text, bool add_bos) const;
  std::string decode(const std::vector<int32_t>& ids) const;
  std::string piece(int32_t id) const;

  int32_t vocab_size() const;
  int32_t bos_id() const;
  int32_t eos_id() const;

 private:
  Tokenizer() = default;
  std::unique_ptr<sentencepiece::SentencePieceProcessor> sp_;
};

// Turns a stream of generated ids into text chunks, never emitting half a UTF-8 character and
// handling SentencePiece's leading-space rule the way decode() of the whole sequence does:
// the concatenation of push() results plus finish() equals decode(all ids pushed).
class StreamingDecoder {
 public:
  // `context` = ids already shown (e.g. the prompt), so the first piece gets the right spacing.
  StreamingDecoder(const Tokenizer& tokenizer, std::vector<int32_t> context = {});
  std::string push(int32_t id);  // the newly completed text (possibly empty)
  std::string finish();          // whatever is left (incomplete bytes as U+FFFD)

 private:
  const Tokenizer& tok_;
  std::vector<int32_t> ids_;
  size_t context_size_;
  std::string emitted_;  // bytes of decode(ids_) already returned, relative to the context's text
  std::string context_text_;
};

// Index of the first byte where `s` stops being valid UTF-8, or npos if all of it is valid.
size_t first_invalid_utf8(std::string_view s);
// Length of the longest prefix of s that ends on a complete UTF-8 character boundary.
size_t complete_utf8_prefix(std::string_view s);

}  // namespace eagle2

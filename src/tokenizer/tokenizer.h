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
  friend class StreamingDecoder;
  Tokenizer() = default;
  void check_id(int32_t id) const;
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

// Turns a stream of generated ids into text chunks, never emitting half a UTF-8 character and
// handling SentencePiece's leading-space rule the way decode() of the whole sequence does:
// the concatenation of push() results plus finish() equals
// decode(context + ids pushed) without its first decode(context).size() bytes.
// (One exception: a context ending inside a byte-fallback character, which decode(context) shows as
// U+FFFD; the stream then emits that whole character once later ids complete it.)
// Once any text exists, each push decodes a window of at most 5 ids, not the history; byte-fallback ids of an unfinished
// character are held back until it is complete (or can no longer be, then U+FFFD per byte, exactly
// as decode() does). finish() flushes held bytes the same way.
class StreamingDecoder {
 public:
  // `context` = ids already shown (e.g. the prompt), so the first piece gets the right spacing.
  StreamingDecoder(const Tokenizer& tokenizer, std::vector<int32_t> context = {});
  std::string push(int32_t id);  // the newly completed text (possibly empty)
  std::string finish();          // whatever is left (incomplete bytes as U+FFFD)

 private:
  // Until any text exists, `pending_` is the whole history (context included), because whether
  // SentencePiece strips a leading space depends on everything decoded so far. Once text exists
  // (`anchored_`), `pending_` holds only the byte-fallback ids of a character still incomplete
  // (at most 3), and each push decodes [anchor, pending..., id]: a constant amount of work.
  std::string drain(bool flush);
  const Tokenizer& tok_;
  std::vector<int32_t> pending_;
  bool anchored_ = false;
  size_t emitted_ = 0;  // only for a vocabulary without an anchor piece (see drain)
};

// Index of the first byte where `s` stops being valid UTF-8, or npos if all of it is valid.
// Strict (RFC 3629): overlong forms, surrogates, code points above U+10FFFF and truncated
// sequences are invalid; the index is that of the offending sequence's first byte.
size_t first_invalid_utf8(std::string_view s);
// Length of the longest prefix of s that ends on a complete UTF-8 character boundary: s minus a
// trailing sequence that is the strict beginning of a valid character still missing bytes. Bytes
// that are already invalid count as complete (a decoder turns them into U+FFFD whatever follows).
size_t complete_utf8_prefix(std::string_view s);

}  // namespace eagle2

#include "tokenizer/byte_tokenizer.h"

#include <string_view>

namespace eagle2 {

// Bytes are appended as ids arrive; what ends on a complete character (or on bytes that can no
// longer become one) is emitted, the unfinished tail (at most 3 bytes) is held. Emitting a prefix
// early never changes how it reads: both replacement rules decide a byte from the bytes after it
// only up to the end of its own sequence, and the held tail starts a sequence.
class ByteStream : public TokenStream {
 public:
  explicit ByteStream(const ByteTokenizer& tok) : tok_(tok) {}

  std::string push(int32_t id) override {
    std::string out;
    if (!tok_.byte_token_.empty() && !tok_.byte_token_[id] && !held_.empty()) out = finish();
    std::string_view bytes = tok_.token_bytes_[id];
    if (!started_ && !bytes.empty()) {
      started_ = true;
      if (!tok_.strips_leading_space_.empty() && tok_.strips_leading_space_[id] &&
          bytes[0] == ' ') {
        bytes.remove_prefix(1);
      }
    }
    held_.append(bytes);
    const size_t done = complete_utf8_prefix(held_);
    out += utf8_lossy(std::string_view(held_).substr(0, done), tok_.replacement_);
    held_.erase(0, done);
    return out;
  }

  std::string finish() override {
    std::string out = utf8_lossy(held_, tok_.replacement_);
    held_.clear();
    return out;
  }

 private:
  const ByteTokenizer& tok_;
  bool started_ = false;  // whether any token has added bytes yet
  std::string held_;
};

std::unique_ptr<TokenStream> ByteTokenizer::open_stream(std::vector<int32_t> context) const {
  auto s = std::make_unique<ByteStream>(*this);
  // The context was shown already: consume its text; an unfinished character at its end stays
  // held and is emitted whole once later ids complete it.
  for (int32_t id : context) s->push(id);
  return s;
}

std::string ByteTokenizer::decode_ids(const std::vector<int32_t>& ids) const {
  ByteStream s(*this);
  std::string text;
  for (int32_t id : ids) text += s.push(id);
  return text + s.finish();
}

}  // namespace eagle2

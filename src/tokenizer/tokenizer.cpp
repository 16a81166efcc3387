#include "tokenizer/tokenizer.h"

#include "core/error.h"

namespace eagle2 {

void Tokenizer::check_id(int32_t id) const {
  if (id < 0 || id >= vocab_size()) {
    fail("tokenizer: token id ", id, " is out of range [0, ", vocab_size(), ")");
  }
}

std::vector<int32_t> Tokenizer::encode(std::string_view text, bool add_bos) const {
  if (size_t bad = first_invalid_utf8(text); bad != std::string_view::npos) {
    fail("prompt is not valid UTF-8 at byte ", bad);
  }
  std::vector<int32_t> out;
  if (add_bos) {
    if (bos_id() < 0) fail("tokenizer: the model has no BOS token");
    out.push_back(bos_id());
  }
  encode_text(text, out);
  return out;
}

std::string Tokenizer::decode(const std::vector<int32_t>& ids) const {
  for (int32_t id : ids) check_id(id);
  return decode_ids(ids);
}

StreamingDecoder::StreamingDecoder(const Tokenizer& tokenizer, std::vector<int32_t> context)
    : tok_(tokenizer) {
  for (int32_t id : context) tok_.check_id(id);
  stream_ = tok_.open_stream(std::move(context));
}

std::string StreamingDecoder::push(int32_t id) {
  tok_.check_id(id);
  return stream_->push(id);
}

std::string StreamingDecoder::finish() {
  return stream_->finish();
}

}  // namespace eagle2

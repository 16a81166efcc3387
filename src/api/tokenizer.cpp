// eagle2/tokenizer.h over tokenizer/tokenizer.h.
#include "eagle2/tokenizer.h"

#include "api/handles.h"
#include "tokenizer_load/load_tokenizer.h"

namespace eagle2::api {

Tokenizer Tokenizer::load(const std::string& path) {
  auto impl = std::make_unique<Impl>();
  impl->tokenizer = eagle2::Tokenizer::load(path);
  return Tokenizer(std::move(impl));
}

Tokenizer Tokenizer::open(const std::string& path) {
  auto impl = std::make_unique<Impl>();
  impl->tokenizer = load_tokenizer(path);
  return Tokenizer(std::move(impl));
}

Tokenizer::Tokenizer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Tokenizer::~Tokenizer() = default;
Tokenizer::Tokenizer(Tokenizer&&) noexcept = default;
Tokenizer& Tokenizer::operator=(Tokenizer&&) noexcept = default;

std::vector<int32_t> Tokenizer::encode(std::string_view text, bool add_bos) const {
  return impl_->tokenizer->encode(text, add_bos);
}
std::string Tokenizer::decode(const std::vector<int32_t>& ids) const {
  return impl_->tokenizer->decode(ids);
}
std::string Tokenizer::piece(int32_t id) const {
  return impl_->tokenizer->piece(id);
}
std::string Tokenizer::token_bytes(int32_t id) const {
  return impl_->tokenizer->token_bytes(id);
}
int32_t Tokenizer::vocab_size() const {
  return impl_->tokenizer->vocab_size();
}
int32_t Tokenizer::bos_id() const {
  return impl_->tokenizer->bos_id();
}
int32_t Tokenizer::eos_id() const {
  return impl_->tokenizer->eos_id();
}
bool Tokenizer::adds_bos() const {
  return impl_->tokenizer->adds_bos();
}

TextStream::TextStream(const Tokenizer& tokenizer, std::vector<int32_t> context)
    : impl_(std::make_unique<Impl>(
          Impl{StreamingDecoder(*tokenizer.impl().tokenizer, std::move(context))})) {}
TextStream::~TextStream() = default;
TextStream::TextStream(TextStream&&) noexcept = default;
TextStream& TextStream::operator=(TextStream&&) noexcept = default;

std::string TextStream::push(int32_t id) {
  return impl_->decoder.push(id);
}
std::string TextStream::finish() {
  return impl_->decoder.finish();
}

}  // namespace eagle2::api

#include "tokenizer/sentencepiece_tokenizer.h"

#include <sentencepiece_processor.h>

#include <algorithm>
#include <cstdio>

#include "core/error.h"
#include "core/regular_file.h"

namespace eagle2 {

namespace {
const char kSpaceSymbol[] = "\xE2\x96\x81";  // U+2581, SentencePiece's visible space
}  // namespace

std::unique_ptr<Tokenizer> Tokenizer::load(const std::string& path) {
  return std::make_unique<SentencePieceTokenizer>(path);
}

SentencePieceTokenizer::SentencePieceTokenizer(const std::string& path) {
  // Read the file ourselves, through the shared reader: SentencePiece's own loader would block on
  // a FIFO and read /dev/zero without end, and its messages for a missing file are vaguer than
  // errno. The size is checked before anything is allocated.
  const std::string bytes =
      read_regular_file(path, read_limit::kTokenizerModel, "a tokenizer.model");
  if (bytes.empty()) fail("tokenizer: ", path, " is not a SentencePiece model (empty file)");

  sp_ = std::make_unique<sentencepiece::SentencePieceProcessor>();
  const auto status = sp_->LoadFromSerializedProto(bytes);
  if (!status.ok()) {
    // SentencePiece reports a protobuf parse failure as a source location; say what it means.
    const std::string why =
        std::string(status.message()).find("ParseFromArray") != std::string::npos
            ? "cannot parse it: truncated, or not a tokenizer.model"
            : status.message();
    fail("tokenizer: ", path, " is not a valid SentencePiece model (", why, ")");
  }
  const int n = sp_->GetPieceSize();
  if (n <= 0) fail("tokenizer: ", path, " is not a valid SentencePiece model (no pieces)");

  byte_value_.assign(n, -1);
  for (int id = 0; id < n; ++id) {
    if (!sp_->IsByte(id)) continue;
    const std::string& p = sp_->IdToPiece(id);  // "<0xAB>"
    unsigned v = 0;
    if (p.size() == 6 && std::sscanf(p.c_str(), "<0x%2X>", &v) == 1 && v < 256) {
      byte_value_[id] = static_cast<int16_t>(v);
    }
  }

  for (int id = 0; id < n && anchor_id_ < 0; ++id) {
    if (sp_->IsControl(id) || sp_->IsUnknown(id) || sp_->IsUnused(id) || sp_->IsByte(id)) continue;
    const std::string& p = sp_->IdToPiece(id);
    if (p.empty() || p.rfind(kSpaceSymbol, 0) == 0) continue;
    std::string one, two;
    if (!sp_->Decode(std::vector<int>{id}, &one).ok() || one.empty()) continue;
    // Only a piece that concatenates plainly works as an anchor (no normalizer rewriting it).
    if (!sp_->Decode(std::vector<int>{id, id}, &two).ok() || two != one + one) continue;
    anchor_id_ = id;
    anchor_text_ = one;
  }
}

SentencePieceTokenizer::~SentencePieceTokenizer() = default;

SpmVocabSpec SentencePieceTokenizer::vocab_spec() const {
  SpmVocabSpec spec;
  const int n = sp_->GetPieceSize();
  spec.tokens.reserve(static_cast<size_t>(n));
  spec.scores.reserve(static_cast<size_t>(n));
  spec.types.reserve(static_cast<size_t>(n));
  for (int id = 0; id < n; ++id) {
    spec.tokens.push_back(sp_->IdToPiece(id));
    spec.scores.push_back(sp_->GetScore(id));
    SpmTokenType type = SpmTokenType::kNormal;
    if (sp_->IsUnknown(id))
      type = SpmTokenType::kUnknown;
    else if (sp_->IsControl(id))
      type = SpmTokenType::kControl;
    else if (sp_->IsUnused(id))
      type = SpmTokenType::kUnused;
    else if (sp_->IsByte(id))
      type = SpmTokenType::kByte;
    spec.types.push_back(type);
  }
  spec.unk_id = sp_->unk_id();
  spec.bos_id = sp_->bos_id();
  spec.eos_id = sp_->eos_id();
  return spec;
}

void SentencePieceTokenizer::encode_text(std::string_view text, std::vector<int32_t>& out) const {
  std::vector<int> ids;
  const auto status = sp_->Encode(text, &ids);
  if (!status.ok()) fail("tokenizer: cannot encode text: ", status.message());
  out.insert(out.end(), ids.begin(), ids.end());
}

std::string SentencePieceTokenizer::decode_ids(const std::vector<int32_t>& ids) const {
  std::string text;
  const auto status = sp_->Decode(std::vector<int>(ids.begin(), ids.end()), &text);
  if (!status.ok()) fail("tokenizer: cannot decode: ", status.message());
  return text;
}

std::string SentencePieceTokenizer::piece(int32_t id) const {
  check_id(id);
  return sp_->IdToPiece(id);
}

std::string SentencePieceTokenizer::token_bytes(int32_t id) const {
  check_id(id);
  if (byte_value_[static_cast<size_t>(id)] >= 0)
    return std::string(1, static_cast<char>(byte_value_[static_cast<size_t>(id)]));
  if (sp_->IsControl(id) || sp_->IsUnused(id)) return {};
  // Mid-text, as the streaming decoder reads it: after the anchor, whose text is dropped, so
  // that SentencePiece keeps the leading space it strips at the start of a text.
  if (anchor_id_ < 0) return decode({id});
  // decode([anchor, id]) starts with the anchor's text (as the stream relies on); should a
  // normalizer ever make it not, the token's text alone is the best left.
  const std::string text = decode({anchor_id_, id});
  if (!text.starts_with(anchor_text_)) return decode({id});
  return text.substr(anchor_text_.size());
}

int32_t SentencePieceTokenizer::vocab_size() const {
  return sp_->GetPieceSize();
}
int32_t SentencePieceTokenizer::bos_id() const {
  return sp_->bos_id();
}
int32_t SentencePieceTokenizer::eos_id() const {
  return sp_->eos_id();
}

// Handles SentencePiece's leading-space rule the way decode() of the whole sequence does.
// Until any text exists, `pending_` is the whole history (context included), because whether
// SentencePiece strips a leading space depends on everything decoded so far. Once text exists
// (`anchored_`), `pending_` holds only the byte-fallback ids of a character still incomplete
// (at most 3), and each push decodes [anchor, pending..., id]: a constant amount of work.
class SentencePieceStream : public TokenStream {
 public:
  SentencePieceStream(const SentencePieceTokenizer& tok, std::vector<int32_t> context)
      : tok_(tok), pending_(std::move(context)) {
    // The context was shown already: consume its text without returning it. Its unfinished
    // trailing bytes (if any) stay pending, so the character they start is emitted once complete.
    drain(false);
  }
  std::string push(int32_t id) override {
    pending_.push_back(id);
    return drain(false);
  }
  std::string finish() override { return drain(true); }

 private:
  std::string drain(bool flush);
  const SentencePieceTokenizer& tok_;
  std::vector<int32_t> pending_;
  bool anchored_ = false;
  size_t emitted_ = 0;  // only for a vocabulary without an anchor piece (see drain)
};

std::unique_ptr<TokenStream> SentencePieceTokenizer::open_stream(
    std::vector<int32_t> context) const {
  return std::make_unique<SentencePieceStream>(*this, std::move(context));
}

std::string SentencePieceStream::drain(bool flush) {
  // How many trailing byte-fallback ids form a character that more bytes could still complete.
  // SentencePiece decodes a byte run character by character from its start and a character never
  // spans a lead byte, so everything before the unfinished one decodes the same way now as it
  // will in the full sequence.
  size_t held = 0;
  if (!flush) {
    std::string tail;  // the last <= 3 raw bytes of the trailing byte run, in order
    size_t run = 0;
    while (run < pending_.size() && run < 3) {
      const int16_t b = tok_.byte_value_[pending_[pending_.size() - 1 - run]];
      if (b < 0) break;
      tail.insert(tail.begin(), static_cast<char>(b));
      ++run;
    }
    held = tail.size() - complete_utf8_prefix(tail);
  }
  const size_t stable = pending_.size() - held;

  if (anchored_) {
    std::vector<int32_t> window;
    window.reserve(stable + 1);
    window.push_back(tok_.anchor_id_);
    window.insert(window.end(), pending_.begin(), pending_.begin() + stable);
    std::string text = tok_.decode(window);
    pending_.erase(pending_.begin(), pending_.begin() + stable);
    // decode([anchor] + x) starts with the anchor's text by the anchor's choice (plain piece).
    return text.substr(tok_.anchor_text_.size());
  }

  // No text yet: the whole history decides SentencePiece's leading-space stripping.
  std::string text = tok_.decode(std::vector<int32_t>(pending_.begin(), pending_.begin() + stable));
  if (tok_.anchor_id_ < 0) {
    // A vocabulary without a plain piece cannot use the window trick: keep decoding the whole
    // history (quadratic, but only for exotic models) and return what is new.
    std::string out = text.size() > emitted_ ? text.substr(emitted_) : std::string();
    emitted_ = std::max(emitted_, text.size());
    return out;
  }
  if (!text.empty()) {
    anchored_ = true;
    pending_.erase(pending_.begin(), pending_.begin() + stable);
  }
  return text;
}

}  // namespace eagle2

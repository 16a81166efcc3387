#include "tokenizer/tokenizer.h"

#include <sentencepiece_processor.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "core/error.h"
#include "core/regular_file.h"

namespace eagle2 {

namespace {

// Bytes a character with this lead byte occupies, or 0 if it cannot start a character.
// C0, C1 (always overlong) and F5..FF (beyond U+10FFFF) are never leads.
int utf8_length(unsigned char lead) {
  if (lead < 0x80) return 1;
  if (lead >= 0xC2 && lead <= 0xDF) return 2;
  if (lead >= 0xE0 && lead <= 0xEF) return 3;
  if (lead >= 0xF0 && lead <= 0xF4) return 4;
  return 0;
}

// Whether `b` may follow `lead` as the continuation byte at offset `k` (1-based) of a character.
// The second byte's narrower ranges are what rule out overlong forms, surrogates and > U+10FFFF.
bool valid_continuation(unsigned char lead, int k, unsigned char b) {
  if (k == 1) {
    switch (lead) {
      case 0xE0: return b >= 0xA0 && b <= 0xBF;
      case 0xED: return b >= 0x80 && b <= 0x9F;
      case 0xF0: return b >= 0x90 && b <= 0xBF;
      case 0xF4: return b >= 0x80 && b <= 0x8F;
      default: break;
    }
  }
  return b >= 0x80 && b <= 0xBF;
}

bool is_continuation(unsigned char b) { return (b & 0xC0) == 0x80; }

const char kSpaceSymbol[] = "\xE2\x96\x81";  // U+2581, SentencePiece's visible space

}  // namespace

size_t first_invalid_utf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const auto lead = static_cast<unsigned char>(s[i]);
    const int len = utf8_length(lead);
    if (len == 0 || i + len > s.size()) return i;
    for (int k = 1; k < len; ++k) {
      if (!valid_continuation(lead, k, static_cast<unsigned char>(s[i + k]))) return i;
    }
    i += len;
  }
  return std::string_view::npos;
}

size_t complete_utf8_prefix(std::string_view s) {
  // A character is at most 4 bytes, so an unfinished one starts within the last 3.
  const size_t n = s.size();
  size_t j = n;
  for (size_t back = 1; back <= 3 && back <= n; ++back) {
    if (!is_continuation(static_cast<unsigned char>(s[n - back]))) {
      j = n - back;
      break;
    }
  }
  if (j == n) return n;
  const auto lead = static_cast<unsigned char>(s[j]);
  const int len = utf8_length(lead);
  if (len <= 1 || n - j >= static_cast<size_t>(len)) return n;
  for (size_t k = 1; j + k < n; ++k) {
    if (!valid_continuation(lead, static_cast<int>(k), static_cast<unsigned char>(s[j + k])))
      return n;
  }
  return j;
}

std::unique_ptr<Tokenizer> Tokenizer::load(const std::string& path) {
  // Read the file ourselves, through the shared reader: SentencePiece's own loader would block on
  // a FIFO and read /dev/zero without end, and its messages for a missing file are vaguer than
  // errno. The size is checked before anything is allocated.
  const std::string bytes = read_regular_file(path, read_limit::kTokenizerModel, "a tokenizer.model");
  if (bytes.empty()) fail("tokenizer: ", path, " is not a SentencePiece model (empty file)");

  std::unique_ptr<Tokenizer> tok(new Tokenizer());
  tok->sp_ = std::make_unique<sentencepiece::SentencePieceProcessor>();
  const auto status = tok->sp_->LoadFromSerializedProto(bytes);
  if (!status.ok()) {
    // SentencePiece reports a protobuf parse failure as a source location; say what it means.
    const std::string why = std::string(status.message()).find("ParseFromArray") != std::string::npos
                                ? "cannot parse it: truncated, or not a tokenizer.model"
                                : status.message();
    fail("tokenizer: ", path, " is not a valid SentencePiece model (", why, ")");
  }
  const int n = tok->sp_->GetPieceSize();
  if (n <= 0) fail("tokenizer: ", path, " is not a valid SentencePiece model (no pieces)");

  tok->byte_value_.assign(n, -1);
  for (int id = 0; id < n; ++id) {
    if (!tok->sp_->IsByte(id)) continue;
    const std::string& p = tok->sp_->IdToPiece(id);  // "<0xAB>"
    unsigned v = 0;
    if (p.size() == 6 && std::sscanf(p.c_str(), "<0x%2X>", &v) == 1 && v < 256) {
      tok->byte_value_[id] = static_cast<int16_t>(v);
    }
  }

  for (int id = 0; id < n && tok->anchor_id_ < 0; ++id) {
    if (tok->sp_->IsControl(id) || tok->sp_->IsUnknown(id) || tok->sp_->IsUnused(id) ||
        tok->sp_->IsByte(id))
      continue;
    const std::string& p = tok->sp_->IdToPiece(id);
    if (p.empty() || p.rfind(kSpaceSymbol, 0) == 0) continue;
    std::string one, two;
    if (!tok->sp_->Decode(std::vector<int>{id}, &one).ok() || one.empty()) continue;
    // Only a piece that concatenates plainly works as an anchor (no normalizer rewriting it).
    if (!tok->sp_->Decode(std::vector<int>{id, id}, &two).ok() || two != one + one) continue;
    tok->anchor_id_ = id;
    tok->anchor_text_ = one;
  }
  return tok;
}

Tokenizer::~Tokenizer() = default;

void Tokenizer::check_id(int32_t id) const {
  if (id < 0 || id >= vocab_size()) {
    fail("tokenizer: token id ", id, " is out of range [0, ", vocab_size(), ")");
  }
}

std::vector<int32_t> Tokenizer::encode(std::string_view text, bool add_bos) const {
  if (size_t bad = first_invalid_utf8(text); bad != std::string_view::npos) {
    fail("prompt is not valid UTF-8 at byte ", bad);
  }
  std::vector<int> ids;
  const auto status = sp_->Encode(text, &ids);
  if (!status.ok()) fail("tokenizer: cannot encode text: ", status.message());
  std::vector<int32_t> out;
  out.reserve(ids.size() + 1);
  if (add_bos) {
    if (bos_id() < 0) fail("tokenizer: the model has no BOS token");
    out.push_back(bos_id());
  }
  out.insert(out.end(), ids.begin(), ids.end());
  return out;
}

std::string Tokenizer::decode(const std::vector<int32_t>& ids) const {
  for (int32_t id : ids) check_id(id);
  std::string text;
  const auto status = sp_->Decode(std::vector<int>(ids.begin(), ids.end()), &text);
  if (!status.ok()) fail("tokenizer: cannot decode: ", status.message());
  return text;
}

std::string Tokenizer::piece(int32_t id) const {
  check_id(id);
  return sp_->IdToPiece(id);
}

int32_t Tokenizer::vocab_size() const { return sp_->GetPieceSize(); }
int32_t Tokenizer::bos_id() const { return sp_->bos_id(); }
int32_t Tokenizer::eos_id() const { return sp_->eos_id(); }

StreamingDecoder::StreamingDecoder(const Tokenizer& tokenizer, std::vector<int32_t> context)
    : tok_(tokenizer), pending_(std::move(context)) {
  for (int32_t id : pending_) tok_.check_id(id);
  // The context was shown already: consume its text without returning it. Its unfinished
  // trailing bytes (if any) stay pending, so the character they start is emitted once complete.
  drain(false);
}

std::string StreamingDecoder::push(int32_t id) {
  tok_.check_id(id);
  pending_.push_back(id);
  return drain(false);
}

std::string StreamingDecoder::finish() { return drain(true); }

std::string StreamingDecoder::drain(bool flush) {
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

#include "tokenizer/spm_vocab_tokenizer.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/error.h"

namespace eagle2 {

namespace {

constexpr std::string_view kSpace = "\xE2\x96\x81";  // U+2581, SentencePiece's visible space

// The value of a "<0xAB>" token, or -1.
int byte_value(const std::string& t) {
  unsigned v = 0;
  char end = 0;
  if (t.size() != 6 || std::sscanf(t.c_str(), "<0x%2X%c", &v, &end) != 2 || end != '>') return -1;
  return static_cast<int>(v);
}

std::string replace_spaces(std::string_view text, std::string_view with) {
  std::string out;
  out.reserve(text.size() + text.size() / 4);
  for (char c : text) {
    if (c == ' ') {
      out.append(with);
    } else {
      out += c;
    }
  }
  return out;
}

std::string unescape_spaces(std::string_view t) {
  std::string out;
  for (size_t k = 0; k < t.size();) {
    if (t.compare(k, kSpace.size(), kSpace) == 0) {
      out += ' ';
      k += kSpace.size();
    } else {
      out += t[k++];
    }
  }
  return out;
}

// A possible merge of the symbol at `left` with the next one.
struct Bigram {
  float score;
  int32_t left, right;
  uint32_t size;  // bytes of the merged text: tells a stale bigram (either symbol grew) apart
};
// std::push_heap keeps the largest first: the highest score, then the leftmost.
bool worse(const Bigram& a, const Bigram& b) {
  return a.score != b.score ? a.score < b.score : a.left > b.left;
}

}  // namespace

SpmVocabTokenizer::SpmVocabTokenizer(SpmVocabSpec spec)
    : tokens_(std::move(spec.tokens)),
      bos_id_(spec.bos_id),
      eos_id_(spec.eos_id),
      unk_id_(spec.unk_id),
      add_bos_(spec.add_bos),
      add_space_prefix_(spec.add_space_prefix) {
  const std::string& src = spec.source;
  const size_t n = tokens_.size();
  if (n == 0) fail(src, ": the vocabulary is empty");
  if (!spec.scores.empty() && spec.scores.size() != n)
    fail(src, ": ", spec.scores.size(), " scores for ", n, " tokens");
  if (!spec.types.empty() && spec.types.size() != n)
    fail(src, ": ", spec.types.size(), " token types for ", n, " tokens");
  scores_ = spec.scores.empty() ? std::vector<float>(n, 0.0f) : std::move(spec.scores);
  for (size_t i = 0; i < n; ++i) {
    // The merge order compares scores: a NaN would leave it undefined.
    if (!std::isfinite(scores_[i]))
      fail(src, ": the score of token ", i, " is not a finite number");
  }
  std::vector<SpmTokenType> types = spec.types.empty()
                                        ? std::vector<SpmTokenType>(n, SpmTokenType::kNormal)
                                        : std::move(spec.types);
  for (int32_t id : {bos_id_, eos_id_, unk_id_}) {
    if (id >= static_cast<int32_t>(n))
      fail(src, ": special token id ", id, " is out of range [0, ", n, ")");
  }

  std::fill(std::begin(byte_id_), std::end(byte_id_), -1);
  token_bytes_.assign(n, std::string());
  strips_leading_space_.assign(n, 0);
  byte_token_.assign(n, 0);
  replacement_ = Utf8Replacement::kPerByte;
  std::vector<AddedToken> specials;
  id_of_.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    const auto id = static_cast<int32_t>(i);
    const std::string& t = tokens_[i];
    if (auto [it, fresh] = id_of_.emplace(t, id); !fresh) {
      fail(src, ": token ", id, " ('", t, "') repeats token ", it->second);
    }
    for (size_t at = t.find(kSpace, 1); at != std::string::npos; at = t.find(kSpace, at + 1)) {
      if (at < kSpace.size() || t.compare(at - kSpace.size(), kSpace.size(), kSpace) != 0)
        words_independent_ = false;
    }
    switch (types[i]) {
      case SpmTokenType::kByte: {
        const int v = byte_value(t);
        if (v < 0) fail(src, ": byte token ", id, " is '", t, "', expected <0xAB>");
        token_bytes_[i] = std::string(1, static_cast<char>(v));
        byte_token_[i] = 1;
        byte_id_[v] = id;
        break;
      }
      case SpmTokenType::kControl:
        specials.push_back({id, t, true, false, false, false});
        break;
      case SpmTokenType::kUnknown:
        specials.push_back({id, t, true, false, false, false});
        token_bytes_[i] = " \xE2\x81\x87 ";  // SentencePiece's surface of <unk>: " ⁇ "
        break;
      case SpmTokenType::kUserDefined:
        specials.push_back({id, t, false, false, false, false});
        token_bytes_[i] = t;
        break;
      default:  // normal, unused, undefined: text with U+2581 read as a space
        token_bytes_[i] = unescape_spaces(t);
        strips_leading_space_[i] = add_space_prefix_ ? 1 : 0;
        break;
    }
  }
  // Bytes without a <0xAB> token fall back to a one-byte entry, as llama.cpp does.
  for (int b = 0; b < 256; ++b) {
    const char c = static_cast<char>(b);
    if (byte_id_[b] < 0) byte_id_[b] = find(std::string_view(&c, 1));
  }
  specials_ = AddedTokenMatcher(specials);
}

std::string SpmVocabTokenizer::piece(int32_t id) const {
  check_id(id);
  return tokens_[id];
}

int32_t SpmVocabTokenizer::find(std::string_view text) const {
  auto it = id_of_.find(text);
  return it == id_of_.end() ? -1 : it->second;
}

void SpmVocabTokenizer::emit_symbol(std::string_view symbol, std::vector<int32_t>& out) const {
  if (const int32_t id = find(symbol); id >= 0) {
    out.push_back(id);
    return;
  }
  for (char c : symbol) {
    const int32_t b = byte_id_[static_cast<unsigned char>(c)];
    if (b >= 0) {
      out.push_back(b);
    } else if (unk_id_ >= 0) {
      out.push_back(unk_id_);
    } else {
      fail("tokenizer: byte 0x", "0123456789ABCDEF"[(static_cast<unsigned char>(c) >> 4)],
           "0123456789ABCDEF"[c & 15], " has no token and the vocabulary has no unknown token");
    }
  }
}

void SpmVocabTokenizer::encode_segment(std::string_view text, std::vector<int32_t>& out) const {
  // Symbols are byte ranges of `text`, linked in order; a merge grows the left one.
  struct Symbol {
    uint32_t start, size;
    int32_t prev, next;
  };
  std::vector<Symbol> sym;
  for (size_t i = 0; i < text.size();) {
    const auto len = static_cast<uint32_t>(std::min<size_t>(
        utf8_sequence_length(static_cast<unsigned char>(text[i])), text.size() - i));
    sym.push_back({static_cast<uint32_t>(i), len, static_cast<int32_t>(sym.size()) - 1,
                   static_cast<int32_t>(sym.size()) + 1});
    i += len;
  }
  if (sym.empty()) return;
  sym.back().next = -1;
  std::vector<Bigram> heap;
  auto consider = [&](int32_t left, int32_t right) {
    if (left < 0 || right < 0) return;
    const uint32_t size = sym[left].size + sym[right].size;
    const int32_t id = find(text.substr(sym[left].start, size));
    if (id < 0) return;
    heap.push_back({scores_[id], left, right, size});
    std::push_heap(heap.begin(), heap.end(), worse);
  };
  for (size_t i = 1; i < sym.size(); ++i)
    consider(static_cast<int32_t>(i) - 1, static_cast<int32_t>(i));
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), worse);
    const Bigram b = heap.back();
    heap.pop_back();
    Symbol& l = sym[b.left];
    Symbol& r = sym[b.right];
    if (l.size == 0 || r.size == 0 || l.size + r.size != b.size) continue;
    l.size += r.size;
    r.size = 0;
    l.next = r.next;
    if (r.next >= 0) sym[r.next].prev = b.left;
    consider(l.prev, b.left);
    consider(b.left, l.next);
  }
  for (int32_t i = 0; i >= 0; i = sym[i].next)
    emit_symbol(text.substr(sym[i].start, sym[i].size), out);
}

void SpmVocabTokenizer::encode_fragment(std::string_view escaped, std::vector<int32_t>& out) const {
  if (!words_independent_) {
    encode_segment(escaped, out);
    return;
  }
  // Cut before every U+2581 that follows another character; words repeat, so each distinct one
  // is merged once per call.
  std::unordered_map<std::string_view, std::pair<uint32_t, uint32_t>> cache;
  std::vector<int32_t> done;
  size_t begin = 0;
  while (begin < escaped.size()) {
    size_t end = begin;
    while (end < escaped.size() && escaped.compare(end, kSpace.size(), kSpace) == 0)
      end += kSpace.size();
    end = escaped.find(kSpace, end);
    if (end == std::string_view::npos) end = escaped.size();
    const std::string_view word = escaped.substr(begin, end - begin);
    auto it = cache.find(word);
    if (it == cache.end()) {
      const auto at = static_cast<uint32_t>(done.size());
      encode_segment(word, done);
      it = cache.emplace(word, std::make_pair(at, static_cast<uint32_t>(done.size()) - at)).first;
    }
    out.insert(out.end(), done.begin() + it->second.first,
               done.begin() + it->second.first + it->second.second);
    begin = end;
  }
}

void SpmVocabTokenizer::encode_text(std::string_view text, std::vector<int32_t>& out) const {
  std::vector<AddedTokenMatcher::Piece> pieces;
  specials_.split(text, pieces);
  bool after_special = true;  // the start of the text counts as following a special token
  for (const auto& p : pieces) {
    if (p.id >= 0) {
      out.push_back(p.id);
      after_special = true;
      continue;
    }
    std::string escaped;
    if (add_space_prefix_ && after_special) escaped = std::string(kSpace);
    escaped += replace_spaces(p.text, kSpace);
    encode_fragment(escaped, out);
    after_special = false;
  }
}

}  // namespace eagle2

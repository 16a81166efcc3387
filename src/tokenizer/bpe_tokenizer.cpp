#include "tokenizer/bpe_tokenizer.h"

#include <algorithm>

#include "core/error.h"
#include "tokenizer/byte_level.h"
#include "tokenizer/normalizer.h"

namespace eagle2 {

namespace {

// A possible merge of the symbol at `pos` with the next one, as it was when queued.
struct Candidate {
  int32_t rank, pos, left, right, merged;
};
// std::push_heap keeps the largest first: "larger" here is the later merge, so the top is the
// lowest rank, then the leftmost position (Hugging Face's order).
bool later(const Candidate& a, const Candidate& b) {
  return a.rank != b.rank ? a.rank > b.rank : a.pos > b.pos;
}

}  // namespace

BpeTokenizer::BpeTokenizer(BpeSpec spec)
    : add_prefix_space_(spec.add_prefix_space),
      nfc_(spec.nfc),
      ignore_merges_(spec.ignore_merges),
      add_bos_(spec.add_bos),
      bos_id_(spec.bos_id),
      eos_id_(spec.eos_id) {
  const std::string& src = spec.source;
  // Every id below the size is a vocabulary entry or an added token, so the size is bounded by
  // how many there are: checked before anything is sized by an id.
  const size_t bound = spec.vocab.size() + spec.added.size();
  size_t n = spec.vocab.size();
  for (const AddedToken& t : spec.added) {
    if (t.id < 0 || static_cast<size_t>(t.id) >= bound) {
      fail(src, ": added token '", t.content, "' has id ", t.id, ", out of range [0, ", bound, ")");
    }
    n = std::max(n, static_cast<size_t>(t.id) + 1);
  }
  pieces_.assign(n, std::string());
  std::vector<int8_t> added_kind(n, -1);  // -1 plain entry, 0 added, 1 added control token
  for (const AddedToken& t : spec.added) {
    pieces_[t.id] = t.content;
    added_kind[t.id] = t.special ? 1 : 0;
  }
  token_bytes_.assign(n, std::string());
  entry_id_.reserve(spec.vocab.size());
  for (size_t id = 0; id < spec.vocab.size(); ++id) {
    const std::string& e = spec.vocab[id];
    if (e.empty()) continue;
    if (auto [it, fresh] = entry_id_.emplace(e, static_cast<int32_t>(id)); !fresh) {
      fail(src, ": token ", id, " ('", e, "') repeats token ", it->second);
    }
    if (added_kind[id] < 0) {
      pieces_[id] = e;
      // Entries outside the byte-level alphabet stand for their own UTF-8 (Hugging Face's rule).
      if (!from_byte_level(e, &token_bytes_[id])) token_bytes_[id] = e;
    }
  }
  for (size_t id = 0; id < n; ++id) {
    if (added_kind[id] == 0) token_bytes_[id] = pieces_[id];
    if (pieces_[id].empty() && added_kind[id] < 0) fail(src, ": no token has id ", id);
  }
  // A byte without its entry (StarCoder's vocabulary lacks the leads of unassigned planes) is
  // the unknown token, as in Hugging Face; without one, encoding such a byte is an Error.
  for (int b = 0; b < 256; ++b) {
    auto it = entry_id_.find(byte_level_char(static_cast<uint8_t>(b)));
    byte_id_[b] = it == entry_id_.end() ? spec.unk_id : it->second;
  }
  merges_.reserve(spec.merges.size());
  auto id_of = [&](size_t rank, const std::string& token) {
    auto it = entry_id_.find(token);
    if (it == entry_id_.end()) {
      fail(src, ": merge ", rank, " ('", spec.merges[rank].first, " ", spec.merges[rank].second,
           "') needs '", token, "', which is not in the vocabulary");
    }
    return it->second;
  };
  for (size_t r = 0; r < spec.merges.size(); ++r) {
    const auto& [a, b] = spec.merges[r];
    const int32_t left = id_of(r, a), right = id_of(r, b), merged = id_of(r, a + b);
    merges_.set(left, right, BpeMerge{static_cast<int32_t>(r), merged});
  }
  for (int32_t id : {bos_id_, eos_id_, spec.unk_id}) {
    if (id >= static_cast<int32_t>(n))
      fail(src, ": special token id ", id, " is out of range [0, ", n, ")");
  }
  std::vector<AddedToken> raw, normalized;
  for (const AddedToken& t : spec.added) {
    if (t.special && !spec.match_special_in_text) continue;
    (t.normalized ? normalized : raw).push_back(t);
  }
  raw_added_ = AddedTokenMatcher(raw);
  normalized_added_ = AddedTokenMatcher(normalized);
  splitter_ = RegexSplitter(spec.split_patterns, src);
  replacement_ = Utf8Replacement::kMaximalSubpart;
}

std::string BpeTokenizer::piece(int32_t id) const {
  check_id(id);
  return pieces_[id];
}

struct BpeTokenizer::Scratch {
  std::vector<int32_t> id, next, prev;
  std::vector<Candidate> heap;
};

int32_t BpeTokenizer::byte_id(unsigned char b) const {
  if (byte_id_[b] < 0) {
    fail("tokenizer: byte 0x", "0123456789ABCDEF"[b >> 4], "0123456789ABCDEF"[b & 15],
         " has no token and the vocabulary has no unknown token");
  }
  return byte_id_[b];
}

void BpeTokenizer::encode_word(std::string_view word, Scratch& scratch,
                               std::vector<int32_t>& out) const {
  if (word.size() == 1) {
    out.push_back(byte_id(static_cast<unsigned char>(word[0])));
    return;
  }
  if (ignore_merges_) {
    auto it = entry_id_.find(to_byte_level(word));
    if (it != entry_id_.end()) {
      out.push_back(it->second);
      return;
    }
  }
  const auto n = static_cast<int32_t>(word.size());
  std::vector<int32_t>& id = scratch.id;
  std::vector<int32_t>& next = scratch.next;
  std::vector<int32_t>& prev = scratch.prev;
  id.resize(n);
  next.resize(n);
  prev.resize(n);
  for (int32_t i = 0; i < n; ++i) {
    id[i] = byte_id(static_cast<unsigned char>(word[i]));
    next[i] = i + 1 < n ? i + 1 : -1;
    prev[i] = i - 1;
  }
  std::vector<Candidate>& heap = scratch.heap;
  heap.clear();
  auto consider = [&](int32_t pos) {
    if (pos < 0 || next[pos] < 0) return;
    if (const BpeMerge* m = merges_.find(id[pos], id[next[pos]])) {
      heap.push_back({m->rank, pos, id[pos], id[next[pos]], m->id});
      std::push_heap(heap.begin(), heap.end(), later);
    }
  };
  for (int32_t i = 0; i + 1 < n; ++i) consider(i);
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), later);
    const Candidate c = heap.back();
    heap.pop_back();
    // Stale when either symbol has changed since it was queued (merged away or into another).
    if (id[c.pos] != c.left || next[c.pos] < 0 || id[next[c.pos]] != c.right) continue;
    const int32_t gone = next[c.pos];
    id[c.pos] = c.merged;
    id[gone] = -1;
    next[c.pos] = next[gone];
    if (next[gone] >= 0) prev[next[gone]] = c.pos;
    consider(prev[c.pos]);
    consider(c.pos);
  }
  for (int32_t i = 0; i >= 0; i = next[i]) out.push_back(id[i]);
}

void BpeTokenizer::encode_plain(std::string_view text, std::vector<int32_t>& out) const {
  std::string prefixed;
  if (add_prefix_space_ && !text.empty() && text[0] != ' ') {
    // Built by appending: GCC 12 warns falsely (-Wrestrict, its bug 105329) on " " + string.
    prefixed.reserve(text.size() + 1);
    prefixed.append(1, ' ').append(text);
    text = prefixed;
  }
  std::vector<std::string_view> words;
  splitter_.split(text, words);
  // Texts repeat their words: each distinct word is merged once per call.
  std::unordered_map<std::string_view, std::pair<uint32_t, uint32_t>> cache;
  std::vector<int32_t> done;
  Scratch scratch;
  for (std::string_view w : words) {
    auto it = cache.find(w);
    if (it == cache.end()) {
      const auto begin = static_cast<uint32_t>(done.size());
      encode_word(w, scratch, done);
      it =
          cache.emplace(w, std::make_pair(begin, static_cast<uint32_t>(done.size()) - begin)).first;
    }
    out.insert(out.end(), done.begin() + it->second.first,
               done.begin() + it->second.first + it->second.second);
  }
}

void BpeTokenizer::encode_text(std::string_view text, std::vector<int32_t>& out) const {
  std::vector<AddedTokenMatcher::Piece> pieces, inner;
  raw_added_.split(text, pieces);
  for (const auto& p : pieces) {
    if (p.id >= 0) {
      out.push_back(p.id);
      continue;
    }
    const std::string normalized = nfc_ ? nfc(p.text) : std::string();
    const std::string_view s = nfc_ ? std::string_view(normalized) : p.text;
    inner.clear();
    normalized_added_.split(s, inner);
    for (const auto& q : inner) {
      if (q.id >= 0) {
        out.push_back(q.id);
      } else {
        encode_plain(q.text, out);
      }
    }
  }
}

}  // namespace eagle2

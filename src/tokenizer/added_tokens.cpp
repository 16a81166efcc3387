#include "tokenizer/added_tokens.h"

#include <algorithm>

namespace eagle2 {

namespace {

// Hugging Face strips with char::is_whitespace; in practice the whitespace next to a special
// token is ASCII (spaces and newlines of a chat template).
bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

}  // namespace

AddedTokenMatcher::AddedTokenMatcher(const std::vector<AddedToken>& tokens) {
  for (const AddedToken& t : tokens) {
    if (!t.content.empty()) tokens_.push_back(t);
  }
  for (uint32_t i = 0; i < tokens_.size(); ++i) {
    by_first_byte_[static_cast<unsigned char>(tokens_[i].content[0])].push_back(i);
  }
  for (auto& list : by_first_byte_) {
    std::stable_sort(list.begin(), list.end(), [&](uint32_t a, uint32_t b) {
      return tokens_[a].content.size() > tokens_[b].content.size();
    });
  }
}

void AddedTokenMatcher::split(std::string_view text, std::vector<Piece>& out) const {
  if (tokens_.empty()) {
    if (!text.empty()) out.push_back({text, -1});
    return;
  }
  size_t plain = 0;  // start of the plain text not yet emitted
  size_t i = 0;
  while (i < text.size()) {
    const auto& candidates = by_first_byte_[static_cast<unsigned char>(text[i])];
    const AddedToken* hit = nullptr;
    for (uint32_t k : candidates) {
      const std::string& c = tokens_[k].content;
      if (text.compare(i, c.size(), c) == 0) {
        hit = &tokens_[k];
        break;  // longest first
      }
    }
    if (hit == nullptr) {
      ++i;
      continue;
    }
    size_t begin = i, end = i + hit->content.size();
    if (hit->lstrip) {
      while (begin > plain && is_space(text[begin - 1])) --begin;
    }
    if (hit->rstrip) {
      while (end < text.size() && is_space(text[end])) ++end;
    }
    if (begin > plain) out.push_back({text.substr(plain, begin - plain), -1});
    out.push_back({text.substr(begin, end - begin), hit->id});
    plain = i = end;
  }
  if (plain < text.size()) out.push_back({text.substr(plain), -1});
}

}  // namespace eagle2

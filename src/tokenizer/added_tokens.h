// Added and special tokens found in the input text, as Hugging Face does by default
// (split_special_tokens false): "<|begin_of_text|>" in a prompt is that one token, not the BPE
// pieces of its characters. Matching is leftmost-longest (Hugging Face's Aho-Corasick choice):
// the earliest occurrence of any token wins, and the longest token among those starting there.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace eagle2 {

struct AddedToken {
  int32_t id = -1;
  std::string content;
  bool special = false;     // a control token: decodes to no text
  bool normalized = false;  // matched on the normalized text rather than the raw input
  bool lstrip = false;      // also swallows the whitespace before it
  bool rstrip = false;      // also swallows the whitespace after it
};

class AddedTokenMatcher {
 public:
  AddedTokenMatcher() = default;
  // Tokens with empty content are ignored (they can never be found).
  explicit AddedTokenMatcher(const std::vector<AddedToken>& tokens);

  struct Piece {
    std::string_view text;  // plain text (id < 0) or the matched token with what it swallowed
    int32_t id;
  };
  // Appends text's pieces in order; plain pieces are never empty.
  void split(std::string_view text, std::vector<Piece>& out) const;
  bool empty() const { return tokens_.empty(); }

 private:
  std::vector<AddedToken> tokens_;
  // For each first byte, the tokens starting with it, longest first.
  std::array<std::vector<uint32_t>, 256> by_first_byte_;
};

}  // namespace eagle2

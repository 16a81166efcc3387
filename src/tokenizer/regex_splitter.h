// The pre-tokenizer of byte-level BPE: regexes with Unicode classes (\p{L}, \p{N}), lookahead and
// case-insensitive groups, run by PCRE2 (JIT-compiled where the platform allows) because
// std::regex has no Unicode properties. Each regex in turn splits every piece into its matches and
// the text between them (Hugging Face's Split with behavior "Isolated"), applied to each piece on
// its own, so that anchors and lookahead see only that piece.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace eagle2 {

class RegexSplitter {
 public:
  RegexSplitter();
  // Error "<source>: pre-tokenizer regex '<pattern>' does not compile: <why> at offset N".
  RegexSplitter(const std::vector<std::string>& patterns, const std::string& source);
  ~RegexSplitter();
  RegexSplitter(RegexSplitter&&) noexcept;
  RegexSplitter& operator=(RegexSplitter&&) noexcept;

  // Appends the pieces of `text` (views into it, none empty, together exactly `text`). `text`
  // must be valid UTF-8 (the caller checked). With no patterns the text is one piece.
  void split(std::string_view text, std::vector<std::string_view>& out) const;
  const std::vector<std::string>& patterns() const { return patterns_; }

 private:
  struct Compiled;
  std::vector<std::string> patterns_;
  std::vector<std::unique_ptr<Compiled>> compiled_;
};

}  // namespace eagle2

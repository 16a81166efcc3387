// Byte-level BPE (GPT-2 lineage: LLaMA-3, Qwen2/3, StarCoder, DeepSeek-Coder), as Hugging Face
// tokenizers encodes: added/special tokens are cut out of the text first, the rest is normalized
// (NFC where the model asks), split by the pre-tokenizer regexes, each piece written in the
// byte-level alphabet and merged pair by pair, the lowest merge rank first (leftmost on ties).
// With ignore_merges (LLaMA-3) a piece that is a vocabulary entry as a whole is that entry.
// Decoding concatenates the tokens' bytes (added tokens: their content, control tokens: nothing);
// invalid UTF-8 shows as U+FFFD per maximal subpart, as Hugging Face's byte-level decoder does.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "tokenizer/added_tokens.h"
#include "tokenizer/byte_tokenizer.h"
#include "tokenizer/pair_table.h"
#include "tokenizer/regex_splitter.h"

namespace eagle2 {

// Everything a byte-level BPE tokenizer is made of, as tokenizer.json or a GGUF file gives it.
struct BpeSpec {
  std::string source;              // the file, for messages
  std::vector<std::string> vocab;  // id -> entry in the byte-level alphabet ("" where only an
                                   // added token holds the id)
  std::vector<std::pair<std::string, std::string>> merges;  // rank -> the pair merged
  std::vector<AddedToken> added;
  std::vector<std::string> split_patterns;  // the pre-tokenizer's regexes, in order
  bool add_prefix_space = false;  // ByteLevel's: a space before text not starting with one
  bool nfc = false;               // the normalizer
  bool ignore_merges = false;
  int32_t bos_id = -1;
  int32_t eos_id = -1;
  int32_t unk_id = -1;  // what a byte without its entry becomes
  bool add_bos = false;
  bool match_special_in_text = true;  // false: tokenizer_config.json's split_special_tokens
};

class BpeTokenizer : public ByteTokenizer {
 public:
  // Error "<source>: ..." for a merge naming a token the vocabulary lacks, a byte without its
  // an id out of range, an uncompilable regex.
  explicit BpeTokenizer(BpeSpec spec);

  std::string piece(int32_t id) const override;
  int32_t vocab_size() const override { return static_cast<int32_t>(pieces_.size()); }
  int32_t bos_id() const override { return bos_id_; }
  int32_t eos_id() const override { return eos_id_; }
  bool adds_bos() const override { return add_bos_; }
  const char* kind() const override { return "bpe"; }

  const RegexSplitter& splitter() const { return splitter_; }

 protected:
  void encode_text(std::string_view text, std::vector<int32_t>& out) const override;

 private:
  struct Scratch;  // buffers reused across the words of one call
  void encode_plain(std::string_view text, std::vector<int32_t>& out) const;
  void encode_word(std::string_view word, Scratch& scratch, std::vector<int32_t>& out) const;
  int32_t byte_id(unsigned char b) const;

  std::vector<std::string> pieces_;
  std::unordered_map<std::string, int32_t> entry_id_;  // byte-level entry -> id
  PairTable merges_;                                   // (left id, right id) -> merge
  int32_t byte_id_[256] = {};
  AddedTokenMatcher raw_added_, normalized_added_;
  RegexSplitter splitter_;
  bool add_prefix_space_ = false, nfc_ = false, ignore_merges_ = false, add_bos_ = false;
  int32_t bos_id_ = -1, eos_id_ = -1;
};

}  // namespace eagle2

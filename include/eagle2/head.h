// An EAGLE draft head for a target model, its optional reduced draft vocabulary, and the
// draft_vocab.tsv files that vocabulary is read from (most frequent tokens first). A Head keeps a
// reference to its target Model (which must outlive it) and is used on the target's thread;
// loading errors are eagle2::Error naming the folder (eagle2/error.h).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "eagle2/model.h"

namespace eagle2::api {

class Head {
 public:
  // A head folder: config.json plus model.safetensors (preferred) or pytorch_model.bin, checked
  // against the target (hidden size, vocabulary, embedding). The target must outlive the head.
  // weights: what the head's matrices become. "auto" (default): quantized like the target (Q8_0
  // for a Q8_0 model, Q4_0 for a Q4_0 or Q4_K_M one, as stored for a float one): drafting is a
  // chain of one-row head forwards, each reading every head weight, so a bf16 head on a 4-bit
  // target costs as much per step as the target. "as-is", "q8_0", "q4_0": what it says. Drafts
  // change a little with the head's quantization, the output never (the target decides).
  static Head load(const std::string& dir, const Model& target,
                   const std::string& weights = "auto");
  // The head matrices' type after loading: "BF16", "Q8_0", ...
  std::string weights_dtype() const;
  ~Head();
  Head(Head&&) noexcept;
  Head& operator=(Head&&) noexcept;

  int64_t parameter_count() const;
  // Bytes of the head's KV cache per token (its one layer's keys and values, float32): a
  // drafter's cache holds the context plus its largest tree (a server's memory accounting).
  int64_t kv_bytes_per_token() const;
  // "eagle" (an EAGLE-1/2 head, drafting over the target's vocabulary) or "eagle3" (an EAGLE-3
  // head: its own draft vocabulary, features from three target layers).
  std::string kind() const;
  // Drafts only the n most frequent tokens of a draft_vocab.tsv (a smaller draft lm_head; the
  // output is unchanged: the target decides every token). Error if n is outside [1, the ids in
  // the file] or the file is malformed, and for an EAGLE-3 head (it has its own draft
  // vocabulary). Call it before drafting starts: the engine's drafting policies are kept per
  // head.
  void restrict_vocab(const std::string& draft_vocab_tsv, int64_t n);
  // The n demo and serve pass to restrict_vocab when the user asked for none (`asked` < 0):
  // 1024 for an EAGLE-1/2 head whose folder `dir` has a draft_vocab.tsv, else 0 (the full
  // vocabulary; an EAGLE-3 head has its own). `asked` >= 0 is returned as is.
  int64_t default_draft_vocab(const std::string& dir, int64_t asked) const;
  int64_t draft_vocab_size() const;  // tokens the head can propose

  struct Impl;  // the library's side of the handle (src/api)
  explicit Head(std::unique_ptr<Impl> impl);
  Impl& impl() const { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

// Token ids by count, most frequent first (ties: lower id first; ids never seen left out).
std::vector<int32_t> ids_by_frequency(const std::vector<int64_t>& counts);
// Writes a draft_vocab.tsv from the counts of every token id (counts[id]).
void write_draft_vocab(const std::string& path, const std::vector<int64_t>& counts);

}  // namespace eagle2::api

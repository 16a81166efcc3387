// A forward batch: tokens, their positions, and which earlier rows of the same batch each row may
// see. Every batch is a forest over its rows: row i sees its ancestors (parents[i], its parent,
// ...) and itself, on top of the whole committed context in the KV cache. A causal run (prefill,
// plain decoding) is the chain parents[i] = i - 1; a draft tree gives each node its parent.
// Rows may belong to several independent sequences (`sequences`, indices into the caches given to
// the forward): a row then sees only its own sequence's context, and its parent must be a row of
// the same sequence.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace eagle2 {

struct Batch {
  std::vector<int32_t> tokens;
  std::vector<int32_t> positions;
  std::vector<int32_t> parents;    // parents[i] < i, or -1: attached to the committed context only
  std::vector<int32_t> sequences;  // per row; empty: every row is in sequence 0

  int64_t size() const { return static_cast<int64_t>(tokens.size()); }

  // tokens at positions start, start+1, ... each seeing all earlier rows.
  static Batch causal(std::span<const int32_t> tokens, int32_t start_position);
  // A tree whose root (row 0, parent -1) sits at root_position; row i sits at
  // root_position + depth(i).
  static Batch tree(std::span<const int32_t> tokens, std::span<const int32_t> parents,
                    int32_t root_position);

  // Error unless sizes agree, parents[i] in [-1, i), tokens in [0, vocab_size), positions >= 0,
  // sequences in [0, n_sequences) and each parent in its child's sequence.
  void validate(int64_t vocab_size, int64_t n_sequences = 1) const;
  int32_t sequence(int64_t i) const { return sequences.empty() ? 0 : sequences[i]; }

  // Appends `other` as the rows of sequence `sequence` (its parents renumbered).
  void append(const Batch& other, int32_t sequence);

  std::vector<int32_t> depths() const;  // 0 for rows without a parent
  // Rows that row i sees, in increasing order, itself last.
  void visible_rows(int64_t i, std::vector<int32_t>& out) const;
};

}  // namespace eagle2

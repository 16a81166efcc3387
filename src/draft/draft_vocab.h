// A reduced draft vocabulary (as EAGLE-3 uses): the head proposes only the most frequent tokens,
// so its lm_head multiplies a few rows of the target's instead of all of them. Lossless by
// construction: drafts only shape the tree, the target decides every token (a token outside the
// draft vocabulary is still emitted when the target picks it; it just cannot be drafted).
//
// File format (HEAD_DIR/draft_vocab.tsv, written by `eagle2 draft-vocab`): a header line
// "token_id<TAB>count", then one line per token of the target's vocabulary that occurred, most
// frequent first (ties: lower id first).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace eagle2 {

// Token ids sorted by count descending, ties by id (ids with count 0 left out).
std::vector<int32_t> ids_by_frequency(const std::vector<int64_t>& counts);

// An EAGLE-3 head's draft vocabulary (SafeAILab/EAGLE traineagle3 `scandata`): the n most
// frequent ids (ids_by_frequency), filled with the lowest unused ids when fewer than n occurred
// (the reference would write a short d2t; the golden head fills so), sorted ascending: draft index
// i drafts ids[i], so d2t[i] = ids[i] - i. Error if n is outside [1, counts.size()].
std::vector<int32_t> eagle3_draft_ids(const std::vector<int64_t>& counts, int64_t n);

void write_draft_vocab(const std::string& path, const std::vector<int64_t>& counts);

// The ids of a draft_vocab.tsv, most frequent first. Error (naming the file and line) on a
// missing file, a bad header, a malformed line, an id outside [0, vocab_size), a repeated id, or
// counts that are not in descending order.
std::vector<int32_t> read_draft_vocab(const std::string& path, int64_t vocab_size);

// The first n ids of the file sorted ascending (the head's compact lm_head keeps token order, so
// ties between draft probabilities still go to the lower id). Error if n is outside
// [1, number of ids in the file].
std::vector<int32_t> draft_vocab_subset(const std::string& path, int64_t vocab_size, int64_t n);

}  // namespace eagle2

// Training a SentencePiece tokenizer (BPE with byte fallback, LLaMA-2 conventions) through
// libsentencepiece's trainer, so that a model trained from scratch gets a tokenizer.model that
// eagle2::Tokenizer (and Hugging Face's LlamaTokenizer) load.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace eagle2 {

struct SpTrainOptions {
  int32_t vocab_size = 32000;       // includes <unk>, <s>, </s> and the 256 byte pieces
  double character_coverage = 1.0;  // 1.0, or 0.9995 for corpora with many rare characters
  // At most this many lines are used (0 = all), drawn without replacement by a seeded RNG and
  // kept in corpus order: the trainer's cost grows with its input, and a sample of a few hundred
  // thousand lines gives nearly the same merges.
  int64_t max_lines = 0;
  uint64_t seed = 0;
  bool quiet = true;  // hide libsentencepiece's progress log (printed on stderr)
};

// Trains on the non-empty lines of the given UTF-8 text files and writes the model file to
// output_path (atomically: temporary file, then rename). Ids: <unk> 0, <s> 1, </s> 2, no pad;
// identity normalization, no extra-whitespace removal, a dummy prefix space, digits split, byte
// fallback (LLaMA-2's tokenizer settings). Single-threaded and fed in a fixed order, so the same
// inputs and options give the same file. Errors (unreadable input, no text, a vocabulary too small
// for the byte pieces and characters, or too large for the corpus) are eagle2::Error naming the
// cause.
void train_sentencepiece(const std::vector<std::string>& input_paths,
                         const std::string& output_path, const SpTrainOptions& options);

}  // namespace eagle2

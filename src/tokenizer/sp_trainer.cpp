#include "tokenizer/sp_trainer.h"

#include <sentencepiece_trainer.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unordered_map>

#include "core/error.h"
#include "core/regular_file.h"
#include "core/splitmix64.h"

namespace eagle2 {

namespace {

// Feeds the trainer from memory: no temporary input file, and the order is ours.
class LineIterator : public sentencepiece::SentenceIterator {
 public:
  explicit LineIterator(const std::vector<std::string>& lines) : lines_(lines) {}
  bool done() const override { return i_ >= lines_.size(); }
  void Next() override { ++i_; }
  const std::string& value() const override { return lines_[i_]; }
  sentencepiece::util::Status status() const override { return {}; }

 private:
  const std::vector<std::string>& lines_;
  size_t i_ = 0;
};

std::vector<std::string> read_lines(const std::vector<std::string>& paths) {
  std::vector<std::string> lines;
  for (const std::string& path : paths) {
    std::istringstream in(read_regular_file(path, read_limit::kCorpusFile, "a corpus file"));
    std::string line;
    while (std::getline(in, line)) {
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (!line.empty()) lines.push_back(std::move(line));
    }
    if (in.bad()) fail(path, ": read error");
  }
  return lines;
}

// Keeps `keep` lines chosen uniformly (partial Fisher-Yates over indices), in corpus order.
void sample_lines(std::vector<std::string>& lines, int64_t keep, uint64_t seed) {
  if (keep <= 0 || static_cast<int64_t>(lines.size()) <= keep) return;
  std::vector<size_t> idx(lines.size());
  for (size_t i = 0; i < idx.size(); ++i) idx[i] = i;
  SplitMix64 rng(seed);
  for (int64_t i = 0; i < keep; ++i) {
    const size_t j =
        static_cast<size_t>(i) + rng.next_u64() % (idx.size() - static_cast<size_t>(i));
    std::swap(idx[static_cast<size_t>(i)], idx[j]);
  }
  idx.resize(static_cast<size_t>(keep));
  std::sort(idx.begin(), idx.end());
  std::vector<std::string> kept;
  kept.reserve(idx.size());
  for (size_t i : idx) kept.push_back(std::move(lines[i]));
  lines = std::move(kept);
}

}  // namespace

void train_sentencepiece(const std::vector<std::string>& input_paths,
                         const std::string& output_path, const SpTrainOptions& o) {
  if (input_paths.empty()) fail("tokenizer training: no corpus files given");
  // 3 special pieces + 256 byte pieces exist before any character or merge.
  if (o.vocab_size < 260)
    fail("tokenizer training: vocab_size ", o.vocab_size,
         " is too small (byte fallback alone takes 259 pieces)");
  if (!(o.character_coverage > 0.0 && o.character_coverage <= 1.0))
    fail("tokenizer training: character_coverage ", o.character_coverage, " is not in (0, 1]");

  std::vector<std::string> lines = read_lines(input_paths);
  if (lines.empty()) fail("tokenizer training: the corpus files hold no text");
  sample_lines(lines, o.max_lines, o.seed);

  std::ostringstream coverage;
  coverage.precision(17);
  coverage << o.character_coverage;
  const std::unordered_map<std::string, std::string> args = {
      {"model_type", "bpe"},
      {"vocab_size", std::to_string(o.vocab_size)},
      {"character_coverage", coverage.str()},
      {"byte_fallback", "true"},
      {"unk_id", "0"},
      {"bos_id", "1"},
      {"eos_id", "2"},
      {"pad_id", "-1"},
      {"normalization_rule_name", "identity"},
      {"remove_extra_whitespaces", "false"},
      {"add_dummy_prefix", "true"},
      {"split_digits", "true"},
      {"allow_whitespace_only_pieces", "true"},
      {"num_threads", "1"},
      // Our own sampling already bounded the input; the trainer must not drop or shuffle lines.
      {"input_sentence_size", "0"},
      {"shuffle_input_sentence", "false"},
      {"max_sentence_length", "16384"},
      {"minloglevel", o.quiet ? "2" : "0"},
  };
  sentencepiece::SetRandomGeneratorSeed(static_cast<unsigned int>(o.seed));
  LineIterator it(lines);
  std::string model;
  const sentencepiece::util::Status st =
      sentencepiece::SentencePieceTrainer::Train(args, &it, &model);
  if (!st.ok()) fail("tokenizer training failed: ", st.ToString());
  if (model.empty()) fail("tokenizer training produced an empty model");

  const std::string tmp = output_path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) fail(output_path, ": cannot write the tokenizer model");
    out.write(model.data(), static_cast<std::streamsize>(model.size()));
    if (!out) fail(output_path, ": write error");
  }
  std::error_code ec;
  std::filesystem::rename(tmp, output_path, ec);
  if (ec) fail(output_path, ": cannot rename the tokenizer model into place: ", ec.message());
}

}  // namespace eagle2

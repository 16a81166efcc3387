// eagle2/corpus.h over train/train_lm.h and core/regular_file.h.
#include "eagle2/corpus.h"

#include "core/regular_file.h"
#include "train/train_lm.h"

namespace eagle2::api {

std::vector<std::string> expand_text_paths(const std::vector<std::string>& paths) {
  return train::expand_text_paths(paths);
}

std::string read_corpus_file(const std::string& path) {
  return read_regular_file(path, read_limit::kCorpusFile, "a corpus file");
}

}  // namespace eagle2::api

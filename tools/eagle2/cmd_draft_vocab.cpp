// eagle2 draft-vocab: count the target tokenizer's tokens over a text corpus and write the head's
// draft_vocab.tsv (most frequent first), from which --draft-vocab N keeps the N most frequent.
#include <cstdio>
#include <string>
#include <vector>

#include "commands.h"
#include "eagle2/corpus.h"
#include "eagle2/error.h"
#include "eagle2/head.h"
#include "eagle2/model.h"
#include "eagle2/tokenizer.h"

namespace eagle2::cli {

using namespace eagle2::api;

namespace {

struct DraftVocabFlags {
  std::string model_dir, head_dir, out;
  std::vector<std::string> corpus;
};

int run_draft_vocab(const DraftVocabFlags& f) {
  if (f.out.empty() && f.head_dir.empty())
    fail("draft-vocab: pass --draft HEAD_DIR (writes HEAD_DIR/draft_vocab.tsv) or -o FILE");
  const std::string out = f.out.empty() ? f.head_dir + "/draft_vocab.tsv" : f.out;
  const ModelConfig cfg = model_config_of(f.model_dir);
  const Tokenizer tok = Tokenizer::open(f.model_dir);
  std::vector<int64_t> counts(static_cast<size_t>(cfg.vocab_size), 0);
  int64_t total = 0;
  const std::vector<std::string> files = expand_text_paths(f.corpus);
  for (const std::string& path : files) {
    const std::string text = read_corpus_file(path);
    for (int32_t id : tok.encode(text, /*add_bos=*/false)) {
      if (id < 0 || id >= cfg.vocab_size)
        fail(path, ": the tokenizer produced id ", id, " outside the model's vocabulary of ",
             cfg.vocab_size);
      ++counts[static_cast<size_t>(id)];
      ++total;
    }
  }
  write_draft_vocab(out, counts);
  const std::vector<int32_t> ids = ids_by_frequency(counts);
  std::fprintf(stderr, "%lld tokens in %zu files; %zu of %lld vocabulary entries occur; wrote %s\n",
               static_cast<long long>(total), files.size(), ids.size(),
               static_cast<long long>(cfg.vocab_size), out.c_str());
  // How much of the corpus the most frequent N cover: what --draft-vocab N can draft.
  int64_t covered = 0;
  size_t next = 0;
  for (size_t n = 256; n <= ids.size() * 2; n *= 2) {
    for (; next < std::min(n, ids.size()); ++next)
      covered += counts[static_cast<size_t>(ids[next])];
    std::fprintf(
        stderr, "  the %zu most frequent cover %.2f%% of the tokens\n", std::min(n, ids.size()),
        100.0 * static_cast<double>(covered) / static_cast<double>(std::max<int64_t>(total, 1)));
    if (n >= ids.size()) break;
  }
  return 0;
}

}  // namespace

Command add_draft_vocab(CLI::App& app) {
  auto f = std::make_shared<DraftVocabFlags>();
  CLI::App* cmd = app.add_subcommand("draft-vocab",
                                     "Count token frequencies over a corpus and write a head's "
                                     "draft_vocab.tsv (for --draft-vocab)");
  cmd->add_option("-m,--model", f->model_dir,
                  "Target model: a folder (config.json + tokenizer) or a .gguf file")
      ->required();
  cmd->add_option("--draft", f->head_dir, "EAGLE head folder: writes HEAD_DIR/draft_vocab.tsv");
  cmd->add_option("-o,--out", f->out, "Output file instead of HEAD_DIR/draft_vocab.tsv");
  cmd->add_option("--corpus", f->corpus, "UTF-8 text files or folders of them")->required();
  return {cmd, [f] { return run_draft_vocab(*f); }};
}

}  // namespace eagle2::cli

// Training a SentencePiece tokenizer (tokenizer/sp_trainer.h): LLaMA-2 ids and byte fallback,
// determinism, and one-line errors.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "core/error.h"
#include "support/shared_data.h"
#include "tokenizer/sp_trainer.h"
#include "tokenizer/tokenizer.h"

namespace eagle2 {
namespace {

std::string write_text(const std::string& dir, const std::string& name, const std::string& text) {
  const std::string path = dir + "/" + name;
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

std::string sample_corpus() {
  std::string text;
  const char* lines[] = {"the cat sat on the mat", "a dog ran in the park 42 times",
                         "the quick brown fox jumps over the lazy dog", "cats and dogs and mats"};
  for (int i = 0; i < 200; ++i) text += std::string(lines[i % 4]) + "\n";
  return text;
}

TEST(SpTrainer, TrainsALlamaStyleBpeModel) {
  const std::string dir = test::temp_dir("sp_trainer");
  const std::string corpus = write_text(dir, "c.txt", sample_corpus());
  SpTrainOptions o;
  o.vocab_size = 300;
  train_sentencepiece({corpus}, dir + "/a.model", o);
  auto tok = Tokenizer::load(dir + "/a.model");
  EXPECT_EQ(tok->vocab_size(), 300);
  EXPECT_EQ(tok->bos_id(), 1);
  EXPECT_EQ(tok->eos_id(), 2);
  EXPECT_EQ(tok->piece(0), "<unk>");
  // Merges learned from the corpus make its words short...
  EXPECT_LE(tok->encode("the cat", false).size(), 3u);
  // ...and characters never seen fall back to bytes and round-trip.
  const std::string unseen = "Zürich €5";
  const std::vector<int32_t> ids = tok->encode(unseen, false);
  EXPECT_EQ(tok->decode(ids), unseen);
  for (int32_t id : ids) EXPECT_NE(id, 0) << "no <unk> with byte fallback";
  // Digits are split one by one.
  EXPECT_GE(tok->encode("4242", false).size(), 4u);

  // Same inputs and options: the same file.
  train_sentencepiece({corpus}, dir + "/b.model", o);
  EXPECT_EQ(test::read_file(dir + "/a.model"), test::read_file(dir + "/b.model"));
  // A sample of the lines still trains, deterministically in the seed.
  o.max_lines = 50;
  train_sentencepiece({corpus}, dir + "/c.model", o);
  train_sentencepiece({corpus}, dir + "/d.model", o);
  EXPECT_EQ(test::read_file(dir + "/c.model"), test::read_file(dir + "/d.model"));
}

TEST(SpTrainer, ErrorsAreOneClearLine) {
  const std::string dir = test::temp_dir("sp_trainer_errors");
  const std::string corpus = write_text(dir, "c.txt", sample_corpus());
  const std::string empty = write_text(dir, "empty.txt", "\n\n");
  SpTrainOptions o;
  o.vocab_size = 100;
  try {
    train_sentencepiece({corpus}, dir + "/x.model", o);
    ADD_FAILURE() << "vocab 100 accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("byte fallback"), std::string::npos) << e.what();
  }
  o.vocab_size = 300;
  EXPECT_THROW(train_sentencepiece({dir + "/missing.txt"}, dir + "/x.model", o), Error);
  EXPECT_THROW(train_sentencepiece({empty}, dir + "/x.model", o), Error);
  EXPECT_THROW(train_sentencepiece({}, dir + "/x.model", o), Error);
  // More pieces than the corpus can make is the trainer's error, passed on as an Error.
  o.vocab_size = 20000;
  EXPECT_THROW(train_sentencepiece({corpus}, dir + "/x.model", o), Error);
}

}  // namespace
}  // namespace eagle2

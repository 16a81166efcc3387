// train-lm end to end on a tiny corpus: the model learns far below the unigram entropy of its
// tokens, the exported folder loads and generates, and a stopped-then-resumed run ends with the
// same bytes as an uninterrupted one (library API and CLI).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/thread_pool.h"
#include "model/batch.h"
#include "model/llama_model.h"
#include "support/cli.h"
#include "support/shared_data.h"
#include "tokenizer/tokenizer.h"
#include "train/train_lm.h"

namespace eagle2::train {
namespace {

namespace fs = std::filesystem;

// A few KB of Shakespeare when ../shared is present, else text from a small random grammar
// (still far from uniform, so a model has something to learn either way).
std::string corpus_text(size_t bytes) {
  const std::string shared = test::shared_dir();
  const std::string path = shared + "/data/corpora/tinyshakespeare.txt";
  if (!shared.empty() && test::file_exists(path)) return test::read_file(path).substr(0, bytes);
  static const char* subjects[] = {"the king", "my lord", "a fool", "the queen", "this night"};
  static const char* verbs[] = {"speaks of", "doth love", "hath seen", "shall keep", "fears"};
  static const char* objects[] = {"the crown.", "his sword.", "sweet death.", "the moon.", "thee."};
  TrainRng rng(3);
  std::string text;
  while (text.size() < bytes) {
    text += subjects[rng.next_u64() % 5];
    text += ' ';
    text += verbs[rng.next_u64() % 5];
    text += ' ';
    text += objects[rng.next_u64() % 5];
    text += rng.next_u64() % 3 == 0 ? "\n" : " ";
  }
  return text;
}

std::string write_corpus(const std::string& dir, size_t bytes) {
  const std::string path = dir + "/corpus.txt";
  std::ofstream(path, std::ios::binary) << corpus_text(bytes);
  return path;
}

const char* kConfig = R"({
  "model": {"hidden": 64, "layers": 2, "heads": 4, "kv_heads": 2, "intermediate": 128,
            "vocab": 384, "ctx": 64, "tie": true},
  "train": {"batch": 8, "seq_len": 32, "steps": STEPS, "lr": LR, "warmup": 10, "min_lr": 3e-4,
            "weight_decay": 0.01, "clip": 1.0, "seed": 7, "eval_every": 50,
            "checkpoint_every": 0, "held_out_fraction": 0.1}
})";

std::string config_text(int steps, const char* lr = "3e-3") {
  std::string text = kConfig;
  text.replace(text.find("STEPS"), 5, std::to_string(steps));
  text.replace(text.find("LR"), 2, lr);
  return text;
}

TrainLmConfig config_with_steps(int steps, const char* lr = "3e-3") {
  const std::string text = config_text(steps, lr);
  return TrainLmConfig::parse(text, "test config");
}

// -sum p log p over the token frequencies of the stream, in nats (the loss's unit).
double unigram_entropy(const std::vector<int32_t>& tokens) {
  std::map<int32_t, int64_t> counts;
  for (int32_t t : tokens) ++counts[t];
  double h = 0;
  for (const auto& [tok, n] : counts) {
    const double p = static_cast<double>(n) / static_cast<double>(tokens.size());
    h -= p * std::log(p);
  }
  return h;
}

std::string file_bytes(const std::string& path) {
  return test::read_file(path);
}

TEST(TrainLm, LearnsBelowUnigramEntropyAndExportsALoadableModel) {
  const std::string dir = test::temp_dir("train_lm_learn");
  const std::string corpus = write_corpus(dir, 6000);
  // The sanitizer pass (scale < 1) only checks that the loss falls: its steps cost ~50x more.
  const bool full_run = test::test_scale() >= 1.0;
  const int steps = full_run ? 400 : 24;
  const TrainLmConfig cfg = config_with_steps(steps, "1e-2");
  TrainLmOptions opt;
  opt.corpus = {corpus};
  opt.out_dir = dir + "/model";
  std::vector<double> losses;
  int evaluations = 0;
  TrainLmEvents ev;
  ev.step = [&](const TrainLmProgress& p) {
    losses.push_back(p.stats.loss);
    EXPECT_GT(p.tokens_per_s, 0);
  };
  ev.held_out = [&](int64_t, double loss) {
    ++evaluations;
    EXPECT_TRUE(std::isfinite(loss));
  };
  ThreadPool pool(2);
  const TrainLmResult r = run_train_lm(cfg, opt, ev, pool);
  ASSERT_EQ(r.steps_done, steps);
  ASSERT_EQ(static_cast<int>(losses.size()), steps);
  EXPECT_GE(evaluations, 1);

  const std::vector<int32_t> tokens = tokenize_files(opt.out_dir + "/tokenizer.model", {corpus});
  const double entropy = unigram_entropy(tokens);
  double tail = 0;
  const int n_tail = std::min(10, steps);
  for (int i = steps - n_tail; i < steps; ++i) tail += losses[static_cast<size_t>(i)];
  tail /= n_tail;
  std::printf(
      "unigram entropy %.3f nats, first loss %.3f, final loss %.3f, held-out %.3f, "
      "%.0f tokens/s\n",
      entropy, losses.front(), tail, r.held_out_loss, r.tokens_per_s);
  EXPECT_NEAR(losses.front(), std::log(384.0), 0.5);  // a fresh model is near uniform
  if (full_run)
    EXPECT_LT(tail, entropy - 1.0);
  else
    EXPECT_LT(tail, losses.front() - 0.5);

  // The folder is what LlamaModel and Tokenizer load; greedy generation runs and decodes.
  auto model = LlamaModel::load(opt.out_dir);
  auto tok = Tokenizer::load(opt.out_dir + "/tokenizer.model");
  EXPECT_EQ(model->config().vocab_size, tok->vocab_size());
  std::vector<int32_t> ids = tok->encode("First", true);
  KvCache kv = model->make_cache(48);
  ForwardResult out;
  Batch batch = Batch::causal(ids, 0);
  for (int i = 0; i < 16; ++i) {
    const std::vector<int32_t> last{static_cast<int32_t>(batch.size() - 1)};
    model->forward(batch, kv, last, out, pool);
    kv.keep_all();
    int32_t best = 0;
    for (int32_t v = 1; v < model->config().vocab_size; ++v)
      if (out.logits[v] > out.logits[best]) best = v;
    const auto pos = static_cast<int32_t>(ids.size());
    ids.push_back(best);
    batch = Batch::causal(std::vector<int32_t>{best}, pos);
  }
  const std::string text = tok->decode(ids);
  std::printf("generated: %s\n", text.c_str());
  EXPECT_GT(text.size(), 5u);
}

TEST(TrainLm, ResumedRunEqualsUninterruptedRun) {
  const std::string dir = test::temp_dir("train_lm_resume");
  const std::string corpus = write_corpus(dir, 3000);
  const int n = test::scaled(6);
  const TrainLmConfig cfg = config_with_steps(2 * n);
  ThreadPool pool(2);
  TrainLmOptions full;
  full.corpus = {corpus};
  full.out_dir = dir + "/full";
  run_train_lm(cfg, full, {}, pool);

  TrainLmOptions part = full;
  part.out_dir = dir + "/part";
  part.stop_after = n;
  EXPECT_EQ(run_train_lm(cfg, part, {}, pool).steps_done, n);
  part.stop_after = 0;
  part.resume = true;
  EXPECT_EQ(run_train_lm(cfg, part, {}, pool).steps_done, 2 * n);

  for (const char* f : {"tokenizer.model", "model.safetensors", "checkpoint.safetensors",
                        "config.json", "train_log.tsv", "loss_curve.svg"})
    EXPECT_TRUE(file_bytes(full.out_dir + "/" + f) == file_bytes(part.out_dir + "/" + f)) << f;
  // The loss curve: a header and one row per step, held-out losses on evaluation steps.
  const std::string log = file_bytes(full.out_dir + "/train_log.tsv");
  EXPECT_EQ(log.rfind("step\ttokens\tloss\tlr\theld_out_loss\n", 0), 0u) << log;
  EXPECT_EQ(std::count(log.begin(), log.end(), '\n'), 2 * n + 1) << log;

  // A resume with other settings is refused rather than silently diverging.
  const TrainLmConfig other = config_with_steps(2 * n + 1);
  EXPECT_THROW(run_train_lm(other, part, {}, pool), Error);
}

// --tokenizer: a draft model for sps:DIR must share its target's tokens. The given tokenizer.model
// is copied byte for byte (no tokenizer is trained), a resume with another file is refused, and a
// file whose vocabulary is not the config's is refused before anything is written.
TEST(TrainLm, ReusesAGivenTokenizer) {
  const std::string dir = test::temp_dir("train_lm_tokenizer");
  const std::string corpus = write_corpus(dir, 3000);
  const TrainLmConfig cfg = config_with_steps(2);
  ThreadPool pool(2);
  TrainLmOptions first;
  first.corpus = {corpus};
  first.out_dir = dir + "/first";
  run_train_lm(cfg, first, {}, pool);
  TrainLmOptions second = first;
  second.out_dir = dir + "/second";
  second.tokenizer = first.out_dir + "/tokenizer.model";
  std::vector<std::string> messages;
  TrainLmEvents ev;
  ev.message = [&](const std::string& m) { messages.push_back(m); };
  run_train_lm(cfg, second, ev, pool);
  EXPECT_EQ(file_bytes(second.out_dir + "/tokenizer.model"), file_bytes(second.tokenizer));
  EXPECT_EQ(messages.front(), "tokenizer: reusing " + second.tokenizer);
  // Resuming with another tokenizer file than the run used.
  TrainLmOptions resume = second;
  resume.resume = true;
  const std::string other = dir + "/other.model";
  {
    std::string bytes = file_bytes(second.tokenizer);
    bytes.back() ^= 1;
    std::ofstream(other, std::ios::binary) << bytes;
  }
  resume.tokenizer = other;
  EXPECT_THROW(run_train_lm(cfg, resume, {}, pool), Error);
  // A vocabulary of another size than the config's.
  const TrainLmConfig bigger = TrainLmConfig::parse(
      [] {
        std::string t = config_text(2);
        t.replace(t.find("\"vocab\": 384"), 12, "\"vocab\": 512");
        return t;
      }(),
      "test config");
  TrainLmOptions wrong = second;
  wrong.out_dir = dir + "/wrong";
  try {
    run_train_lm(bigger, wrong, {}, pool);
    ADD_FAILURE() << "a 384-token tokenizer trained a 512-token model";
  } catch (const Error& e) {
    EXPECT_NE(
        std::string(e.what()).find("384 tokens, but the config's model has a vocabulary of 512"),
        std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(fs::exists(wrong.out_dir + "/tokenizer.model"));
}

using test::CliRun;
using test::run_cli;

TEST(TrainLm, CliTrainsResumesAndGenerates) {
  const std::string dir = test::temp_dir("train_lm_cli");
  const std::string corpus = write_corpus(dir, 3000);
  const int steps = test::scaled(12);
  const std::string cfg_text = config_text(steps);
  const std::string cfg_path = dir + "/tiny.json";
  std::ofstream(cfg_path) << cfg_text;

  const std::string common = " --corpus " + corpus + " --config " + cfg_path + " -t 2";
  CliRun full = run_cli("train-lm" + common + " -o " + dir + "/full");
  ASSERT_EQ(full.code, 0) << full.out;
  EXPECT_NE(full.out.find("tok/s"), std::string::npos) << full.out;
  EXPECT_NE(full.out.find("ETA"), std::string::npos) << full.out;
  EXPECT_NE(full.out.find("held-out loss"), std::string::npos) << full.out;

  CliRun first = run_cli("train-lm" + common + " -o " + dir + "/part --stop-after " +
                         std::to_string(steps / 2));
  ASSERT_EQ(first.code, 0) << first.out;
  CliRun rest = run_cli("train-lm" + common + " -o " + dir + "/part --resume");
  ASSERT_EQ(rest.code, 0) << rest.out;
  EXPECT_NE(rest.out.find("resumed at step " + std::to_string(steps / 2)), std::string::npos)
      << rest.out;
  EXPECT_TRUE(file_bytes(dir + "/full/model.safetensors") ==
              file_bytes(dir + "/part/model.safetensors"));

  CliRun gen = run_cli("generate -m " + dir + "/full -p First -n 8 --temp 0");
  EXPECT_EQ(gen.code, 0) << gen.out;

  CliRun bad = run_cli("train-lm --corpus " + corpus + " --config " + corpus + " -o " + dir + "/x");
  EXPECT_EQ(bad.code, 1);
  EXPECT_NE(bad.out.find("error: "), std::string::npos) << bad.out;
}

}  // namespace
}  // namespace eagle2::train

// eagle2 train-lm: a SentencePiece tokenizer and a LLaMA model trained from scratch on text files,
// written in the Hugging Face layout that `eagle2 generate` loads (train/train_lm.h).
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "commands.h"
#include "eagle2/runtime.h"
#include "eagle2/train_lm.h"
#include "flag_checks.h"

namespace eagle2::cli {

using namespace eagle2::api;

namespace {

struct TrainLmFlags {
  std::vector<std::string> corpus, held_out;
  std::string config, out, tokenizer;
  bool resume = false;
  int threads = 0;
  int64_t stop_after = 0;
};

std::string duration(double s) {
  if (!std::isfinite(s) || s < 0) return "?";
  const auto total = static_cast<long long>(s + 0.5);
  char buf[32];
  if (total >= 3600)
    std::snprintf(buf, sizeof buf, "%lldh%02lldm", total / 3600, total / 60 % 60);
  else
    std::snprintf(buf, sizeof buf, "%lldm%02llds", total / 60, total % 60);
  return buf;
}

// One status line rewritten in place on a terminal; on a pipe or file (logs, CI) a plain line
// every 5% of the run instead of a flood of carriage returns.
class ProgressBar {
 public:
  ProgressBar() : tty_(isatty(fileno(stderr)) != 0) {}

  void update(const TrainLmProgress& p) {
    const auto now = std::chrono::steady_clock::now();
    const bool last = p.step >= p.steps;
    if (tty_) {
      if (!last && now - shown_ < std::chrono::milliseconds(100)) return;
    } else {
      const int64_t every = std::max<int64_t>(1, p.steps / 20);
      if (!last && p.step % every != 0) return;
    }
    shown_ = now;
    constexpr int kWidth = 24;
    const int filled = static_cast<int>(kWidth * p.step / std::max<int64_t>(1, p.steps));
    std::string bar(static_cast<size_t>(filled), '=');
    bar.resize(kWidth, ' ');
    std::fprintf(stderr, "%s[%s] step %lld/%lld  loss %.4f  lr %.2e  %.0f tok/s  ETA %s%s",
                 tty_ ? "\r" : "", bar.c_str(), static_cast<long long>(p.step),
                 static_cast<long long>(p.steps), p.loss, p.lr, p.tokens_per_s,
                 duration(p.eta_s).c_str(), tty_ ? "\x1b[K" : "\n");
    open_ = tty_;
    std::fflush(stderr);
  }
  // A report line (tokenizer, data, model, held-out loss) goes to stdout, as train-head's do:
  // stderr then holds only the bar, and a run that fails while loading prints nothing there but
  // its one error line. The in-place bar is ended first so that the two do not share a line.
  void line(const std::string& text) {
    if (open_) std::fputc('\n', stderr);
    open_ = false;
    std::printf("%s\n", text.c_str());
    std::fflush(stdout);
  }
  void finish() {
    if (open_) std::fputc('\n', stderr);
    open_ = false;
  }

 private:
  bool tty_;
  bool open_ = false;
  std::chrono::steady_clock::time_point shown_{};
};

int run_train_lm_command(const TrainLmFlags& f) {
  const TrainLmConfig cfg = TrainLmConfig::load(f.config);
  TrainLmOptions opt;
  opt.corpus = f.corpus;
  opt.held_out = f.held_out;
  opt.out_dir = f.out;
  opt.resume = f.resume;
  opt.stop_after = f.stop_after;
  opt.tokenizer = f.tokenizer;

  Threads threads(resolve_threads(f.threads));
  ProgressBar bar;
  TrainLmEvents ev;
  ev.message = [&](const std::string& s) { bar.line(s); };
  ev.step = [&](const TrainLmProgress& p) { bar.update(p); };
  ev.held_out = [&](int64_t step, double loss) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "step %lld: held-out loss %.4f (perplexity %.2f)",
                  static_cast<long long>(step), loss, std::exp(loss));
    bar.line(buf);
  };
  const TrainLmResult r = run_train_lm(cfg, opt, ev, threads);
  bar.finish();
  std::printf("wrote %s: %lld steps", f.out.c_str(), static_cast<long long>(r.steps_done));
  if (r.steps_run > 0)
    std::printf(" (%lld now), last loss %.4f, %.0f tokens/s", static_cast<long long>(r.steps_run),
                r.last_loss, r.tokens_per_s);
  if (std::isfinite(r.held_out_loss)) std::printf(", held-out loss %.4f", r.held_out_loss);
  std::printf("\n");
  return 0;
}

}  // namespace

Command add_train_lm(CLI::App& app) {
  auto f = std::make_shared<TrainLmFlags>();
  CLI::App* cmd = app.add_subcommand(
      "train-lm", "Train a SentencePiece tokenizer and a LLaMA model from scratch (HF layout)");
  cmd->add_option("--corpus", f->corpus,
                  "Training text: UTF-8 files, or folders (every file below, sorted by path); each "
                  "file is one document")
      ->required()
      ->check(CLI::ExistingPath);
  cmd->add_option("--config", f->config, "Model shape and training settings (JSON)")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("-o,--out", f->out, "Output model folder")->required();
  cmd->add_option("--held-out", f->held_out,
                  "Held-out text files or folders (default: the corpus's last held_out_fraction)")
      ->check(CLI::ExistingPath);
  cmd->add_option("--tokenizer", f->tokenizer,
                  "Reuse this SentencePiece tokenizer.model instead of training one (a draft model "
                  "for sps:DIR shares its target's tokens); its size must be the config's vocab")
      ->check(CLI::ExistingFile);
  cmd->add_flag("--resume", f->resume, "Continue from OUT/checkpoint.safetensors");
  add_threads_flag(*cmd, f->threads);
  cmd->add_option("--stop-after", f->stop_after,
                  "Stop (checkpointed) after this many steps in total, to --resume later")
      ->check(integer_in(1, INT64_MAX));
  return {cmd, [f] { return run_train_lm_command(*f); }};
}

}  // namespace eagle2::cli

// eagle2 train-head --arch eagle3 (train_head_eagle3.h).
#include <algorithm>
#include <cstdio>
#include <map>
#include <string>

#include "eagle2/head.h"
#include "train_head_eagle3.h"
#include "train_progress.h"

namespace eagle2::cli {

using namespace eagle2::api;

namespace {

// "s0 1.234/56.7% s1 ..." : each unrolled step's loss and top-1 agreement; with the state term,
// "; state 0.052/0.061/..." : its SmoothL1 per step (before --state-loss's weight).
std::string per_step(const Eagle3StepStats& s) {
  std::string out;
  for (size_t k = 0; k < s.loss.size(); ++k) {
    char buf[48];
    std::snprintf(buf, sizeof buf, "%ss%zu %.3f/%.1f%%", out.empty() ? "" : " ", k, s.loss[k],
                  100 * s.top1[k]);
    out += buf;
  }
  if (std::any_of(s.state.begin(), s.state.end(), [](double v) { return v != 0; })) {
    out += "; state ";
    for (size_t k = 0; k < s.state.size(); ++k) {
      char buf[24];
      std::snprintf(buf, sizeof buf, "%s%.4f", k ? "/" : "", s.state[k]);
      out += buf;
    }
  }
  return out;
}

}  // namespace

int train_eagle3_head(const Eagle3Run& run, Model& target, const HeadData& data,
                      const HeadData& held, Threads& threads) {
  Eagle3HeadTrainer head(target, data, run.init);
  std::printf(
      "draft vocabulary: %lld tokens of %lld (%lld distinct in the data), covering %.1f%% "
      "of the training tokens\n",
      static_cast<long long>(head.draft_vocab_size()),
      static_cast<long long>(target.config().vocab_size),
      static_cast<long long>(head.distinct_tokens()), 100 * head.vocab_coverage());
  if (run.init.scale_features) {
    std::string rms;
    for (float k : head.feature_scale()) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%s%.2f", rms.empty() ? "" : " / ", 1.0 / k);
      rms += buf;
    }
    std::printf(
        "feature layers' RMS (fc trains on them divided by it; the export folds it in): "
        "%s\n",
        rms.c_str());
  }
  if (run.init.teacher_temperature == 0)
    std::printf("teacher: one-hot on the target's argmax (--teacher-temperature 0)\n");
  else if (run.init.teacher_temperature != 1)
    std::printf("teacher: the target's distribution at temperature %g\n",
                run.init.teacher_temperature);
  const auto cpu0 = cpu_seconds();
  std::map<size_t, int64_t> by_depth;  // unrolled steps -> optimizer steps that unrolled them
  const Eagle3TrainResult r = head.train(
      data, run.train, threads, [&by_depth, last = -1.0](const Eagle3TrainProgress& p) mutable {
        ++by_depth[p.stats.loss.size()];
        const bool tty = stderr_is_tty();
        if (!progress_due(last, p.seconds, p.step, p.steps)) return;
        const double eta = eta_seconds(p.seconds, p.step, p.steps);
        std::fprintf(stderr, "%strain %lld/%lld loss %.4f (loss/top-1 %s) lr %.2e ETA %s%s",
                     tty ? "\r" : "", static_cast<long long>(p.step),
                     static_cast<long long>(p.steps), p.stats.total, per_step(p.stats).c_str(),
                     p.lr, clock(eta).c_str(), tty ? "   " : "\n");
        if (tty && p.step == p.steps) std::fprintf(stderr, "\n");
      });
  const auto cpu1 = cpu_seconds();
  head.save(run.out_dir, run.bf16 ? DType::BF16 : DType::F32);
  // With --ttt-warmup the first step unrolled once: its total is not comparable, step 0's is.
  const bool same = r.first.loss.size() == r.last.loss.size();
  std::printf(
      "trained an EAGLE-3 head (%lld unrolled steps) %lld steps at lr %.2e in %.1f s wall, "
      "%.1f s CPU: %s %.4f -> %.4f\n",
      static_cast<long long>(run.init.ttt_steps), static_cast<long long>(run.train.steps),
      run.train.lr, r.seconds, (cpu1.first + cpu1.second) - (cpu0.first + cpu0.second),
      same ? "loss" : "step-0 soft CE", same ? r.first.total : r.first.loss.front(),
      same ? r.last.total : r.last.loss.front());
  if (by_depth.size() > 1) {
    std::string mix;
    for (const auto& [depth, n] : by_depth)
      mix += (mix.empty() ? "" : ", ") + std::to_string(n) + " x " + std::to_string(depth);
    std::printf("optimizer steps x unrolled steps: %s\n", mix.c_str());
  }
  std::printf("last steps per unrolled step (soft CE/top-1): %s\n", per_step(r.last).c_str());
  std::printf("wrote %s (config.json + model.safetensors)\n", run.out_dir.c_str());
  if (!held.empty()) {
    const Eagle3Agreement a = head.agreement(held, run.eval_seq_len, threads);
    for (size_t k = 0; k < a.positions.size(); ++k)
      std::printf("held-out unrolled step %zu over %lld positions: top-1 %.1f%% (loss %.4f)\n", k,
                  static_cast<long long>(a.positions[k]), 100 * a.stats.top1[k], a.stats.loss[k]);
  }
  if (!run.tau_prompts.empty()) {
    // The folder as a user loads it: this also checks the export reads back.
    Head loaded = Head::load(run.out_dir, target);
    const double tau = measure_tau(target, loaded, run.tau_prompts, run.tau_tokens, threads);
    std::printf(
        "held-out tau (temperature 0, dynamic tree 60/5/10, %zu prompts, %lld new "
        "tokens): %.2f\n",
        run.tau_prompts.size(), static_cast<long long>(run.tau_tokens), tau);
  }
  const auto cpu = cpu_seconds();
  std::printf("cpu time of the whole run (data, training, evaluation): user %.1f s, sys %.1f s\n",
              cpu.first, cpu.second);
  return 0;
}

}  // namespace eagle2::cli

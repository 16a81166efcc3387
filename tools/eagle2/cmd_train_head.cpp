// eagle2 train-head: build an EAGLE head's training set with the target (self-distillation by
// default, or given text), train the head, write it in the published format, and report its
// held-out agreement with the target and its tau. --arch medusa|hydra trains Medusa or Hydra heads
// on the same data instead (the folder "medusa:DIR" / "hydra:DIR" drafts with); --arch eagle3 an
// EAGLE-3 head (cmd_train_head_eagle3.cpp), its data recorded with the target's layer features.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "commands.h"
#include "eagle2/error.h"
#include "eagle2/head.h"
#include "eagle2/model.h"
#include "eagle2/prompts.h"
#include "eagle2/runtime.h"
#include "eagle2/tokenizer.h"
#include "eagle2/train_head.h"
#include "flag_checks.h"
#include "train_head_eagle3.h"
#include "train_progress.h"

namespace eagle2::cli {

using namespace eagle2::api;

namespace {

struct TrainHeadFlags {
  RunFlags run;
  std::vector<std::string> prompt_files, text_files, eval_prompt_files;
  std::string out_dir;
  size_t limit = 0;           // prompts (or documents) used, from the start of the files
  size_t eval_last = 0;       // held-out prompts: the last N of the --eval-prompts files
  size_t opening_words = 16;  // text prompt files: the first N words of each document
  int64_t eval_count = 0;     // held-out prompts when no --eval-prompts (0: 10 %, at least 1)
  int64_t max_new = 160;
  int sampled = 1;
  bool no_greedy = false;
  bool fc_identity = false;
  HeadTrainOptions train;
  int64_t tau_tokens = 96;
  bool no_tau = false;
  std::string dtype = "f32";       // of the exported head tensors
  std::string arch = "eagle";      // eagle, eagle3, medusa, hydra
  int heads = 4, head_layers = 1;  // medusa, hydra
  Eagle3Init eagle3;               // eagle3
  bool lr_given = false, eagle_only_given = false, ce_given = false, heads_only_given = false,
       eagle3_only_given = false;
};

// The peak learning rate of Medusa and Hydra heads when --lr is not given: tuned on the bundled
// code model (models/README.md: 3e-3, 1e-2 and 3e-2 on short runs, 1e-2 best for both archs); the
// EAGLE default (2e-2) was tuned for a hidden size of 64.
constexpr double kHeadsDefaultLr = 1e-2;

std::vector<Prompt> load_all(const std::vector<std::string>& files, const PromptSetOptions& o) {
  std::vector<Prompt> all;
  for (const std::string& f : files) {
    std::vector<Prompt> p = load_prompt_set(f, o);
    all.insert(all.end(), p.begin(), p.end());
  }
  if (o.limit > 0 && all.size() > o.limit) all.resize(o.limit);
  return all;
}

std::vector<std::vector<int32_t>> encode_all(const Tokenizer& tok, const std::vector<Prompt>& p) {
  std::vector<std::vector<int32_t>> out;
  for (const Prompt& x : p) out.push_back(tok.encode(x.text, /*add_bos=*/true));
  return out;
}

void draw_bar(const char* what, int64_t done, int64_t total) {
  if (!stderr_is_tty()) {
    if (log_line_due(done, total))
      std::fprintf(stderr, "%s %lld/%lld\n", what, static_cast<long long>(done),
                   static_cast<long long>(total));
    return;
  }
  const int width = 30;
  const int filled = static_cast<int>(width * done / std::max<int64_t>(1, total));
  std::fprintf(stderr, "\r%s [%s%s] %lld/%lld", what, std::string(filled, '#').c_str(),
               std::string(width - filled, '.').c_str(), static_cast<long long>(done),
               static_cast<long long>(total));
  if (done == total) std::fprintf(stderr, "\n");
}

// --arch medusa|hydra on the data run_train_head built: train, save, and report per-head held-out
// agreement, tau with the drafter of the saved folder, and the CPU time.
int train_heads(const TrainHeadFlags& f, Model& target, const HeadData& data, const HeadData& held,
                const std::vector<std::vector<int32_t>>& eval_ids, int64_t cap, Threads& threads) {
  const bool hydra = f.arch == "hydra";
  HeadTrainOptions o = f.train;
  if (!f.lr_given) o.lr = kHeadsDefaultLr;
  MedusaTrainer heads(target, MedusaInit{hydra, f.heads, f.head_layers, f.train.seed});
  const auto cpu0 = cpu_seconds();
  const MedusaTrainResult r =
      heads.train(data, o, threads, [last = -1.0](const MedusaTrainProgress& p) mutable {
        const bool tty = stderr_is_tty();
        if (!progress_due(last, p.seconds, p.step, p.steps)) return;
        const double eta = eta_seconds(p.seconds, p.step, p.steps);
        std::string per_head;
        for (double l : p.loss.per_head) {
          char buf[32];
          std::snprintf(buf, sizeof buf, "%s%.3f", per_head.empty() ? "" : " ", l);
          per_head += buf;
        }
        std::fprintf(stderr, "%strain %lld/%lld loss %.4f (heads %s) lr %.2e ETA %s%s",
                     tty ? "\r" : "", static_cast<long long>(p.step),
                     static_cast<long long>(p.steps), p.loss.total, per_head.c_str(), p.lr,
                     clock(eta).c_str(), tty ? "   " : "\n");
        if (tty && p.step == p.steps) std::fprintf(stderr, "\n");
      });
  const auto cpu1 = cpu_seconds();
  heads.save(f.out_dir, f.dtype == "bf16" ? DType::BF16 : DType::F32);
  std::printf(
      "trained %d %s heads (%d layer(s) each) %lld steps at lr %.2e in %.1f s wall, "
      "%.1f s CPU: loss %.4f -> %.4f (per head:",
      f.heads, f.arch.c_str(), f.head_layers, static_cast<long long>(o.steps), o.lr, r.seconds,
      (cpu1.first + cpu1.second) - (cpu0.first + cpu0.second), r.first.total, r.last.total);
  for (double l : r.last.per_head) std::printf(" %.4f", l);
  std::printf(")\n");
  std::printf("wrote %s (config.json + model.safetensors)\n", f.out_dir.c_str());
  if (!held.empty()) {
    const MedusaAgreement a = heads.agreement(held, cap, threads);
    for (size_t k = 0; k < a.top1.size(); ++k)
      std::printf(
          "held-out head %zu (predicts x_{t+%zu}) over %lld positions: top-1 %.1f%%, "
          "top-5 %.1f%% (loss %.4f)\n",
          k + 1, k + 2, static_cast<long long>(a.positions[k]), 100 * a.top1[k], 100 * a.top5[k],
          a.loss.per_head[k]);
  }
  if (!f.no_tau && !eval_ids.empty()) {
    const DrafterSpec spec = parse_drafter_spec(f.arch + ":" + f.out_dir);
    const double tau = measure_tau(target, spec, eval_ids, f.tau_tokens, threads);
    std::printf("held-out tau (temperature 0, %s, %zu prompts, %lld new tokens): %.2f\n",
                spec.to_string().c_str(), eval_ids.size(), static_cast<long long>(f.tau_tokens),
                tau);
  }
  const auto cpu = cpu_seconds();
  std::printf("cpu time of the whole run (data, training, evaluation): user %.1f s, sys %.1f s\n",
              cpu.first, cpu.second);
  return 0;
}

int run_train_head(TrainHeadFlags f) {
  if (f.prompt_files.empty() && f.text_files.empty())
    fail("give --prompts (self-distillation) or --text (train on given text)");
  if (!f.prompt_files.empty() && !f.text_files.empty())
    fail("give either --prompts or --text, not both");
  if (f.arch != "eagle" && f.eagle_only_given)
    fail("--noise, --noise-relative and --fc-identity apply to --arch eagle only");
  if (f.arch != "eagle" && f.ce_given)
    fail("--ce-weight and --ce-temperature apply to --arch eagle only");
  if (f.arch != "medusa" && f.arch != "hydra" && f.heads_only_given)
    fail("--heads and --head-layers apply to --arch medusa and hydra only");
  if (f.arch != "eagle3" && f.eagle3_only_given)
    fail(
        "--ttt-steps, --ttt-warmup, --ttt-short-steps, --ttt-full-every, --state-loss, "
        "--scale-features, --teacher-temperature, --draft-vocab-size, --feature-layers and "
        "--intermediate apply to --arch eagle3 only");
  if (f.arch == "eagle3" && f.eagle3.ttt_steps < 3)
    fail("--ttt-steps ", f.eagle3.ttt_steps,
         " is too few for --arch eagle3 (at least 3; the reference unrolls 7)");
  // The trainer's rule, checked before minutes of data recording: the last 10 % run unrolled.
  const int64_t max_warmup = Eagle3HeadTrainer::max_ttt_warmup(f.train.steps);
  if (f.arch == "eagle3" && f.eagle3.ttt_warmup > max_warmup)
    fail("--ttt-warmup ", f.eagle3.ttt_warmup, " leaves too few of the ", f.train.steps,
         " --steps unrolled (at most ", max_warmup, ": the last 10 % train every unrolled step)");
  if (f.arch == "eagle3" && f.eagle3.ttt_short_steps > f.eagle3.ttt_steps)
    fail("--ttt-short-steps ", f.eagle3.ttt_short_steps, " exceeds --ttt-steps ",
         f.eagle3.ttt_steps);
  Model target = Model::load(f.run.model_dir);
  const Tokenizer tok = Tokenizer::open(f.run.model_dir);  // folder or GGUF, as generate
  Threads threads(resolve_threads(f.run));
  const int64_t cap = resolve_ctx(f.run, target.config().max_position_embeddings);

  const bool self = f.text_files.empty();
  PromptSetOptions po;
  po.limit = f.limit;
  po.opening_words = self ? f.opening_words : 0;
  const std::vector<Prompt> items = load_all(self ? f.prompt_files : f.text_files, po);
  std::vector<Prompt> eval_prompts;
  if (!f.eval_prompt_files.empty()) {
    PromptSetOptions eo;
    eo.opening_words = f.opening_words;
    eo.limit = f.eval_last;
    eo.from_end = f.eval_last > 0;
    eval_prompts = load_all(f.eval_prompt_files, eo);
  }
  const int64_t n_items = static_cast<int64_t>(items.size());
  // Held out: --eval-prompts, else the last prompts/documents of the training files.
  const int64_t n_held = !eval_prompts.empty()
                             ? 0
                             : std::clamp<int64_t>(f.eval_count > 0 ? f.eval_count : n_items / 10,
                                                   1, std::max<int64_t>(1, n_items - 1));
  if (n_items - n_held < 1) fail("need at least 2 prompts or documents (one is held out)");

  std::vector<std::vector<int32_t>> ids = encode_all(tok, items);
  std::vector<std::vector<int32_t>> eval_ids = encode_all(tok, eval_prompts);
  if (eval_prompts.empty()) {
    for (int64_t i = n_items - n_held; i < n_items; ++i) {
      std::vector<int32_t> p = ids[static_cast<size_t>(i)];
      // As a decoding prompt, a held-out document is cut to its opening.
      if (!self && p.size() > 24) p.resize(24);
      eval_ids.push_back(std::move(p));
    }
  }
  SelfDistillOptions so;
  so.max_new_tokens = f.max_new;
  so.sampled_per_prompt = f.sampled;
  so.greedy = !f.no_greedy;
  so.seed = f.train.seed;
  so.max_tokens = cap;
  // An EAGLE-3 head reads the inputs of three target layers: record them with the data.
  if (f.arch == "eagle3")
    so.feature_layers = Eagle3HeadTrainer::feature_layers(target, f.eagle3.feature_layers);
  HeadData all;
  const auto t_data = std::chrono::steady_clock::now();
  auto bar = [](int64_t done, int64_t total) { draw_bar("data ", done, total); };
  if (self) {
    std::vector<std::vector<int32_t>> prompts = ids;
    if (!eval_prompts.empty()) prompts.insert(prompts.end(), eval_ids.begin(), eval_ids.end());
    all = self_distill(target, prompts, so, threads, bar);
  } else {
    all = from_documents(target, ids, std::min<int64_t>(cap, f.train.seq_len + 1),
                         target.config().bos_token_id, threads, bar, so.feature_layers);
  }
  HeadData data, held;
  split_by_source(std::move(all),
                  !eval_prompts.empty() ? static_cast<int64_t>(eval_ids.size()) : n_held, data,
                  held);
  const double data_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t_data).count();
  std::printf(
      "data: %zu training sequences (%lld positions), %zu held-out (%lld positions), %s, "
      "%.1f s\n",
      data.size(), static_cast<long long>(data.positions()), held.size(),
      static_cast<long long>(held.positions()),
      self ? "self-distilled (greedy + temperature 1)" : "given text", data_s);
  std::printf("feature RMS %.3f\n", data.feature_rms());

  f.eagle3.seed = f.train.seed;
  if (f.arch == "eagle3")
    return train_eagle3_head(
        Eagle3Run{f.out_dir, f.dtype == "bf16", f.train, f.eagle3, cap,
                  f.no_tau ? std::vector<std::vector<int32_t>>{} : eval_ids, f.tau_tokens},
        target, data, held, threads);
  if (f.arch != "eagle") return train_heads(f, target, data, held, eval_ids, cap, threads);
  HeadTrainer head(target, HeadInit{f.train.seed, f.fc_identity});
  const HeadTrainResult r =
      head.train(data, f.train, threads, [last = -1.0](const HeadTrainProgress& p) mutable {
        const bool tty = stderr_is_tty();
        if (!progress_due(last, p.seconds, p.step, p.steps)) return;
        const double per_s = p.seconds > 0 ? static_cast<double>(p.positions) / p.seconds : 0;
        const double eta = eta_seconds(p.seconds, p.step, p.steps);
        const int width = 24;
        const int filled = static_cast<int>(width * p.step / p.steps);
        std::fprintf(stderr,
                     "%strain [%s%s] %lld/%lld loss %.4f (l1 %.4f ce %.3f) lr %.2e %.0f tok/s "
                     "ETA %s%s",
                     tty ? "\r" : "", std::string(filled, '#').c_str(),
                     std::string(width - filled, '.').c_str(), static_cast<long long>(p.step),
                     static_cast<long long>(p.steps), p.loss.total, p.loss.smooth_l1,
                     p.loss.soft_ce, p.lr, per_s, clock(eta).c_str(), tty ? "   " : "\n");
        if (tty && p.step == p.steps) std::fprintf(stderr, "\n");
      });
  head.save(f.out_dir, f.dtype == "bf16" ? DType::BF16 : DType::F32);
  std::printf(
      "trained %lld steps in %.1f s (%.0f positions/s): loss %.4f -> %.4f "
      "(smooth L1 %.4f, soft CE %.3f); noise +-%.3f\n",
      static_cast<long long>(f.train.steps), r.seconds,
      r.seconds > 0 ? static_cast<double>(r.positions) / r.seconds : 0.0, r.first.total,
      r.last.total, r.last.smooth_l1, r.last.soft_ce, r.noise_amplitude);
  std::printf("wrote %s (config.json + model.safetensors)\n", f.out_dir.c_str());

  if (!held.empty()) {
    const HeadAgreement a = head.agreement(held, cap, threads);
    std::printf(
        "held-out agreement with the target over %lld positions: top-1 %.1f%%, "
        "top-5 %.1f%%, top-10 %.1f%% (loss %.4f)\n",
        static_cast<long long>(a.positions), 100 * a.top1, 100 * a.top5, 100 * a.top10,
        a.loss.total);
  }
  if (!f.no_tau && !eval_ids.empty()) {
    Head loaded = Head::load(f.out_dir, target);
    const double tau = measure_tau(target, loaded, eval_ids, f.tau_tokens, threads);
    std::printf(
        "held-out tau (temperature 0, dynamic tree 60/5/10, %zu prompts, %lld new "
        "tokens): %.2f\n",
        eval_ids.size(), static_cast<long long>(f.tau_tokens), tau);
  }
  return 0;
}

}  // namespace

Command add_train_head(CLI::App& app) {
  auto f = std::make_shared<TrainHeadFlags>();
  CLI::App* cmd = app.add_subcommand(
      "train-head",
      "Train an EAGLE draft head for a target (self-distillation on prompts, or given text)");
  add_run_flags(*cmd, f->run);
  cmd->add_option("--prompts", f->prompt_files,
                  "Prompt sets (JSONL, or text documents separated by blank lines) to continue "
                  "with the target");
  cmd->add_option("--text", f->text_files,
                  "Train on these texts (documents separated by blank lines) instead");
  cmd->add_option("-o,--out", f->out_dir, "Head folder to write")->required();
  cmd->add_option("--eval-prompts", f->eval_prompt_files,
                  "Held-out prompt sets (default: the last 10% of the training prompts)");
  cmd->add_option("--eval-last", f->eval_last,
                  "Use the last N documents of the --eval-prompts files (0 = all)")
      ->check(integer_in(0, INT32_MAX));
  cmd->add_option("--eval-count", f->eval_count, "Held-out prompts taken from the training files")
      ->check(integer_in(0, INT32_MAX));
  cmd->add_option("--limit", f->limit, "Use the first N prompts/documents (0 = all)")
      ->check(integer_in(0, INT32_MAX));
  cmd->add_option("--opening-words", f->opening_words,
                  "Text prompt files: the first N words of each document (0 = whole)")
      ->check(integer_in(0, INT32_MAX));
  cmd->add_option("--max-new-tokens", f->max_new, "Continuation length per prompt")
      ->check(integer_in(1, int64_t{1} << 20));
  cmd->add_option("--sampled", f->sampled,
                  "Temperature-1 continuations per prompt (besides the greedy one)")
      ->check(integer_in(0, 64));
  cmd->add_flag("--no-greedy", f->no_greedy, "No greedy continuation");
  cmd->add_option("--steps", f->train.steps, "Optimizer steps")
      ->check(integer_in(1, int64_t{1} << 30));
  cmd->add_option("--lr", f->train.lr,
                  "Peak learning rate (default 2e-2; 1e-2 for --arch medusa and hydra)")
      ->check(number_in(0, 1e3, /*min_exclusive=*/true))
      ->each([f](const std::string&) { f->lr_given = true; });
  cmd->add_option("--warmup", f->train.warmup, "Warmup steps")
      ->check(integer_in(0, int64_t{1} << 30));
  cmd->add_option("--batch", f->train.batch, "Sequences (windows) per step")
      ->check(integer_in(1, int64_t{1} << 20));
  cmd->add_option("--seq-len", f->train.seq_len, "Head positions per window")
      ->check(integer_in(2, int64_t{1} << 20));
  cmd->add_option("--noise", f->train.noise, "Uniform feature noise half-width")
      ->check(number_in(0, 1e6))
      ->each([f](const std::string&) { f->eagle_only_given = true; });
  cmd->add_option("--ce-weight", f->train.ce_weight,
                  "--arch eagle: weight of the distribution loss beside the feature regression "
                  "(default 0.1 as EAGLE)")
      ->check(number_in(0, 1e3))
      ->each([f](const std::string&) { f->ce_given = true; });
  cmd->add_option("--ce-temperature", f->train.ce_temperature,
                  "--arch eagle: the distribution loss is the forward KL between the target's and "
                  "the head's softmax(logits / T): distil for sampled decoding at T (default 1 as "
                  "EAGLE)")
      ->check(number_in(0, 100, /*min_exclusive=*/true))
      ->each([f](const std::string&) { f->ce_given = true; });
  cmd->add_flag("--fc-identity", f->fc_identity,
                "Start fc's feature half at the identity (default: nn.Linear's random init)")
      ->each([f](const std::string&) { f->eagle_only_given = true; });
  cmd->add_flag("--noise-relative", f->train.noise_relative,
                "Scale --noise by the RMS of the features")
      ->each([f](const std::string&) { f->eagle_only_given = true; });
  cmd->add_option("--arch", f->arch,
                  "What to train: eagle (an EAGLE head, the default), eagle3 (an EAGLE-3 head: "
                  "three target layers' features, training-time test, its own draft vocabulary), "
                  "medusa (Medusa heads: K "
                  "residual heads on the target's last hidden state, head k predicting the token "
                  "k + 1 ahead) or hydra (Medusa heads that also read the embeddings of the tokens "
                  "drafted before theirs); medusa and hydra write the folder of --spec "
                  "medusa:DIR / hydra:DIR")
      ->check(CLI::IsMember({"eagle", "eagle3", "medusa", "hydra"}));
  cmd->add_option("--ttt-steps", f->eagle3.ttt_steps,
                  "--arch eagle3: steps the head is unrolled on its own outputs in training "
                  "(at least 3; default 7 as the reference)")
      ->check(integer_in(1, 64))
      ->each([f](const std::string&) { f->eagle3_only_given = true; });
  cmd->add_option("--ttt-warmup", f->eagle3.ttt_warmup,
                  "--arch eagle3: the first N optimizer steps train the first draft step alone "
                  "(a curriculum; cheaper steps; default 0)")
      ->check(integer_in(0, INT32_MAX))
      ->each([f](const std::string&) { f->eagle3_only_given = true; });
  cmd->add_option("--ttt-short-steps", f->eagle3.ttt_short_steps,
                  "--arch eagle3: unrolled steps of the cheaper optimizer steps (those of "
                  "--ttt-warmup and, with --ttt-full-every, the others; default 1: the first "
                  "draft step alone)")
      ->check(integer_in(1, 64))
      ->each([f](const std::string&) { f->eagle3_only_given = true; });
  cmd->add_option("--ttt-full-every", f->eagle3.ttt_full_every,
                  "--arch eagle3: after --ttt-warmup only every K-th optimizer step (counted "
                  "back from the last, and all of the last 10 %) unrolls --ttt-steps, the "
                  "others --ttt-short-steps (default 1: every step)")
      ->check(integer_in(1, INT32_MAX))
      ->each([f](const std::string&) { f->eagle3_only_given = true; });
  cmd->add_option("--state-loss", f->eagle3.state_loss,
                  "--arch eagle3: weight of an extra SmoothL1 loss pulling the head's normed "
                  "output onto the target's final-norm state, as EAGLE-1/2 heads are trained "
                  "(default 0: the reference's token loss only)")
      ->check(CLI::Range(0.0, 1000.0))
      ->each([f](const std::string&) { f->eagle3_only_given = true; });
  cmd->add_flag("--scale-features", f->eagle3.scale_features,
                "--arch eagle3: train fc on each feature layer divided by its RMS over the data "
                "(folded into the saved fc.weight, which reads raw features)")
      ->each([f](const std::string&) { f->eagle3_only_given = true; });
  cmd->add_option("--teacher-temperature", f->eagle3.teacher_temperature,
                  "--arch eagle3: temperature of the target's distribution the head learns "
                  "(default 1 as the reference; below 1 sharper, for greedy decoding; 0: the "
                  "target's argmax only)")
      ->check(CLI::Range(0.0, 100.0))
      ->each([f](const std::string&) { f->eagle3_only_given = true; });
  cmd->add_option("--draft-vocab-size", f->eagle3.draft_vocab_size,
                  "--arch eagle3: the head's draft vocabulary, the most frequent tokens of the "
                  "training data (default 1024, or the target's vocabulary if smaller)")
      ->check(integer_in(1, INT32_MAX))
      ->each([f](const std::string&) { f->eagle3_only_given = true; });
  cmd->add_option("--feature-layers", f->eagle3.feature_layers,
                  "--arch eagle3: the three target layers whose inputs the head reads, low to high "
                  "(default 2,L/2,L-3 as the reference; saved as eagle_aux_hidden_state_layer_ids)")
      ->delimiter(',')
      ->expected(3)
      ->each([f](const std::string&) { f->eagle3_only_given = true; });
  cmd->add_option("--intermediate", f->eagle3.intermediate,
                  "--arch eagle3: the head's MLP width (default the target's)")
      ->check(integer_in(1, int64_t{1} << 20))
      ->each([f](const std::string&) { f->eagle3_only_given = true; });
  cmd->add_option("--heads", f->heads, "--arch medusa/hydra: number of heads K (tree depth)")
      ->check(integer_in(1, 16))
      ->each([f](const std::string&) { f->heads_only_given = true; });
  cmd->add_option("--head-layers", f->head_layers, "--arch medusa/hydra: residual blocks per head")
      ->check(integer_in(1, 16))
      ->each([f](const std::string&) { f->heads_only_given = true; });
  cmd->add_option("--weight-decay", f->train.weight_decay, "AdamW weight decay")
      ->check(number_in(0, 1e6));
  cmd->add_option("--clip", f->train.clip_norm, "Gradient norm clip (0 = off)")
      ->check(number_in(0, 1e30));
  cmd->add_option("--seed", f->train.seed, "Seed (sampling, init, noise, shuffling)")
      ->check(seed_value());
  cmd->add_option("--tau-tokens", f->tau_tokens, "New tokens per held-out prompt for tau")
      ->check(integer_in(1, int64_t{1} << 20));
  cmd->add_flag("--no-tau", f->no_tau, "Skip the tau measurement");
  cmd->add_option("--dtype", f->dtype,
                  "Exported head tensors: f32 or bf16 (half the bytes per draft step)")
      ->check(CLI::IsMember({"f32", "bf16"}));
  return {cmd, [f] { return run_train_head(*f); }};
}

}  // namespace eagle2::cli

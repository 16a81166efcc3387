#include "train/train_lm.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "core/error.h"
#include "core/regular_file.h"
#include "io/atomic_file.h"
#include "tokenizer/tokenizer.h"
#include "train/loss_curve.h"

namespace eagle2::train {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Reads the keys of one section, failing on unknown keys and wrong types with "<where>: ...".
class Section {
 public:
  Section(const json& root, const char* name, const std::string& where)
      : name_(name), where_(where) {
    const auto it = root.find(name);
    if (it == root.end()) return;
    if (!it->is_object()) fail(where, ": \"", name, "\" must be an object");
    j_ = *it;
  }
  ~Section() = default;

  void check_known(const std::set<std::string>& known) const {
    for (const auto& [key, value] : j_.items())
      if (!known.count(key)) fail(where_, ": unknown key \"", name_, ".", key, "\"");
  }
  bool has(const char* key) const { return j_.contains(key); }

  int64_t integer(const char* key, int64_t fallback) const {
    if (!has(key)) return fallback;
    const json& v = j_.at(key);
    if (!v.is_number_integer()) fail(where_, ": \"", name_, ".", key, "\" must be an integer");
    return v.get<int64_t>();
  }
  double number(const char* key, double fallback) const {
    if (!has(key)) return fallback;
    const json& v = j_.at(key);
    if (!v.is_number()) fail(where_, ": \"", name_, ".", key, "\" must be a number");
    return v.get<double>();
  }
  bool boolean(const char* key, bool fallback) const {
    if (!has(key)) return fallback;
    const json& v = j_.at(key);
    if (!v.is_boolean()) fail(where_, ": \"", name_, ".", key, "\" must be true or false");
    return v.get<bool>();
  }
  std::string string(const char* key, const std::string& fallback) const {
    if (!has(key)) return fallback;
    const json& v = j_.at(key);
    if (!v.is_string()) fail(where_, ": \"", name_, ".", key, "\" must be a string");
    return v.get<std::string>();
  }
  int64_t required(const char* key) const {
    if (!has(key)) fail(where_, ": \"", name_, ".", key, "\" is required");
    return integer(key, 0);
  }

 private:
  json j_ = json::object();
  std::string name_, where_;
};

// Reads the training config, corpus files and the loss log; they share the corpus limit, the
// largest of them (the others are small by nature, and a wrong one is still bounded).
std::string read_text(const std::string& path) {
  return read_regular_file(path, read_limit::kCorpusFile, "a text file");
}

}  // namespace

std::vector<std::string> expand_text_paths(const std::vector<std::string>& paths) {
  std::vector<std::string> out;
  for (const std::string& p : paths) {
    std::error_code ec;
    const fs::file_status st = fs::status(p, ec);
    if (ec || !fs::exists(st)) fail(p, ": no such file or folder");
    if (!fs::is_directory(st)) {
      out.push_back(p);
      continue;
    }
    // Byte order of the full paths: the same tree gives the same order on every machine, so the
    // tokenizer and the token stream are reproducible.
    std::vector<std::string> files;
    for (auto it = fs::recursive_directory_iterator(p, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
      if (it->is_regular_file()) files.push_back(it->path().string());
    if (ec) fail(p, ": cannot list the folder: ", ec.message());
    if (files.empty()) fail(p, ": the folder has no files");
    std::sort(files.begin(), files.end());
    out.insert(out.end(), files.begin(), files.end());
  }
  return out;
}

namespace {

void say(const TrainLmEvents& ev, const std::string& line) {
  if (ev.message) ev.message(line);
}

}  // namespace

TrainLmConfig TrainLmConfig::parse(const std::string& text, const std::string& where) {
  const json root = json::parse(text, nullptr, false);
  if (root.is_discarded() || !root.is_object()) fail(where, ": not a JSON object");
  for (const auto& [key, value] : root.items())
    if (key != "model" && key != "tokenizer" && key != "train")
      fail(where, ": unknown section \"", key, "\" (model, tokenizer, train)");

  TrainLmConfig c;
  const Section m(root, "model", where);
  m.check_known({"hidden", "layers", "heads", "kv_heads", "intermediate", "vocab", "ctx", "tie",
                 "rope_theta", "rms_eps"});
  LlamaConfig& lc = c.model;
  lc.architecture = "LlamaForCausalLM";
  lc.hidden_size = m.required("hidden");
  lc.num_layers = m.required("layers");
  lc.num_heads = m.required("heads");
  lc.num_kv_heads = m.integer("kv_heads", lc.num_heads);
  lc.intermediate_size = m.required("intermediate");
  lc.vocab_size = m.required("vocab");
  lc.max_position_embeddings = m.integer("ctx", 2048);
  lc.tie_word_embeddings = m.boolean("tie", false);
  lc.rope_theta = static_cast<float>(m.number("rope_theta", 10000.0));
  lc.rms_norm_eps = static_cast<float>(m.number("rms_eps", 1e-5));
  lc.bos_token_id = 1;
  lc.eos_token_ids = {2};
  if (lc.num_heads <= 0 || lc.hidden_size % lc.num_heads != 0)
    fail(where, ": model.hidden (", lc.hidden_size,
         ") must be a positive multiple of model.heads (", lc.num_heads, ")");
  lc.head_dim = lc.hidden_size / lc.num_heads;
  lc = LlamaConfig::parse(lc.to_json(), where);  // every check a loaded config.json gets

  const Section tk(root, "tokenizer", where);
  tk.check_known({"character_coverage", "max_lines"});
  c.tokenizer.vocab_size = static_cast<int32_t>(lc.vocab_size);
  c.tokenizer.character_coverage = tk.number("character_coverage", 1.0);
  c.tokenizer.max_lines = tk.integer("max_lines", 0);

  const Section t(root, "train", where);
  t.check_known({"batch", "seq_len", "steps", "lr", "warmup", "min_lr", "weight_decay", "beta1",
                 "beta2", "clip", "init_std", "seed", "eval_every", "eval_batches",
                 "checkpoint_every", "held_out_fraction", "dtype"});
  LlamaTrainSettings& s = c.train;
  s.batch = t.integer("batch", s.batch);
  s.seq_len = t.integer("seq_len", std::min<int64_t>(s.seq_len, lc.max_position_embeddings));
  s.steps = t.integer("steps", s.steps);
  s.lr = t.number("lr", s.lr);
  s.warmup = t.integer("warmup", std::min<int64_t>(s.warmup, s.steps / 10));
  s.min_lr = t.number("min_lr", s.lr / 10);
  s.weight_decay = static_cast<float>(t.number("weight_decay", s.weight_decay));
  s.beta1 = static_cast<float>(t.number("beta1", s.beta1));
  s.beta2 = static_cast<float>(t.number("beta2", s.beta2));
  s.clip = static_cast<float>(t.number("clip", s.clip));
  s.init_std = static_cast<float>(t.number("init_std", s.init_std));
  const int64_t seed = t.integer("seed", 0);
  if (seed < 0) fail(where, ": \"train.seed\" must be non-negative");
  s.seed = static_cast<uint64_t>(seed);
  s.eval_batches = t.integer("eval_batches", s.eval_batches);
  c.tokenizer.seed = s.seed;
  c.eval_every = t.integer("eval_every", 0);
  c.checkpoint_every = t.integer("checkpoint_every", 0);
  if (c.eval_every < 0 || c.checkpoint_every < 0)
    fail(where, ": eval_every and checkpoint_every must be non-negative");
  c.held_out_fraction = t.number("held_out_fraction", c.held_out_fraction);
  if (!(c.held_out_fraction >= 0 && c.held_out_fraction < 1))
    fail(where, ": \"train.held_out_fraction\" must lie in [0, 1)");
  const std::string dtype = t.string("dtype", "f32");
  if (dtype == "f32")
    c.export_dtype = DType::F32;
  else if (dtype == "bf16")
    c.export_dtype = DType::BF16;
  else
    fail(where, ": \"train.dtype\" must be \"f32\" or \"bf16\", got \"", dtype, "\"");
  if (s.seq_len > lc.max_position_embeddings)
    fail(where, ": train.seq_len ", s.seq_len, " exceeds model.ctx ", lc.max_position_embeddings);
  try {
    s.validate();
  } catch (const Error& e) {
    fail(where, ": ", e.what());
  }
  return c;
}

TrainLmConfig TrainLmConfig::load(const std::string& path) {
  return parse(read_text(path), path);
}

std::vector<int32_t> tokenize_files(const std::string& tokenizer_path,
                                    const std::vector<std::string>& paths) {
  const auto tok = Tokenizer::load(tokenizer_path);
  std::vector<int32_t> out;
  for (const std::string& p : paths) {
    const std::vector<int32_t> ids = tok->encode(read_text(p), true);
    out.insert(out.end(), ids.begin(), ids.end());
  }
  return out;
}

TrainLmResult run_train_lm(const TrainLmConfig& cfg, const TrainLmOptions& opt,
                           const TrainLmEvents& ev, ThreadPool& pool) {
  if (opt.corpus.empty()) fail("train-lm: no corpus files given");
  const std::vector<std::string> corpus = expand_text_paths(opt.corpus);
  const std::vector<std::string> held_out_files = expand_text_paths(opt.held_out);
  if (opt.out_dir.empty()) fail("train-lm: no output folder given");
  const fs::path dir(opt.out_dir);
  const std::string tok_path = (dir / "tokenizer.model").string();
  const std::string ckpt_path = (dir / "checkpoint.safetensors").string();
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) fail(opt.out_dir, ": cannot create the output folder: ", ec.message());

  const std::string log_path = (dir / "train_log.tsv").string();
  // 1. Tokenizer (a resumed run must see exactly the tokens the first run saw).
  std::vector<TrainLogRow> logged;  // the loss curve so far, when resuming
  if (opt.resume) {
    if (!fs::exists(tok_path)) fail(tok_path, ": missing, cannot resume");
    if (!fs::exists(ckpt_path)) fail(ckpt_path, ": missing, cannot resume");
    // Checked before any work, so that a damaged log fails at once with its line and field.
    if (fs::exists(log_path)) {
      std::string text = read_text(log_path);
      // Rows end with '\n' once complete; a run killed while writing one leaves a partial last
      // row, of a step after its last checkpoint (which would be dropped below anyway).
      text.erase(text.find_last_of('\n') + 1);
      logged = parse_train_log(text, log_path);
    }
    say(ev, "tokenizer: reusing " + tok_path);
    if (!opt.tokenizer.empty() &&
        read_regular_file(opt.tokenizer, read_limit::kTokenizerModel, "tokenizer") !=
            read_regular_file(tok_path, read_limit::kTokenizerModel, "tokenizer"))
      fail(opt.tokenizer, ": differs from ", tok_path, ", which the run being resumed used");
  } else if (!opt.tokenizer.empty()) {
    // Checked before anything is written: a tokenizer of another size would train a model whose
    // ids the tokenizer cannot produce (or never produces).
    const int32_t vocab = Tokenizer::load(opt.tokenizer)->vocab_size();
    if (vocab != cfg.tokenizer.vocab_size)
      fail(opt.tokenizer, ": ", vocab, " tokens, but the config's model has a vocabulary of ",
           cfg.tokenizer.vocab_size);
    say(ev, "tokenizer: reusing " + opt.tokenizer);
    const std::string bytes =
        read_regular_file(opt.tokenizer, read_limit::kTokenizerModel, "tokenizer");
    AtomicFile out(tok_path);
    out.write(bytes.data(), bytes.size());
    out.commit();
  } else {
    say(ev, "tokenizer: training SentencePiece BPE, vocab " +
                std::to_string(cfg.tokenizer.vocab_size) + " ...");
    train_sentencepiece(corpus, tok_path, cfg.tokenizer);
  }

  // 2. Token streams.
  std::vector<int32_t> train_tokens = tokenize_files(tok_path, corpus);
  std::vector<int32_t> held_out;
  if (!held_out_files.empty()) {
    held_out = tokenize_files(tok_path, held_out_files);
  } else if (cfg.held_out_fraction > 0) {
    const auto n_held =
        static_cast<size_t>(static_cast<double>(train_tokens.size()) * cfg.held_out_fraction);
    // Only split when both parts stay usable; a tiny corpus trains on everything.
    if (n_held >= 2 && train_tokens.size() - n_held > static_cast<size_t>(cfg.train.seq_len)) {
      held_out.assign(train_tokens.end() - static_cast<std::ptrdiff_t>(n_held), train_tokens.end());
      train_tokens.resize(train_tokens.size() - n_held);
    }
  }
  say(ev, "data: " + std::to_string(train_tokens.size()) + " training tokens, " +
              std::to_string(held_out.size()) + " held out");

  // 3. Model and optimizer state.
  TrainLmResult res;
  res.train_tokens = static_cast<int64_t>(train_tokens.size());
  res.held_out_tokens = static_cast<int64_t>(held_out.size());
  LlamaTrainer trainer(cfg.model, cfg.train, std::move(train_tokens), std::move(held_out));
  if (opt.resume) {
    trainer.load_checkpoint(ckpt_path);
    say(ev, "resumed at step " + std::to_string(trainer.steps_done()));
  }
  const int64_t n_params = total_numel(trainer.model().params());
  say(ev, "model: " + std::to_string(n_params) + " parameters, " + std::to_string(cfg.train.steps) +
              " steps of " + std::to_string(trainer.tokens_per_step()) + " tokens");

  // The loss curve, one row per step: rewritten on a fresh run; on a resume, rows past the
  // checkpoint (steps run after it by a run that then died) are dropped, so the file always
  // describes the run the weights come from.
  {
    std::ofstream out(log_path, std::ios::trunc);
    out << "step\ttokens\tloss\tlr\theld_out_loss\n";
    for (const TrainLogRow& row : logged)
      if (row.step <= trainer.steps_done()) out << row.text << '\n';
    if (!out) fail(log_path, ": cannot write");
  }
  std::ofstream log(log_path, std::ios::app);

  const std::string curve_path = (dir / "loss_curve.svg").string();
  const auto save = [&] {
    trainer.save_checkpoint(ckpt_path);
    trainer.model().export_hf(opt.out_dir, cfg.export_dtype);
    // About 50 points whatever the run's length.
    const int64_t bucket = std::max<int64_t>(1, cfg.train.steps / 50);
    const LossCurve curve = parse_loss_curve(read_text(log_path), bucket, log_path);
    std::ofstream svg(curve_path, std::ios::binary | std::ios::trunc);
    svg << render_loss_curve(curve, "train-lm loss, " + std::to_string(n_params) + " parameters");
    if (!svg) fail(curve_path, ": cannot write");
  };
  const auto evaluate = [&] {
    res.held_out_loss = trainer.held_out_loss(pool);
    if (ev.held_out && trainer.has_held_out()) ev.held_out(trainer.steps_done(), res.held_out_loss);
  };

  // 4. The loop.
  using clock = std::chrono::steady_clock;
  const auto t0 = clock::now();
  int64_t run_steps = 0;
  res.held_out_loss = std::numeric_limits<double>::quiet_NaN();
  res.last_loss = std::numeric_limits<double>::quiet_NaN();
  while (!trainer.finished()) {
    if (opt.stop_after > 0 && trainer.steps_done() >= opt.stop_after) break;
    TrainLmProgress p;
    p.stats = trainer.step(pool);
    ++run_steps;
    if (!std::isfinite(p.stats.loss))
      fail("train-lm: the loss diverged at step ", trainer.steps_done(), " (try a lower lr)");
    p.step = trainer.steps_done();
    p.steps = cfg.train.steps;
    const double secs = std::chrono::duration<double>(clock::now() - t0).count();
    p.tokens_per_s =
        secs > 0 ? static_cast<double>(run_steps * trainer.tokens_per_step()) / secs : 0;
    p.eta_s = secs / static_cast<double>(run_steps) * static_cast<double>(p.steps - p.step);
    res.last_loss = p.stats.loss;
    res.tokens_per_s = p.tokens_per_s;
    if (ev.step) ev.step(p);
    const bool eval_now =
        trainer.finished() || (cfg.eval_every > 0 && p.step % cfg.eval_every == 0);
    if (eval_now) evaluate();
    char row[160];
    std::snprintf(row, sizeof row, "%lld\t%lld\t%.5f\t%.4e\t", static_cast<long long>(p.step),
                  static_cast<long long>(p.step * trainer.tokens_per_step()), p.stats.loss,
                  p.stats.lr);
    log << row;
    if (eval_now && std::isfinite(res.held_out_loss)) {
      std::snprintf(row, sizeof row, "%.5f", res.held_out_loss);
      log << row;
    }
    log << '\n' << std::flush;
    if (cfg.checkpoint_every > 0 && p.step % cfg.checkpoint_every == 0 && !trainer.finished())
      save();
  }
  if (trainer.finished() && run_steps == 0) evaluate();
  save();
  res.steps_done = trainer.steps_done();
  res.steps_run = run_steps;
  return res;
}

}  // namespace eagle2::train

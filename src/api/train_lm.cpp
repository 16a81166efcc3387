// eagle2/train_lm.h over train/train_lm.h.
#include "eagle2/train_lm.h"

#include "api/handles.h"

namespace eagle2::api {

TrainLmConfig TrainLmConfig::load(const std::string& path) {
  return TrainLmConfig(std::make_unique<Impl>(Impl{train::TrainLmConfig::load(path)}));
}

TrainLmConfig::TrainLmConfig(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
TrainLmConfig::~TrainLmConfig() = default;
TrainLmConfig::TrainLmConfig(TrainLmConfig&&) noexcept = default;
TrainLmConfig& TrainLmConfig::operator=(TrainLmConfig&&) noexcept = default;

TrainLmResult run_train_lm(const TrainLmConfig& config, const TrainLmOptions& options,
                           const TrainLmEvents& events, Threads& threads) {
  train::TrainLmOptions opt;
  opt.corpus = options.corpus;
  opt.held_out = options.held_out;
  opt.out_dir = options.out_dir;
  opt.resume = options.resume;
  opt.stop_after = options.stop_after;
  opt.tokenizer = options.tokenizer;
  // Each event is passed on only when the caller listens to it.
  train::TrainLmEvents ev;
  ev.message = events.message;
  ev.held_out = events.held_out;
  if (events.step) {
    ev.step = [&events](const train::TrainLmProgress& p) {
      events.step(
          TrainLmProgress{p.step, p.steps, p.stats.loss, p.stats.lr, p.tokens_per_s, p.eta_s});
    };
  }
  const train::TrainLmResult r =
      train::run_train_lm(config.impl().config, opt, ev, threads.impl().pool);
  return TrainLmResult{r.steps_done, r.steps_run,     r.train_tokens, r.held_out_tokens,
                       r.last_loss,  r.held_out_loss, r.tokens_per_s};
}

}  // namespace eagle2::api

// eagle2/train_head.h's EAGLE-3 part over train/eagle3_trainer.h.
#include <algorithm>

#include "api/convert.h"
#include "api/handles.h"
#include "eagle2/train_head.h"
#include "train/eagle3_trainer.h"

namespace eagle2::api {

namespace {

Eagle3StepStats to_public(const train::Eagle3StepStats& s) {
  return {s.total, s.loss, s.top1, s.state};
}

}  // namespace

struct Eagle3HeadTrainer::Impl {
  Impl(const LlamaModel& target, train::Eagle3DraftVocab v, const Eagle3Init& init,
       std::vector<float> feature_scale)
      : vocab(std::move(v)),
        ttt_steps(init.ttt_steps),
        ttt_warmup(init.ttt_warmup),
        ttt_short_steps(init.ttt_short_steps),
        ttt_full_every(init.ttt_full_every),
        state_loss(init.state_loss),
        trainer(target, vocab.ids,
                train::Eagle3Init{init.seed, init.intermediate, init.feature_layers,
                                  std::move(feature_scale),
                                  static_cast<float>(init.teacher_temperature)}) {}
  train::Eagle3DraftVocab vocab;
  int64_t ttt_steps, ttt_warmup, ttt_short_steps, ttt_full_every;
  double state_loss;
  train::Eagle3Trainer trainer;
};

std::vector<int32_t> Eagle3HeadTrainer::feature_layers(const Model& target,
                                                       const std::vector<int32_t>& chosen) {
  return train::eagle3_layers(*target.impl().model, chosen);
}

int64_t Eagle3HeadTrainer::max_ttt_warmup(int64_t steps) {
  return train::max_ttt_warmup(steps);
}

Eagle3HeadTrainer::Eagle3HeadTrainer(const Model& target, const HeadData& data,
                                     const Eagle3Init& init) {
  const LlamaModel& m = *target.impl().model;
  const int64_t V = m.config().vocab_size;
  const auto& sequences = data.impl().sequences;
  std::vector<float> scale;
  if (init.scale_features)
    scale = train::eagle3_feature_scale(
        sequences, static_cast<int64_t>(train::eagle3_layers(m, init.feature_layers).size()),
        m.config().hidden_size);
  impl_ = std::make_unique<Impl>(
      m, train::eagle3_draft_vocab(sequences, V, std::min(init.draft_vocab_size, V)), init,
      std::move(scale));
}
Eagle3HeadTrainer::~Eagle3HeadTrainer() = default;

int64_t Eagle3HeadTrainer::draft_vocab_size() const {
  return static_cast<int64_t>(impl_->vocab.ids.size());
}
std::vector<float> Eagle3HeadTrainer::feature_scale() const {
  return impl_->trainer.feature_scale();
}
double Eagle3HeadTrainer::vocab_coverage() const {
  return impl_->vocab.coverage;
}
int64_t Eagle3HeadTrainer::distinct_tokens() const {
  return impl_->vocab.distinct;
}

Eagle3TrainResult Eagle3HeadTrainer::train(
    const HeadData& data, const HeadTrainOptions& o, Threads& threads,
    const std::function<void(const Eagle3TrainProgress&)>& progress) {
  train::Eagle3TrainOptions t;
  t.steps = o.steps;
  t.batch = o.batch;
  t.seq_len = o.seq_len;
  t.warmup = o.warmup;
  t.ttt_steps = impl_->ttt_steps;
  t.ttt_warmup = impl_->ttt_warmup;
  t.ttt_short_steps = impl_->ttt_short_steps;
  t.ttt_full_every = impl_->ttt_full_every;
  t.state_weight = impl_->state_loss;
  t.lr = o.lr;
  t.min_lr_ratio = o.min_lr_ratio;
  t.clip_norm = o.clip_norm;
  t.weight_decay = o.weight_decay;
  t.seed = o.seed;
  std::function<void(const train::Eagle3TrainProgress&)> callback;
  if (progress) {
    callback = [&progress](const train::Eagle3TrainProgress& p) {
      progress(Eagle3TrainProgress{p.step, p.steps, to_public(p.stats), p.lr, p.grad_norm,
                                   p.seconds, p.positions});
    };
  }
  const train::Eagle3TrainResult r =
      train::train_eagle3(impl_->trainer, data.impl().sequences, t, threads.impl().pool, callback);
  return Eagle3TrainResult{to_public(r.first), to_public(r.last), r.seconds, r.positions};
}

void Eagle3HeadTrainer::save(const std::string& dir, DType dtype) const {
  impl_->trainer.save(dir, to_internal(dtype));
}

Eagle3Agreement Eagle3HeadTrainer::agreement(const HeadData& held_out, int64_t seq_len,
                                             Threads& threads) {
  const train::Eagle3Agreement a = train::evaluate_eagle3(
      impl_->trainer, held_out.impl().sequences, seq_len, impl_->ttt_steps, threads.impl().pool);
  return Eagle3Agreement{a.positions, to_public(a.stats)};
}

}  // namespace eagle2::api

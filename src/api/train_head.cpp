// eagle2/train_head.h over train/head_data.h and train/eagle_head_trainer.h.
#include "eagle2/train_head.h"

#include "api/convert.h"
#include "api/handles.h"
#include "core/error.h"
#include "speculative/drafter_spec.h"
#include "train/eagle_head_trainer.h"
#include "train/medusa_trainer.h"

namespace eagle2::api {

namespace {

HeadData wrap(std::vector<train::HeadSequence> sequences) {
  return HeadData(std::make_unique<HeadData::Impl>(HeadData::Impl{std::move(sequences)}));
}

}  // namespace

HeadData::HeadData() : impl_(std::make_unique<Impl>()) {}
HeadData::HeadData(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
HeadData::~HeadData() = default;
HeadData::HeadData(HeadData&&) noexcept = default;
HeadData& HeadData::operator=(HeadData&&) noexcept = default;

size_t HeadData::size() const {
  return impl_->sequences.size();
}
int64_t HeadData::positions() const {
  return train::count_positions(impl_->sequences);
}
double HeadData::feature_rms() const {
  return train::feature_rms(impl_->sequences);
}

HeadData self_distill(Model& target, const std::vector<std::vector<int32_t>>& prompts,
                      const SelfDistillOptions& options, Threads& threads,
                      const DataProgress& progress) {
  return wrap(train::self_distill(*target.impl().model, prompts, to_internal(options),
                                  threads.impl().pool, progress));
}

HeadData from_documents(Model& target, const std::vector<std::vector<int32_t>>& documents,
                        int64_t max_tokens, int32_t bos, Threads& threads,
                        const DataProgress& progress, const std::vector<int32_t>& feature_layers) {
  return wrap(train::from_documents(*target.impl().model, documents, max_tokens, bos,
                                    threads.impl().pool, progress, feature_layers));
}

void split_by_source(HeadData all, int64_t eval_sources, HeadData& to_train, HeadData& to_eval) {
  train::split_by_source(std::move(all.impl().sequences), eval_sources, to_train.impl().sequences,
                         to_eval.impl().sequences);
}

struct HeadTrainer::Impl {
  Impl(const LlamaModel& target, const train::HeadInit& init) : trainer(target, init) {}
  train::EagleHeadTrainer trainer;
};

HeadTrainer::HeadTrainer(const Model& target, const HeadInit& init)
    : impl_(std::make_unique<Impl>(*target.impl().model, to_internal(init))) {}
HeadTrainer::~HeadTrainer() = default;

HeadTrainResult HeadTrainer::train(const HeadData& data, const HeadTrainOptions& options,
                                   Threads& threads,
                                   const std::function<void(const HeadTrainProgress&)>& progress) {
  train::HeadTrainCallback callback;
  if (progress) {
    callback = [&progress](const train::HeadTrainProgress& p) {
      progress(HeadTrainProgress{p.step, p.steps, to_public(p.loss), p.lr, p.grad_norm, p.positions,
                                 p.seconds});
    };
  }
  const train::HeadTrainResult r = train::train_head(
      impl_->trainer, data.impl().sequences, to_internal(options), threads.impl().pool, callback);
  return HeadTrainResult{to_public(r.first), to_public(r.last), r.seconds, r.positions,
                         r.noise_amplitude};
}

void HeadTrainer::save(const std::string& dir, DType dtype) const {
  impl_->trainer.save(dir, to_internal(dtype));
}

HeadAgreement HeadTrainer::agreement(const HeadData& held_out, int64_t seq_len, Threads& threads) {
  const train::HeadAgreement a = train::evaluate_agreement(
      impl_->trainer, held_out.impl().sequences, seq_len, threads.impl().pool);
  return HeadAgreement{a.positions, a.top1, a.top5, a.top10, to_public(a.loss)};
}

double measure_tau(Model& target, Head& head, const std::vector<std::vector<int32_t>>& prompts,
                   int64_t max_new_tokens, Threads& threads) {
  return train::measure_tau(*target.impl().model, *head.impl().head, prompts, max_new_tokens,
                            threads.impl().pool);
}

double measure_tau(Model& target, const DrafterSpec& spec,
                   const std::vector<std::vector<int32_t>>& prompts, int64_t max_new_tokens,
                   Threads& threads) {
  LlamaModel& model = *target.impl().model;
  DraftPolicies policies(nullptr, &model);
  const int64_t ctx = train::tau_context(model, prompts, max_new_tokens);
  std::unique_ptr<eagle2::Drafter> drafter =
      make_drafter(to_internal(spec), nullptr, threads.impl().pool, ctx, policies, 0.0f);
  if (!drafter) fail("measure_tau: drafter '", spec.label, "' drafts nothing (plain)");
  return train::measure_tau(model, *drafter, prompts, max_new_tokens, threads.impl().pool);
}

namespace {

MedusaLoss to_public(const train::MedusaLoss& l) {
  return MedusaLoss{l.total, l.per_head};
}

}  // namespace

struct MedusaTrainer::Impl {
  Impl(const LlamaModel& target, const train::MedusaInit& init) : trainer(target, init) {}
  train::MedusaTrainer trainer;
};

MedusaTrainer::MedusaTrainer(const Model& target, const MedusaInit& init)
    : impl_(std::make_unique<Impl>(
          *target.impl().model,
          train::MedusaInit{init.hydra, init.heads, init.layers, init.seed})) {}
MedusaTrainer::~MedusaTrainer() = default;

MedusaTrainResult MedusaTrainer::train(
    const HeadData& data, const HeadTrainOptions& options, Threads& threads,
    const std::function<void(const MedusaTrainProgress&)>& progress) {
  std::function<void(const train::MedusaTrainProgress&)> callback;
  if (progress) {
    callback = [&progress](const train::MedusaTrainProgress& p) {
      progress(MedusaTrainProgress{p.step, p.steps, to_public(p.loss), p.lr, p.grad_norm,
                                   p.positions, p.seconds});
    };
  }
  const train::MedusaTrainResult r = train::train_medusa(
      impl_->trainer, data.impl().sequences, to_internal(options), threads.impl().pool, callback);
  return MedusaTrainResult{to_public(r.first), to_public(r.last), r.seconds, r.positions};
}

void MedusaTrainer::save(const std::string& dir, DType dtype) const {
  impl_->trainer.save(dir, to_internal(dtype));
}

MedusaAgreement MedusaTrainer::agreement(const HeadData& held_out, int64_t seq_len,
                                         Threads& threads) {
  const train::MedusaAgreement a = train::evaluate_medusa_agreement(
      impl_->trainer, held_out.impl().sequences, seq_len, threads.impl().pool);
  return MedusaAgreement{a.positions, a.top1, a.top5, to_public(a.loss)};
}

}  // namespace eagle2::api

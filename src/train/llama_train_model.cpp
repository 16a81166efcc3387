#include "train/llama_train_model.h"

#include <cmath>
#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "io/safetensors.h"
#include "model/checkpoint_checks.h"
#include "train/embedding.h"
#include "train/linear.h"
#include "train/lm_head_loss.h"
#include "train/rmsnorm.h"

namespace eagle2::train {

namespace {

// Round-trips through the parser so that the same checks apply as to a loaded config.json.
LlamaConfig validated(const LlamaConfig& cfg) {
  return LlamaConfig::parse(cfg.to_json(), "model config");
}

}  // namespace

LlamaTrainModel::LlamaTrainModel(const LlamaConfig& cfg)
    : cfg_(validated(cfg)),
      embed_("model.embed_tokens.weight", {cfg_.vocab_size, cfg_.hidden_size}),
      final_norm_("model.norm.weight", {cfg_.hidden_size}, false) {
  if (cfg_.sliding_window) fail("model config: training with a sliding window is not supported");
  if (cfg_.qkv_bias || cfg_.qk_norm || !cfg_.rope_freq_factors.empty())
    fail("model config: train-lm trains LLaMA models, not ", cfg_.architecture);
  block_cfg_ = DecoderBlockConfig::from(cfg_, /*input_norm=*/true);

  std::fill(final_norm_.value.begin(), final_norm_.value.end(), 1.0f);
  params_.push_back(&embed_);
  for (int64_t l = 0; l < cfg_.num_layers; ++l) {
    layers_.push_back(std::make_unique<DecoderBlockWeights>(
        block_cfg_, "model.layers." + std::to_string(l) + "."));
    layers_.back()->collect(params_);
  }
  params_.push_back(&final_norm_);
  if (!cfg_.tie_word_embeddings) {
    lm_head_ = std::make_unique<Parameter>("lm_head.weight",
                                           std::vector<int64_t>{cfg_.vocab_size, cfg_.hidden_size});
    params_.push_back(lm_head_.get());
  }
  acts_.resize(static_cast<size_t>(cfg_.num_layers));
}

void LlamaTrainModel::init(uint64_t seed, float std) {
  TrainRng rng(seed);
  for (float& x : embed_.value) x = std * normal_sample(rng);
  const float out_std = std / std::sqrt(2.0f * static_cast<float>(cfg_.num_layers));
  for (auto& layer : layers_) layer->init(rng, std, out_std);
  std::fill(final_norm_.value.begin(), final_norm_.value.end(), 1.0f);
  if (lm_head_)
    for (float& x : lm_head_->value) x = std * normal_sample(rng);
}

void LlamaTrainModel::load_weights(const std::string& dir) {
  const TensorStore store = TensorStore::open_dir(dir);
  for (Parameter* p : params_) {
    const TensorView& t = require_float(store.get(p->name, p->shape));
    convert_to_f32(t.dtype, t.data, p->value.data(), p->value.size());
  }
}

void LlamaTrainModel::export_hf(const std::string& dir, DType dtype) const {
  if (dtype != DType::F32 && dtype != DType::BF16)
    fail("export: dtype ", dtype_name(dtype), " is not supported (F32 or BF16)");
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) fail(dir, ": cannot create directory: ", ec.message());

  std::vector<std::vector<uint16_t>> narrowed;
  const std::vector<TensorToWrite> tensors = export_tensors(params_, dtype, narrowed);
  write_safetensors((std::filesystem::path(dir) / "model.safetensors").string(), tensors,
                    {{"format", "pt"}});

  const std::string path = (std::filesystem::path(dir) / "config.json").string();
  std::ofstream out(path, std::ios::trunc);
  out << cfg_.to_json() << "\n";
  if (!out) fail(path, ": write error");
}

void LlamaTrainModel::forward(const int32_t* inputs, int64_t B, int64_t T, ThreadPool& pool) {
  if (B <= 0 || T <= 0) fail("train forward: empty batch (", B, " x ", T, ")");
  if (T > cfg_.max_position_embeddings)
    fail("train forward: sequence length ", T, " exceeds max_position_embeddings ",
         cfg_.max_position_embeddings);
  const int64_t M = B * T, C = cfg_.hidden_size;
  positions_.resize(static_cast<size_t>(M));
  for (int64_t i = 0; i < M; ++i) positions_[i] = static_cast<int32_t>(i % T);
  x_.resize(static_cast<size_t>(M * C));
  xf_.resize(static_cast<size_t>(M * C));
  rstd_f_.resize(static_cast<size_t>(M));

  embedding_forward(x_.data(), inputs, M, embed_.matrix(), pool);
  for (size_t l = 0; l < layers_.size(); ++l) {
    acts_[l].resize(block_cfg_, B, T);
    decoder_block_forward(block_cfg_, layers_[l]->params(), x_.data(), x_.data(), positions_.data(),
                          acts_[l], pool);
  }
  rmsnorm_forward(xf_.data(), rstd_f_.data(), x_.data(), final_norm_.value.data(),
                  cfg_.rms_norm_eps, M, C, pool);
}

double LlamaTrainModel::forward_backward(const int32_t* inputs, const int32_t* targets, int64_t B,
                                         int64_t T, bool backward, ThreadPool& pool) {
  forward(inputs, B, T, pool);
  const int64_t M = B * T, C = cfg_.hidden_size;
  Parameter& W = head();
  if (!backward)
    return lm_head_cross_entropy(xf_.data(), targets, nullptr, M, W.matrix(), nullptr, nullptr,
                                 nullptr, 1.0f, pool);

  dxf_.assign(static_cast<size_t>(M * C), 0.0f);
  const double loss = lm_head_cross_entropy(xf_.data(), targets, nullptr, M, W.matrix(), nullptr,
                                            dxf_.data(), W.grad.data(), 1.0f, pool);
  dx_.assign(static_cast<size_t>(M * C), 0.0f);
  rmsnorm_backward(dx_.data(), final_norm_.grad.data(), dxf_.data(), x_.data(),
                   final_norm_.value.data(), rstd_f_.data(), M, C, pool);
  for (size_t l = layers_.size(); l-- > 0;)
    decoder_block_backward(block_cfg_, layers_[l]->params(), dx_.data(), acts_[l], scratch_, pool);
  embedding_backward(embed_.grad.data(), dx_.data(), inputs, M, cfg_.vocab_size, C, pool);
  return loss;
}

std::vector<float> LlamaTrainModel::hidden_states(const int32_t* inputs, int64_t B, int64_t T,
                                                  ThreadPool& pool) {
  forward(inputs, B, T, pool);
  return xf_;
}

std::vector<float> LlamaTrainModel::logits(const int32_t* inputs, int64_t B, int64_t T,
                                           ThreadPool& pool) {
  forward(inputs, B, T, pool);
  const int64_t M = B * T;
  std::vector<float> out(static_cast<size_t>(M * cfg_.vocab_size));
  linear_forward(out.data(), xf_.data(), M, head().matrix(), nullptr, pool);
  return out;
}

}  // namespace eagle2::train

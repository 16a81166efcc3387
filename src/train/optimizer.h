// AdamW, gradient clipping and the learning-rate schedule.
#pragma once

#include <cstdint>
#include <vector>

#include "core/thread_pool.h"
#include "train/parameter.h"

namespace eagle2::train {

struct AdamWConfig {
  float beta1 = 0.9f;
  float beta2 = 0.999f;
  float eps = 1e-8f;
  float weight_decay = 0.0f;  // decoupled; only on parameters with decay set
};

// AdamW (Loshchilov & Hutter) in PyTorch's formulation, per element, at step t (1-based):
//   p <- p * (1 - lr * wd)                      (decoupled decay, before the Adam update)
//   m <- b1 m + (1 - b1) g,   v <- b2 v + (1 - b2) g^2
//   p <- p - (lr / (1 - b1^t)) * m / (sqrt(v) / sqrt(1 - b2^t) + eps)
// Bias corrections are computed in double and rounded to float once per step. The moments are
// bound to the parameter list given at construction (same order on every call and in checkpoints);
// the optimizer keeps pointers, so the Parameters must outlive it and must not move.
class AdamW {
 public:
  AdamW(const AdamWConfig& config, ParamList params);

  // One update of every parameter from its grad with learning rate lr; increments step_count().
  void step(float lr, ThreadPool& pool);

  const AdamWConfig& config() const { return cfg_; }
  int64_t step_count() const { return t_; }
  void set_step_count(int64_t t) { t_ = t; }
  ParamList params() const { return params_; }
  std::vector<float>& m(size_t i) { return m_[i]; }
  std::vector<float>& v(size_t i) { return v_[i]; }
  const std::vector<float>& m(size_t i) const { return m_[i]; }
  const std::vector<float>& v(size_t i) const { return v_[i]; }

 private:
  AdamWConfig cfg_;
  std::vector<Parameter*> params_;
  std::vector<std::vector<float>> m_, v_;
  int64_t t_ = 0;
};

// Clamps every gradient element to [-clip, clip] (torch.nn.utils.clip_grad_value_).
void clip_grad_value(ParamList params, float clip, ThreadPool& pool);

// The global L2 norm of all gradients together (summed in double over fixed chunks, combined in a
// fixed order: independent of the thread count); if it exceeds max_norm, every gradient is scaled
// by max_norm / (norm + 1e-6) (torch.nn.utils.clip_grad_norm_). Returns the norm before clipping.
double clip_grad_norm(ParamList params, double max_norm, ThreadPool& pool);

// Learning rate at a 0-based optimizer step: linear warmup to peak over warmup_steps
// (lr = peak * (step + 1) / warmup_steps, so the first step already learns, unlike Hugging Face's
// step / warmup which spends step 0 at lr 0), then decay from peak to min_lr at total_steps:
// Constant (stays at peak), Linear, or Cosine (half a cosine period). Past total_steps: min_lr.
enum class LrDecay { Constant, Linear, Cosine };

struct LrSchedule {
  double peak_lr = 1e-3;
  int64_t warmup_steps = 0;
  int64_t total_steps = 1;
  LrDecay decay = LrDecay::Linear;
  double min_lr = 0.0;

  double at(int64_t step) const;
};

}  // namespace eagle2::train

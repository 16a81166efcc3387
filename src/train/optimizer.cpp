#include "train/optimizer.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "core/error.h"

namespace eagle2::train {

namespace {

// Elements per task: the chunking (not the thread count) fixes every per-chunk result.
constexpr int64_t kChunk = 1 << 14;

template <class Fn>
void for_chunks(int64_t n, ThreadPool& pool, const Fn& fn) {
  pool.parallel_for((n + kChunk - 1) / kChunk,
                    [&](int64_t t) { fn(t * kChunk, std::min(n, (t + 1) * kChunk)); });
}

}  // namespace

AdamW::AdamW(const AdamWConfig& config, ParamList params)
    : cfg_(config), params_(params.begin(), params.end()) {
  if (!(cfg_.beta1 >= 0 && cfg_.beta1 < 1) || !(cfg_.beta2 >= 0 && cfg_.beta2 < 1))
    fail("AdamW: betas must be in [0, 1), got (", cfg_.beta1, ", ", cfg_.beta2, ")");
  if (!(cfg_.eps > 0)) fail("AdamW: eps must be positive, got ", cfg_.eps);
  if (!(cfg_.weight_decay >= 0)) fail("AdamW: weight_decay must be >= 0, got ", cfg_.weight_decay);
  for (const Parameter* p : params_) {
    m_.emplace_back(p->value.size(), 0.0f);
    v_.emplace_back(p->value.size(), 0.0f);
  }
}

void AdamW::step(float lr, ThreadPool& pool) {
  ++t_;
  const double t = static_cast<double>(t_);
  const float b1 = cfg_.beta1, b2 = cfg_.beta2, eps = cfg_.eps;
  const float step_size = static_cast<float>(lr / (1.0 - std::pow(static_cast<double>(b1), t)));
  const float bc2_sqrt = static_cast<float>(std::sqrt(1.0 - std::pow(static_cast<double>(b2), t)));
  for (size_t i = 0; i < params_.size(); ++i) {
    Parameter& p = *params_[i];
    if (p.grad.size() != p.value.size())
      fail("AdamW: parameter '", p.name, "' has a gradient of the wrong size");
    const float decay = p.decay ? 1.0f - lr * cfg_.weight_decay : 1.0f;
    float* w = p.value.data();
    const float* g = p.grad.data();
    float* m = m_[i].data();
    float* v = v_[i].data();
    for_chunks(p.numel(), pool, [&](int64_t e0, int64_t e1) {
      for (int64_t e = e0; e < e1; ++e) {
        m[e] = b1 * m[e] + (1.0f - b1) * g[e];
        v[e] = b2 * v[e] + (1.0f - b2) * (g[e] * g[e]);
        const float denom = std::sqrt(v[e]) / bc2_sqrt + eps;
        w[e] = w[e] * decay - step_size * (m[e] / denom);
      }
    });
  }
}

void clip_grad_value(ParamList params, float clip, ThreadPool& pool) {
  if (!(clip >= 0)) fail("clip_grad_value: clip must be >= 0, got ", clip);
  for (Parameter* p : params) {
    float* g = p->grad.data();
    for_chunks(p->numel(), pool, [&](int64_t e0, int64_t e1) {
      for (int64_t e = e0; e < e1; ++e) g[e] = std::clamp(g[e], -clip, clip);
    });
  }
}

double clip_grad_norm(ParamList params, double max_norm, ThreadPool& pool) {
  if (!(max_norm >= 0)) fail("clip_grad_norm: max_norm must be >= 0, got ", max_norm);
  double total = 0.0;
  std::vector<double> partial;
  for (Parameter* p : params) {
    const int64_t n = p->numel();
    partial.assign(static_cast<size_t>((n + kChunk - 1) / kChunk), 0.0);
    const float* g = p->grad.data();
    for_chunks(n, pool, [&](int64_t e0, int64_t e1) {
      double s = 0.0;
      for (int64_t e = e0; e < e1; ++e) s += static_cast<double>(g[e]) * g[e];
      partial[static_cast<size_t>(e0 / kChunk)] = s;
    });
    for (double s : partial) total += s;
  }
  const double norm = std::sqrt(total);
  if (norm > max_norm) {
    const float scale = static_cast<float>(max_norm / (norm + 1e-6));
    for (Parameter* p : params) {
      float* g = p->grad.data();
      for_chunks(p->numel(), pool, [&](int64_t e0, int64_t e1) {
        for (int64_t e = e0; e < e1; ++e) g[e] *= scale;
      });
    }
  }
  return norm;
}

double LrSchedule::at(int64_t step) const {
  if (step < 0) fail("LrSchedule: negative step ", step);
  if (step < warmup_steps)
    return peak_lr * static_cast<double>(step + 1) / static_cast<double>(warmup_steps);
  if (decay == LrDecay::Constant) return peak_lr;
  if (step >= total_steps) return min_lr;
  const int64_t span = total_steps - warmup_steps;
  const double progress =
      span > 0 ? static_cast<double>(step - warmup_steps) / static_cast<double>(span) : 1.0;
  const double shape = decay == LrDecay::Linear
                           ? 1.0 - progress
                           : 0.5 * (1.0 + std::cos(std::numbers::pi * progress));
  return min_lr + (peak_lr - min_lr) * shape;
}

}  // namespace eagle2::train

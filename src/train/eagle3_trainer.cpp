#include "train/eagle3_trainer.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>

#include "core/error.h"
#include "core/quant_blocks.h"
#include "draft/draft_vocab.h"
#include "draft/eagle3_config.h"
#include "kernels/matmul.h"
#include "train/optimizer.h"

namespace eagle2::train {

namespace {

Matrix embedding_matrix(const LlamaModel& target) {
  const TensorView& e = target.embedding();
  return Matrix{e.dtype, e.shape[0], e.shape[1], e.data};
}

// Row r of any weight matrix as floats.
void matrix_row_f32(const Matrix& W, int64_t r, float* out) {
  std::vector<unsigned char> bytes(dtype_bytes(W.dtype, W.cols));
  row_blocks(W, r, bytes.data());
  if (is_block_dtype(W.dtype))
    dequantize_blocks(W.dtype, bytes.data(), out, W.cols);
  else
    convert_to_f32(W.dtype, bytes.data(), out, static_cast<size_t>(W.cols));
}

void add_stats(Eagle3StepStats& into, const Eagle3StepStats& s) {
  if (into.loss.empty()) {
    into.loss.assign(s.loss.size(), 0.0);
    into.top1.assign(s.top1.size(), 0.0);
    into.state.assign(s.state.size(), 0.0);
  }
  into.total += s.total;
  for (size_t i = 0; i < s.loss.size(); ++i) {
    into.loss[i] += s.loss[i];
    into.top1[i] += s.top1[i];
  }
  for (size_t i = 0; i < s.state.size() && i < into.state.size(); ++i) into.state[i] += s.state[i];
}

void scale_stats(Eagle3StepStats& s, double k) {
  s.total *= k;
  for (double& v : s.loss) v *= k;
  for (double& v : s.top1) v *= k;
  for (double& v : s.state) v *= k;
}

Eagle3StepStats to_stats(const Eagle3Loss& l) {
  Eagle3StepStats s;
  s.total = l.total;
  s.loss = l.step_loss;
  s.state = l.state_loss;
  for (size_t i = 0; i < l.counted.size(); ++i)
    s.top1.push_back(l.counted[i] > 0
                         ? static_cast<double>(l.correct[i]) / static_cast<double>(l.counted[i])
                         : 0.0);
  return s;
}

}  // namespace

Eagle3DraftVocab eagle3_draft_vocab(const std::vector<HeadSequence>& data, int64_t V, int64_t n) {
  std::vector<int64_t> counts(static_cast<size_t>(V), 0);
  int64_t total = 0;
  for (const HeadSequence& s : data)
    for (size_t i = 1; i < s.tokens.size(); ++i) {
      const int32_t t = s.tokens[i];
      if (t < 0 || t >= V) fail("draft vocabulary: token ", t, " outside [0, ", V, ")");
      ++counts[static_cast<size_t>(t)];
      ++total;
    }
  Eagle3DraftVocab v;
  v.ids = eagle3_draft_ids(counts, n);
  int64_t covered = 0;
  for (int32_t id : v.ids) covered += counts[static_cast<size_t>(id)];
  for (int64_t c : counts) v.distinct += c > 0;
  v.coverage = total > 0 ? static_cast<double>(covered) / static_cast<double>(total) : 0.0;
  return v;
}

std::vector<float> eagle3_feature_scale(const std::vector<HeadSequence>& data, int64_t groups,
                                        int64_t hidden) {
  if (groups < 1 || hidden < 1) fail("eagle3 feature scale: bad shape ", groups, " x ", hidden);
  std::vector<double> sum(static_cast<size_t>(groups), 0.0);
  int64_t rows = 0;
  for (const HeadSequence& s : data) {
    const auto n = static_cast<int64_t>(s.aux.size()) / (groups * hidden);
    if (n * groups * hidden != static_cast<int64_t>(s.aux.size()))
      fail("eagle3 feature scale: a sequence's features are not rows of ", groups, " x ", hidden);
    for (int64_t r = 0; r < n; ++r)
      for (int64_t g = 0; g < groups; ++g) {
        const float* v = &s.aux[static_cast<size_t>((r * groups + g) * hidden)];
        double acc = 0;
        for (int64_t i = 0; i < hidden; ++i) acc += static_cast<double>(v[i]) * v[i];
        sum[static_cast<size_t>(g)] += acc;
      }
    rows += n;
  }
  std::vector<float> scale(static_cast<size_t>(groups), 1.0f);
  for (int64_t g = 0; g < groups; ++g) {
    const auto gi = static_cast<size_t>(g);
    const double ms = rows > 0 ? sum[gi] / static_cast<double>(rows * hidden) : 0;
    if (ms > 0 && std::isfinite(ms)) scale[gi] = static_cast<float>(1.0 / std::sqrt(ms));
  }
  return scale;
}

std::vector<int32_t> eagle3_default_layers(const LlamaModel& target) {
  return eagle3_layers(target, {});
}

std::vector<int32_t> eagle3_layers(const LlamaModel& target, const std::vector<int32_t>& chosen) {
  HeadConfig c;
  if (!chosen.empty()) c.aux_layer_ids = std::vector<int64_t>(chosen.begin(), chosen.end());
  return eagle3_feature_layers(
      c, target.config().num_layers,
      chosen.empty() ? "train-head --arch eagle3 (the target)" : "train-head --feature-layers");
}

Eagle3Window Eagle3Batch::window(float state_weight) const {
  Eagle3Window w{batch,         seq_len,        steps,         features.data(), positions.data(),
                 tokens.data(), teacher.data(), counted.data()};
  if (state_weight > 0) {
    w.states = states.data();
    w.state_weight = state_weight;
  }
  if (!lengths.empty()) w.lengths = lengths.data();
  return w;
}

Eagle3Trainer::Eagle3Trainer(const LlamaModel& target, std::vector<int32_t> draft_ids,
                             const Eagle3Init& init)
    : target_(target),
      draft_ids_(std::move(draft_ids)),
      layers_(eagle3_layers(target, init.feature_layers)) {
  const LlamaConfig& tc = target.config();
  if (tc.attention_bias) fail("train-head: heads with q/k/v biases are not supported");
  if (draft_ids_.empty()) fail("train-head --arch eagle3: empty draft vocabulary");
  for (size_t i = 0; i < draft_ids_.size(); ++i)
    if (draft_ids_[i] < 0 || draft_ids_[i] >= tc.vocab_size ||
        (i > 0 && draft_ids_[i] <= draft_ids_[i - 1]))
      fail("train-head --arch eagle3: draft ids must be ascending, distinct and in [0, ",
           tc.vocab_size, ")");
  cfg_.hidden = tc.hidden_size;
  cfg_.intermediate = init.intermediate > 0 ? init.intermediate : tc.intermediate_size;
  cfg_.n_heads = tc.num_heads;
  cfg_.n_kv_heads = tc.num_kv_heads;
  cfg_.head_dim = tc.head_dim;
  cfg_.feature_width = static_cast<int64_t>(layers_.size()) * tc.hidden_size;
  cfg_.draft_vocab = static_cast<int64_t>(draft_ids_.size());
  cfg_.rms_eps = tc.rms_norm_eps;
  cfg_.inv_freq = tc.rope_inv_freq();
  feature_scale_ =
      init.feature_scale.empty() ? std::vector<float>(layers_.size(), 1.0f) : init.feature_scale;
  if (feature_scale_.size() != layers_.size())
    fail("train-head --arch eagle3: ", init.feature_scale.size(), " feature scales for ",
         layers_.size(), " feature layers");
  for (float k : feature_scale_)
    if (!(k > 0) || !std::isfinite(k))
      fail("train-head --arch eagle3: a feature scale is not a positive number");
  teacher_temperature_ = init.teacher_temperature;
  if (!(teacher_temperature_ >= 0) || !std::isfinite(teacher_temperature_))
    fail("train-head --arch eagle3: the teacher temperature must be a number >= 0 (got ",
         teacher_temperature_, ")");
  w_ = std::make_unique<Eagle3Weights>(cfg_);
  w_->collect(params_);
  TrainRng rng(init.seed);
  w_->init(rng);
  // Warm start of lm_head (see the header): the target's rows of the kept ids.
  for (size_t i = 0; i < draft_ids_.size(); ++i)
    matrix_row_f32(target.lm_head(), draft_ids_[i],
                   w_->lm_head.value.data() + static_cast<int64_t>(i) * cfg_.hidden);
}

void Eagle3Trainer::fill(Eagle3Batch& b, const std::vector<HeadSequence>& data,
                         const std::vector<std::pair<int32_t, int64_t>>& windows, int64_t T,
                         int64_t S, ThreadPool& pool) const {
  const int64_t B = static_cast<int64_t>(windows.size()), F = cfg_.feature_width, C = cfg_.hidden,
                Vd = cfg_.draft_vocab, V = target_.config().vocab_size, span = T + S;
  if (T < 1 || S < 1)
    fail("eagle3 batch: ", T, " positions and ", S, " steps (need at least 1 each)");
  b.batch = B;
  b.seq_len = T;
  b.steps = S;
  b.features.assign(static_cast<size_t>(B * T * F), 0.0f);
  b.positions.resize(static_cast<size_t>(B * T));
  b.tokens.resize(static_cast<size_t>(B * span));
  b.teacher.assign(static_cast<size_t>(B * span * Vd), 0.0f);
  b.counted.assign(static_cast<size_t>(B * span), 0);
  b.states.assign(static_cast<size_t>(B * span * C), 0.0f);
  b.lengths.resize(static_cast<size_t>(B));
  // The final-norm features of every offset p >= 1 inside its sequence: their teachers.
  std::vector<float> f;
  std::vector<int64_t> at;  // offset index b * span + p of each gathered row
  for (int64_t w = 0; w < B; ++w) {
    const HeadSequence& s = data[static_cast<size_t>(windows[static_cast<size_t>(w)].first)];
    const int64_t start = windows[static_cast<size_t>(w)].second, len = s.length();
    // Offsets past len - start - 1 lie past the sequence's end, so rows from there never count.
    b.lengths[static_cast<size_t>(w)] = std::clamp<int64_t>(len - start - 1, 1, T);
    if (static_cast<int64_t>(s.aux.size()) != len * F ||
        static_cast<int64_t>(s.features.size()) != len * C)
      fail("train-head --arch eagle3: a sequence lacks the target's features of layers ",
           layers_.size(), " x ", C, " (record the data with feature_layers)");
    for (int64_t t = 0; t < T; ++t) {
      const int64_t j = start + t;
      b.positions[static_cast<size_t>(w * T + t)] = static_cast<int32_t>(j);
      if (j < len) {
        const float* from = &s.aux[static_cast<size_t>(j * F)];
        float* to = &b.features[static_cast<size_t>((w * T + t) * F)];
        for (int64_t i = 0; i < F; ++i)
          to[i] = from[i] * feature_scale_[static_cast<size_t>(i / C)];
      }
    }
    for (int64_t p = 0; p < span; ++p) {
      const int64_t j = start + p;
      // Past the end: any valid token; such rows never reach a counted one (eagle3_unrolled.h).
      b.tokens[static_cast<size_t>(w * span + p)] = s.tokens[static_cast<size_t>(j < len ? j : 0)];
      if (j < len)
        std::memcpy(&b.states[static_cast<size_t>((w * span + p) * C)],
                    &s.features[static_cast<size_t>(j * C)],
                    static_cast<size_t>(C) * sizeof(float));
      if (p >= 1 && j < len) {
        f.insert(f.end(), s.features.begin() + j * C, s.features.begin() + (j + 1) * C);
        at.push_back(w * span + p);
      }
    }
  }
  const auto M = static_cast<int64_t>(at.size());
  std::vector<float> logits(static_cast<size_t>(M * V));
  if (M > 0) matmul(f.data(), M, target_.lm_head(), logits.data(), pool);
  std::vector<uint8_t> kept(static_cast<size_t>(V), 0);
  for (int32_t id : draft_ids_) kept[static_cast<size_t>(id)] = 1;
  // T = 0, or a T so small that 1/T overflows, is the one-hot limit (inf x 0 would be NaN).
  const float inv_t = 1.0f / teacher_temperature_;
  const bool one_hot = !std::isfinite(inv_t);
  for (int64_t m = 0; m < M; ++m) {
    const float* l = &logits[static_cast<size_t>(m * V)];
    const auto argmax = std::max_element(l, l + V) - l;  // ties: the lower id
    float* p = &b.teacher[static_cast<size_t>(at[static_cast<size_t>(m)] * Vd)];
    int64_t best = 0;  // the restricted argmax (ties: the lower id)
    for (int64_t i = 1; i < Vd; ++i)
      if (l[draft_ids_[static_cast<size_t>(i)]] > l[draft_ids_[static_cast<size_t>(best)]])
        best = i;
    const float mx = l[draft_ids_[static_cast<size_t>(best)]];
    if (one_hot) {
      p[best] = 1.0f;  // the rest of the row is already zero
    } else {
      double sum = 0;
      for (int64_t i = 0; i < Vd; ++i) {
        p[i] = std::exp((l[draft_ids_[static_cast<size_t>(i)]] - mx) * inv_t);
        sum += p[i];
      }
      const auto inv = static_cast<float>(1.0 / sum);
      for (int64_t i = 0; i < Vd; ++i) p[i] *= inv;
    }
    b.counted[static_cast<size_t>(at[static_cast<size_t>(m)])] = kept[static_cast<size_t>(argmax)];
  }
}

Eagle3Loss Eagle3Trainer::step(const Eagle3Batch& batch, bool backward, ThreadPool& pool,
                               float state_weight) {
  if (state_weight > 0 && static_cast<int64_t>(batch.states.size()) !=
                              batch.batch * (batch.seq_len + batch.steps) * cfg_.hidden)
    fail("train-head --arch eagle3: the batch lacks the target's states for the state term");
  const Eagle3Window win = batch.window(state_weight);
  const Matrix embed = embedding_matrix(target_);
  Eagle3Loss loss = eagle3_unrolled_forward(cfg_, *w_, embed, win, state_, pool);
  if (backward) eagle3_unrolled_backward(cfg_, *w_, win, state_, pool);
  return loss;
}

int64_t max_ttt_warmup(int64_t steps) {
  return steps - std::max<int64_t>(1, steps / 10);
}

int64_t ttt_unrolled_at(const Eagle3TrainOptions& o, int64_t step) {
  if (step >= max_ttt_warmup(o.steps)) return o.ttt_steps;
  if (step < o.ttt_warmup) return o.ttt_short_steps;
  return (o.steps - 1 - step) % o.ttt_full_every == 0 ? o.ttt_steps : o.ttt_short_steps;
}

Eagle3TrainResult train_eagle3(Eagle3Trainer& head, const std::vector<HeadSequence>& data,
                               const Eagle3TrainOptions& o, ThreadPool& pool,
                               const std::function<void(const Eagle3TrainProgress&)>& progress) {
  if (o.steps < 1 || o.batch < 1 || o.seq_len < 1)
    fail("train-head: steps, batch and seq-len must be positive");
  if (o.ttt_steps < 3)
    fail("train-head --arch eagle3: --ttt-steps ", o.ttt_steps,
         " is too few (at least 3: training-time test unrolls the head over its own outputs)");
  const int64_t tail_from = max_ttt_warmup(o.steps);
  if (o.ttt_warmup < 0 || o.ttt_warmup > tail_from)
    fail("train-head --arch eagle3: --ttt-warmup ", o.ttt_warmup, " must lie in [0, ", tail_from,
         "] (the last 10 % of ", o.steps, " steps run unrolled)");
  if (o.ttt_short_steps < 1 || o.ttt_short_steps > o.ttt_steps)
    fail("train-head --arch eagle3: --ttt-short-steps ", o.ttt_short_steps, " must lie in [1, ",
         o.ttt_steps, "] (--ttt-steps)");
  if (o.ttt_full_every < 1)
    fail("train-head --arch eagle3: --ttt-full-every ", o.ttt_full_every, " must be at least 1");
  if (!(o.state_weight >= 0) || !std::isfinite(o.state_weight))
    fail("train-head --arch eagle3: --state-loss must be a finite weight >= 0");
  HeadWindows windows(data, o.seq_len);
  TrainRng rng(o.seed);
  AdamW opt(AdamWConfig{0.9f, 0.95f, 1e-8f, o.weight_decay}, head.params());
  LrSchedule sched{o.lr, o.warmup, o.steps, LrDecay::Cosine, o.lr * o.min_lr_ratio};
  const auto B =
      static_cast<size_t>(std::min<int64_t>(o.batch, static_cast<int64_t>(windows.size())));

  Eagle3TrainResult result;
  Eagle3Batch batch;
  std::vector<std::pair<int32_t, int64_t>> picked(B);
  int64_t tail_n = 0;
  const auto t0 = std::chrono::steady_clock::now();
  for (int64_t step = 0; step < o.steps; ++step) {
    for (size_t b = 0; b < B; ++b) {
      const HeadWindows::Window& w = windows.next(rng);
      picked[b] = {w.seq, w.start};
    }
    head.fill(batch, data, picked, o.seq_len, ttt_unrolled_at(o, step), pool);
    zero_grads(head.params());
    const Eagle3Loss loss = head.step(batch, true, pool, static_cast<float>(o.state_weight));
    Eagle3TrainProgress p;
    p.stats = to_stats(loss);
    p.grad_norm = clip_grad_norm(head.params(), o.clip_norm > 0 ? o.clip_norm : 1e30, pool);
    p.lr = sched.at(step);
    opt.step(static_cast<float>(p.lr), pool);
    result.positions += loss.counted.empty() ? 0 : loss.counted[0];
    if (step == 0) result.first = p.stats;
    if (step >= tail_from) {
      add_stats(result.last, p.stats);
      ++tail_n;
    }
    p.step = step + 1;
    p.steps = o.steps;
    p.positions = result.positions;
    p.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (progress) progress(p);
  }
  scale_stats(result.last, 1.0 / static_cast<double>(tail_n));
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return result;
}

Eagle3Agreement evaluate_eagle3(Eagle3Trainer& head, const std::vector<HeadSequence>& data,
                                int64_t seq_len, int64_t steps, ThreadPool& pool) {
  Eagle3Agreement a;
  a.positions.assign(static_cast<size_t>(steps), 0);
  a.stats.loss.assign(static_cast<size_t>(steps), 0.0);
  a.stats.top1.assign(static_cast<size_t>(steps), 0.0);
  Eagle3Batch batch;
  for (size_t s = 0; s < data.size(); ++s)
    for (int64_t start = 0; start < data[s].length() - 1; start += seq_len) {
      const int64_t T = std::min(seq_len, data[s].length() - 1 - start);
      head.fill(batch, data, {{static_cast<int32_t>(s), start}}, T, steps, pool);
      const Eagle3Loss l = head.step(batch, false, pool);
      for (int64_t k = 0; k < steps; ++k) {
        const auto n = static_cast<double>(l.counted[static_cast<size_t>(k)]);
        a.positions[static_cast<size_t>(k)] += l.counted[static_cast<size_t>(k)];
        a.stats.loss[static_cast<size_t>(k)] += l.step_loss[static_cast<size_t>(k)] * n;
        a.stats.top1[static_cast<size_t>(k)] +=
            static_cast<double>(l.correct[static_cast<size_t>(k)]);
      }
    }
  for (int64_t k = 0; k < steps; ++k) {
    const auto n = static_cast<double>(a.positions[static_cast<size_t>(k)]);
    if (n > 0) {
      a.stats.loss[static_cast<size_t>(k)] /= n;
      a.stats.top1[static_cast<size_t>(k)] /= n;
    }
    a.stats.total +=
        std::pow(kTttStepDecay, static_cast<double>(k)) * a.stats.loss[static_cast<size_t>(k)];
  }
  return a;
}

}  // namespace eagle2::train

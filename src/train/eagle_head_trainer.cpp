#include "train/eagle_head_trainer.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "io/safetensors.h"
#include "kernels/matmul.h"
#include "speculative/eagle_drafter.h"
#include "speculative/speculative_decoder.h"
#include "train/embedding.h"
#include "train/lm_head_loss.h"
#include "train/smooth_l1.h"

namespace eagle2::train {

namespace {

template <class T>
void grow(std::vector<T>& v, size_t n) {
  if (v.size() < n) v.resize(n);
}

Matrix embedding_matrix(const LlamaModel& target) {
  const TensorView& e = target.embedding();
  return Matrix{e.dtype, e.shape[0], e.shape[1], e.data};
}

void init_uniform(Parameter& p, TrainRng& rng) {
  const float bound = 1.0f / std::sqrt(static_cast<float>(p.shape[1]));
  for (float& v : p.value) v = rng.uniform(-bound, bound);
}

}  // namespace

int64_t HeadBatch::counted() const {
  int64_t n = 0;
  for (uint8_t m : mask) n += m != 0;
  return n;
}

void fill_batch_slot(HeadBatch& batch, int64_t b, const HeadSequence& s, int64_t start, int64_t d) {
  const int64_t T = batch.seq_len, P = s.length() - 1;
  for (int64_t t = 0; t < T; ++t) {
    const int64_t row = b * T + t, j = start + t;
    float* f = &batch.features[static_cast<size_t>(row * d)];
    float* g = &batch.targets[static_cast<size_t>(row * d)];
    if (j < P) {
      batch.tokens[row] = s.tokens[static_cast<size_t>(j + 1)];
      batch.positions[row] = static_cast<int32_t>(j);
      batch.mask[row] = 1;
      std::memcpy(f, &s.features[static_cast<size_t>(j * d)],
                  static_cast<size_t>(d) * sizeof(float));
      std::memcpy(g, &s.features[static_cast<size_t>((j + 1) * d)],
                  static_cast<size_t>(d) * sizeof(float));
    } else {
      // Padding: any valid token, zero features; masked out of both losses.
      batch.tokens[row] = s.tokens[0];
      batch.positions[row] = static_cast<int32_t>(j);
      batch.mask[row] = 0;
      std::fill(f, f + d, 0.0f);
      std::fill(g, g + d, 0.0f);
    }
  }
}

HeadBatch make_batch(const std::vector<const HeadSequence*>& seqs,
                     const std::vector<int64_t>& starts, int64_t T, int64_t d) {
  HeadBatch b;
  b.batch = static_cast<int64_t>(seqs.size());
  b.seq_len = T;
  const auto M = static_cast<size_t>(b.rows());
  b.tokens.resize(M);
  b.positions.resize(M);
  b.mask.resize(M);
  b.features.resize(M * static_cast<size_t>(d));
  b.targets.resize(M * static_cast<size_t>(d));
  for (size_t i = 0; i < seqs.size(); ++i)
    fill_batch_slot(b, static_cast<int64_t>(i), *seqs[i], starts[i], d);
  return b;
}

EagleHeadTrainer::EagleHeadTrainer(const LlamaModel& target, const HeadInit& init)
    : target_(target), cfg_(target.config()), d_(target.config().hidden_size) {
  if (cfg_.attention_bias) fail("train-head: heads with q/k/v biases are not supported");
  cfg_.num_layers = 1;
  cfg_.tie_word_embeddings = false;
  block_cfg_ = DecoderBlockConfig::from(cfg_, /*input_norm=*/false);

  fc_w_ = Parameter("fc.weight", {d_, 2 * d_});
  fc_b_ = Parameter("fc.bias", {d_}, /*decay=*/false);
  block_ = std::make_unique<DecoderBlockWeights>(block_cfg_, "layers.0.");
  params_ = {&fc_w_, &fc_b_};
  block_->collect(params_);

  TrainRng rng(init.seed);
  for (Parameter* p : params_)
    if (p->shape.size() == 2) init_uniform(*p, rng);
  if (init.fc_identity)
    for (int64_t i = 0; i < d_; ++i) fc_w_.value[static_cast<size_t>(i * 2 * d_ + d_ + i)] += 1.0f;
}

HeadLoss EagleHeadTrainer::step(const HeadBatch& batch, const float* features_in, bool backward,
                                ThreadPool& pool, float ce_weight, float ce_temperature) {
  const int64_t M = batch.rows(), d = d_;
  const auto Md = static_cast<size_t>(M * d);
  if (lm_head_t_.storage.empty()) lm_head_t_ = transpose_matrix(target_.lm_head(), pool);

  // [M, 2d] = [embed(x_{j+1}), f_j]: the embedding first, as the reference concatenates.
  grow(emb_cat_, 2 * Md);
  x_.resize(Md);
  pred_.resize(Md);
  emb_.resize(Md);
  embedding_forward(emb_.data(), batch.tokens.data(), M, embedding_matrix(target_), pool);
  for (int64_t m = 0; m < M; ++m) {
    std::memcpy(&emb_cat_[static_cast<size_t>(m * 2 * d)], &emb_[static_cast<size_t>(m * d)],
                static_cast<size_t>(d) * sizeof(float));
    std::memcpy(&emb_cat_[static_cast<size_t>(m * 2 * d + d)], features_in + m * d,
                static_cast<size_t>(d) * sizeof(float));
  }
  linear_forward(x_.data(), emb_cat_.data(), M, fc_w_.matrix(), fc_b_.value.data(), pool);
  acts_.resize(block_cfg_, batch.batch, batch.seq_len);
  const DecoderBlockParams bp = block_->params();
  decoder_block_forward(block_cfg_, bp, pred_.data(), x_.data(), batch.positions.data(), acts_,
                        pool);

  HeadLoss loss;
  float* dpred = nullptr;
  if (backward) {
    dpred_.assign(Md, 0.0f);
    dpred = dpred_.data();
  }
  const uint8_t* mask = batch.mask.data();
  loss.smooth_l1 = smooth_l1_forward(pred_.data(), batch.targets.data(), mask, M, d, pool);
  if (backward)
    smooth_l1_backward(dpred, pred_.data(), batch.targets.data(), mask, M, d, 1.0f, pool);
  loss.soft_ce = lm_head_soft_cross_entropy(pred_.data(), batch.targets.data(), mask, M,
                                            target_.lm_head(), &lm_head_t_.m, dpred, nullptr,
                                            ce_weight, pool, 64, ce_temperature);
  loss.total = loss.smooth_l1 + ce_weight * loss.soft_ce;
  if (!backward) return loss;

  decoder_block_backward(block_cfg_, bp, dpred, acts_, scratch_, pool);  // dpred -> dL/dx
  // The input side of fc is data (frozen embedding, target features): no input gradient.
  linear_backward(nullptr, fc_w_.grad.data(), fc_b_.grad.data(), dpred, emb_cat_.data(), M,
                  fc_w_.matrix(), pool);
  return loss;
}

void EagleHeadTrainer::save(const std::string& dir, DType dtype) const {
  if (dtype != DType::F32 && dtype != DType::BF16)
    fail("head export: dtype ", dtype_name(dtype), " is not supported (F32 or BF16)");
  std::filesystem::create_directories(dir);
  nlohmann::ordered_json j = nlohmann::ordered_json::parse(cfg_.to_json());
  j["bias"] = true;
  {
    const std::string path = dir + "/config.json";
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    if (!out) fail(path, ": cannot write");
    out << j.dump(2) << "\n";
    if (!out) fail(path, ": write failed");
  }
  const TensorView& emb = target_.embedding();
  std::vector<TensorToWrite> tensors;
  // safetensors has no quantized types: a GGUF target's quantized embedding is saved dequantized
  // (the copy is informational; loaders read the target's own embedding).
  std::vector<float> emb_f32;
  if (is_block_dtype(emb.dtype)) {
    emb_f32.resize(static_cast<size_t>(emb.numel()));
    convert_to_f32(emb.dtype, emb.data, emb_f32.data(), emb_f32.size());
    tensors.push_back({"embed_tokens.weight", DType::F32, emb.shape, emb_f32.data()});
  } else {
    tensors.push_back({"embed_tokens.weight", emb.dtype, emb.shape, emb.data});
  }
  std::vector<std::vector<uint16_t>> narrowed;
  for (const TensorToWrite& t : export_tensors(params_, dtype, narrowed)) tensors.push_back(t);
  write_safetensors(dir + "/model.safetensors", tensors, {{"format", "pt"}});
}

double feature_rms(const std::vector<HeadSequence>& data) {
  double sum = 0;
  int64_t n = 0;
  for (const HeadSequence& s : data) {
    for (float v : s.features) sum += static_cast<double>(v) * v;
    n += static_cast<int64_t>(s.features.size());
  }
  return n > 0 ? std::sqrt(sum / static_cast<double>(n)) : 0.0;
}

HeadTrainResult train_head(EagleHeadTrainer& head, const std::vector<HeadSequence>& data,
                           const HeadTrainOptions& o, ThreadPool& pool,
                           const HeadTrainCallback& progress) {
  if (o.steps < 1 || o.batch < 1 || o.seq_len < 1)
    fail("train-head: steps, batch and seq-len must be positive");
  const int64_t d = head.config().hidden_size, T = o.seq_len;
  HeadWindows windows(data, T);

  HeadTrainResult result;
  result.noise_amplitude =
      o.noise * (o.noise_relative ? static_cast<float>(feature_rms(data)) : 1.0f);
  TrainRng rng(o.seed);
  AdamW opt(AdamWConfig{0.9f, 0.95f, 1e-8f, o.weight_decay}, head.params());
  LrSchedule sched{o.lr, o.warmup, o.steps, LrDecay::Cosine, o.lr * o.min_lr_ratio};

  const auto B =
      static_cast<size_t>(std::min<int64_t>(o.batch, static_cast<int64_t>(windows.size())));
  HeadBatch batch;
  batch.batch = static_cast<int64_t>(B);
  batch.seq_len = T;
  batch.tokens.resize(B * T);
  batch.positions.resize(B * T);
  batch.mask.resize(B * T);
  batch.features.resize(B * T * d);
  batch.targets.resize(B * T * d);
  std::vector<float> noisy(batch.features.size());
  const int64_t tail_from = o.steps - std::max<int64_t>(1, o.steps / 10);
  int64_t tail_n = 0;
  const auto t0 = std::chrono::steady_clock::now();
  for (int64_t step = 0; step < o.steps; ++step) {
    for (size_t b = 0; b < B; ++b) {
      const HeadWindows::Window& w = windows.next(rng);
      fill_batch_slot(batch, static_cast<int64_t>(b), data[static_cast<size_t>(w.seq)], w.start, d);
    }
    for (size_t r = 0; r < B * T; ++r) {
      const float* f = &batch.features[r * d];
      float* g = &noisy[r * d];
      if (batch.mask[r]) {
        for (int64_t c = 0; c < d; ++c)
          g[c] = f[c] + rng.uniform(-result.noise_amplitude, result.noise_amplitude);
      } else {
        std::copy(f, f + d, g);
      }
    }
    zero_grads(head.params());
    HeadTrainProgress p;
    p.loss = head.step(batch, noisy.data(), true, pool, o.ce_weight, o.ce_temperature);
    p.grad_norm = clip_grad_norm(head.params(), o.clip_norm > 0 ? o.clip_norm : 1e30, pool);
    p.lr = sched.at(step);
    opt.step(static_cast<float>(p.lr), pool);
    result.positions += batch.counted();
    if (step == 0) result.first = p.loss;
    if (step >= tail_from) {
      result.last.total += p.loss.total;
      result.last.smooth_l1 += p.loss.smooth_l1;
      result.last.soft_ce += p.loss.soft_ce;
      ++tail_n;
    }
    p.step = step + 1;
    p.steps = o.steps;
    p.positions = result.positions;
    p.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (progress) progress(p);
  }
  result.last.total /= static_cast<double>(tail_n);
  result.last.smooth_l1 /= static_cast<double>(tail_n);
  result.last.soft_ce /= static_cast<double>(tail_n);
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return result;
}

HeadAgreement evaluate_agreement(EagleHeadTrainer& head, const std::vector<HeadSequence>& data,
                                 int64_t seq_len, ThreadPool& pool) {
  const LlamaConfig& c = head.config();
  const int64_t d = c.hidden_size, V = c.vocab_size;
  const Matrix& W = head.target().lm_head();
  HeadAgreement a;
  int64_t hit1 = 0, hit5 = 0, hit10 = 0;
  std::vector<float> draft, teacher;
  for (const HeadSequence& s : data) {
    const int64_t P = s.length() - 1;
    for (int64_t start = 0; start < P; start += seq_len) {
      const int64_t T = std::min(seq_len, P - start);
      const HeadBatch b = make_batch({&s}, {start}, T, d);
      const HeadLoss l = head.step(b, b.features.data(), false, pool);
      a.loss.total += l.total * static_cast<double>(T);
      a.loss.smooth_l1 += l.smooth_l1 * static_cast<double>(T);
      a.loss.soft_ce += l.soft_ce * static_cast<double>(T);
      draft.resize(static_cast<size_t>(T * V));
      teacher.resize(static_cast<size_t>(T * V));
      matmul(head.prediction().data(), T, W, draft.data(), pool);
      matmul(b.targets.data(), T, W, teacher.data(), pool);
      for (int64_t t = 0; t < T; ++t) {
        const float* tl = &teacher[static_cast<size_t>(t * V)];
        const float* dl = &draft[static_cast<size_t>(t * V)];
        const auto want = static_cast<int64_t>(std::max_element(tl, tl + V) - tl);
        // Rank of the target's token among the draft's logits, ties going to the lower id as in
        // the drafter's top-k.
        int64_t rank = 0;
        for (int64_t v = 0; v < V; ++v) rank += dl[v] > dl[want] || (dl[v] == dl[want] && v < want);
        hit1 += rank < 1;
        hit5 += rank < 5;
        hit10 += rank < 10;
      }
      a.positions += T;
    }
  }
  if (a.positions > 0) {
    const auto n = static_cast<double>(a.positions);
    a.top1 = static_cast<double>(hit1) / n;
    a.top5 = static_cast<double>(hit5) / n;
    a.top10 = static_cast<double>(hit10) / n;
    a.loss.total /= n;
    a.loss.smooth_l1 /= n;
    a.loss.soft_ce /= n;
  }
  return a;
}

int64_t tau_context(const LlamaModel& target, const std::vector<std::vector<int32_t>>& prompts,
                    int64_t max_new_tokens) {
  int64_t longest = 0;
  for (const auto& p : prompts)
    longest = std::max<int64_t>(longest, static_cast<int64_t>(p.size()));
  return std::min<int64_t>(target.config().max_position_embeddings, longest + max_new_tokens + 64);
}

double measure_tau(LlamaModel& target, EagleHead& head,
                   const std::vector<std::vector<int32_t>>& prompts, int64_t max_new_tokens,
                   ThreadPool& pool) {
  EagleDrafterOptions o;  // EAGLE-2 defaults: dynamic tree, 60 tokens, depth 5, top-k 10
  o.context = tau_context(target, prompts, max_new_tokens);
  EagleDrafter drafter(head, pool, o);
  return measure_tau(target, drafter, prompts, max_new_tokens, pool);
}

double measure_tau(LlamaModel& target, Drafter& drafter,
                   const std::vector<std::vector<int32_t>>& prompts, int64_t max_new_tokens,
                   ThreadPool& pool) {
  const int64_t ctx = tau_context(target, prompts, max_new_tokens);
  KvCache kv = target.make_cache(ctx);
  int64_t committed = 0, cycles = 0;
  for (const auto& p : prompts) {
    if (static_cast<int64_t>(p.size()) + 8 > ctx) continue;
    kv.truncate(0);
    GenerationOptions g;
    g.max_new_tokens = max_new_tokens;
    g.sampling.temperature = 0.0f;
    const SpeculativeStats st =
        speculative_generate(target, kv, drafter, p, g, pool, [](int32_t) { return true; });
    for (size_t a = 0; a < st.accept_histogram.size(); ++a)
      committed += st.accept_histogram[a] * static_cast<int64_t>(a + 1);
    cycles += st.cycles;
  }
  return cycles > 0 ? static_cast<double>(committed) / static_cast<double>(cycles) : 0.0;
}

}  // namespace eagle2::train

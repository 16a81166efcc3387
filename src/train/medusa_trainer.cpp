#include "train/medusa_trainer.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "draft/medusa_heads.h"
#include "io/safetensors.h"
#include "kernels/matmul.h"
#include "train/embedding.h"
#include "train/lm_head_loss.h"
#include "train/optimizer.h"
#include "train/res_block.h"
#include "train/train_rng.h"

namespace eagle2::train {

namespace {

Matrix embedding_matrix(const LlamaModel& target) {
  const TensorView& e = target.embedding();
  return Matrix{e.dtype, e.shape[0], e.shape[1], e.data};
}

}  // namespace

int64_t MedusaBatch::counted(int64_t head) const {
  int64_t n = 0;
  for (int64_t r = 0; r < rows; ++r) n += masks[static_cast<size_t>(head * rows + r)] != 0;
  return n;
}

MedusaBatch make_medusa_batch(int64_t rows, int64_t heads, int64_t d) {
  MedusaBatch b;
  b.rows = rows;
  b.heads = heads;
  b.features.assign(static_cast<size_t>(rows * d), 0.0f);
  b.tokens.assign(static_cast<size_t>(rows * heads), 0);
  b.teachers.assign(static_cast<size_t>(heads * rows * d), 0.0f);
  b.masks.assign(static_cast<size_t>(heads * rows), 0);
  return b;
}

void fill_medusa_rows(MedusaBatch& b, int64_t row, const HeadSequence& s, int64_t start, int64_t n,
                      int64_t d) {
  const int64_t L = s.length(), H = b.heads, M = b.rows;
  const auto dz = static_cast<size_t>(d) * sizeof(float);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t r = row + i, t = start + i;
    float* f = &b.features[static_cast<size_t>(r * d)];
    if (t < L)
      std::memcpy(f, &s.features[static_cast<size_t>(t * d)], dz);
    else
      std::fill(f, f + d, 0.0f);
    for (int64_t k = 0; k < H; ++k) {
      const int64_t at = t + k + 1;  // head k (0-based) predicts x_{at + 1}, read from f_at
      const bool real = at < L;
      b.tokens[static_cast<size_t>(r * H + k)] = s.tokens[static_cast<size_t>(real ? at : 0)];
      b.masks[static_cast<size_t>(k * M + r)] = real ? 1 : 0;
      float* g = &b.teachers[static_cast<size_t>((k * M + r) * d)];
      if (real)
        std::memcpy(g, &s.features[static_cast<size_t>(at * d)], dz);
      else
        std::fill(g, g + d, 0.0f);
    }
  }
}

MedusaTrainer::MedusaTrainer(const LlamaModel& target, const MedusaInit& init)
    : target_(target), init_(init), d_(target.config().hidden_size) {
  if (init.heads < 1 || init.heads > MedusaHeads::kMaxHeads || init.layers < 1 ||
      init.layers > MedusaHeads::kMaxLayers)
    fail("train-head: ", init.heads, " heads of ", init.layers, " layers (heads in [1, ",
         MedusaHeads::kMaxHeads, "], layers in [1, ", MedusaHeads::kMaxLayers, "])");
  const std::string prefix = init.hydra ? "hydra_head." : "medusa_head.";
  for (int k = 0; k < init.heads; ++k)
    for (int l = 0; l < init.layers; ++l) {
      const std::string p = prefix + std::to_string(k) + "." + std::to_string(l) + ".linear.";
      const int64_t in = l == 0 ? input_width(k) : d_;
      // W = 0, b = 0: the head starts as h = f_t, i.e. the target's own next-token prediction.
      owned_.push_back(std::make_unique<Parameter>(p + "weight", std::vector<int64_t>{d_, in}));
      owned_.push_back(std::make_unique<Parameter>(p + "bias", std::vector<int64_t>{d_}, false));
    }
  for (auto& p : owned_) params_.push_back(p.get());
  acts_.assign(static_cast<size_t>(init.heads),
               std::vector<std::vector<float>>(static_cast<size_t>(init.layers + 1)));
  zs_.assign(static_cast<size_t>(init.heads),
             std::vector<std::vector<float>>(static_cast<size_t>(init.layers)));
}

int64_t MedusaTrainer::input_width(int k) const {
  return init_.hydra ? static_cast<int64_t>(k + 2) * d_ : d_;
}

MedusaLoss MedusaTrainer::step(const MedusaBatch& batch, bool backward, ThreadPool& pool) {
  const int64_t M = batch.rows, H = init_.heads, d = d_, L = init_.layers;
  if (batch.heads != H) fail("train-head: a batch for ", batch.heads, " heads, not ", H);
  if (lm_head_t_.storage.empty()) lm_head_t_ = transpose_matrix(target_.lm_head(), pool);
  if (init_.hydra) {
    // [M, H, d]: E(x_{t+1}) .. E(x_{t+H}) of every row, read by the heads' inputs below.
    emb_.resize(static_cast<size_t>(M * H * d));
    embedding_forward(emb_.data(), batch.tokens.data(), M * H, embedding_matrix(target_), pool);
  }
  MedusaLoss loss;
  for (int64_t k = 0; k < H; ++k) {
    auto& acts = acts_[static_cast<size_t>(k)];
    auto& zs = zs_[static_cast<size_t>(k)];
    // Block 0's input [M, K]: f_t, then for Hydra E(x_{t+1}) .. E(x_{t+k+1}).
    const int64_t K = input_width(static_cast<int>(k));
    acts[0].resize(static_cast<size_t>(M * K));
    for (int64_t m = 0; m < M; ++m) {
      float* row = &acts[0][static_cast<size_t>(m * K)];
      std::memcpy(row, &batch.features[static_cast<size_t>(m * d)],
                  static_cast<size_t>(d) * sizeof(float));
      if (init_.hydra)
        std::memcpy(row + d, &emb_[static_cast<size_t>(m * H * d)],
                    static_cast<size_t>(K - d) * sizeof(float));
    }
    for (int64_t l = 0; l < L; ++l) {
      Parameter& W = *params_[static_cast<size_t>(2 * (k * L + l))];
      Parameter& b = *params_[static_cast<size_t>(2 * (k * L + l) + 1)];
      acts[l + 1].resize(static_cast<size_t>(M * d));
      zs[l].resize(static_cast<size_t>(M * d));
      res_block_forward(acts[l + 1].data(), zs[l].data(), acts[l].data(), M, W.matrix(),
                        b.value.data(), pool);
    }
    // [M, d] states -> soft CE against softmax(lm_head(f_{t+k+1})); weight 1/H in the total.
    if (backward) dx_.assign(static_cast<size_t>(M * d), 0.0f);
    const double l = lm_head_soft_cross_entropy(
        acts[L].data(), &batch.teachers[static_cast<size_t>(k * M * d)],
        &batch.masks[static_cast<size_t>(k * M)], M, target_.lm_head(), &lm_head_t_.m,
        backward ? dx_.data() : nullptr, nullptr, 1.0f / static_cast<float>(H), pool);
    loss.per_head.push_back(l);
    loss.total += l / static_cast<double>(H);
    if (!backward) continue;
    dz_.resize(static_cast<size_t>(M * d));
    for (int64_t l2 = L - 1; l2 >= 0; --l2) {
      Parameter& W = *params_[static_cast<size_t>(2 * (k * L + l2))];
      Parameter& b = *params_[static_cast<size_t>(2 * (k * L + l2) + 1)];
      // Block 0's input is data (features, frozen embeddings): no input gradient.
      if (l2 > 0) dprev_.assign(static_cast<size_t>(M * d), 0.0f);
      res_block_backward(l2 > 0 ? dprev_.data() : nullptr, W.grad.data(), b.grad.data(), dz_.data(),
                         dx_.data(), acts[l2].data(), zs[l2].data(), M, W.matrix(), pool);
      if (l2 > 0) std::swap(dx_, dprev_);
    }
  }
  return loss;
}

void MedusaTrainer::save(const std::string& dir, DType dtype) const {
  if (dtype != DType::F32 && dtype != DType::BF16)
    fail("heads export: dtype ", dtype_name(dtype), " is not supported (F32 or BF16)");
  std::filesystem::create_directories(dir);
  const std::string kind = init_.hydra ? "hydra" : "medusa";
  nlohmann::ordered_json j;
  j[kind + "_num_heads"] = init_.heads;
  j[kind + "_num_layers"] = init_.layers;
  j["hidden_size"] = d_;
  j["vocab_size"] = target_.config().vocab_size;
  {
    const std::string path = dir + "/config.json";
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    if (!out) fail(path, ": cannot write");
    out << j.dump(2) << "\n";
    if (!out) fail(path, ": write failed");
  }
  std::vector<std::vector<uint16_t>> narrowed;
  write_safetensors(dir + "/model.safetensors", export_tensors(params_, dtype, narrowed),
                    {{"format", "pt"}});
}

MedusaTrainResult train_medusa(MedusaTrainer& heads, const std::vector<HeadSequence>& data,
                               const HeadTrainOptions& o, ThreadPool& pool,
                               const std::function<void(const MedusaTrainProgress&)>& progress) {
  if (o.steps < 1 || o.batch < 1 || o.seq_len < 1)
    fail("train-head: steps, batch and seq-len must be positive");
  const int64_t d = heads.target().config().hidden_size, T = o.seq_len, H = heads.init().heads;
  HeadWindows windows(data, T);

  MedusaTrainResult result;
  TrainRng rng(o.seed);
  AdamW opt(AdamWConfig{0.9f, 0.95f, 1e-8f, o.weight_decay}, heads.params());
  const LrSchedule sched{o.lr, o.warmup, o.steps, LrDecay::Cosine, o.lr * o.min_lr_ratio};
  const int64_t B = std::min<int64_t>(o.batch, static_cast<int64_t>(windows.size()));
  MedusaBatch batch = make_medusa_batch(B * T, H, d);
  const int64_t tail_from = o.steps - std::max<int64_t>(1, o.steps / 10);
  int64_t tail_n = 0;
  result.last.per_head.assign(static_cast<size_t>(H), 0.0);
  const auto t0 = std::chrono::steady_clock::now();
  for (int64_t step = 0; step < o.steps; ++step) {
    for (int64_t b = 0; b < B; ++b) {
      const HeadWindows::Window& w = windows.next(rng);
      fill_medusa_rows(batch, b * T, data[static_cast<size_t>(w.seq)], w.start, T, d);
    }
    zero_grads(heads.params());
    MedusaTrainProgress p;
    p.loss = heads.step(batch, true, pool);
    p.grad_norm = clip_grad_norm(heads.params(), o.clip_norm > 0 ? o.clip_norm : 1e30, pool);
    p.lr = sched.at(step);
    opt.step(static_cast<float>(p.lr), pool);
    result.positions += batch.counted(0);
    if (step == 0) result.first = p.loss;
    if (step >= tail_from) {
      result.last.total += p.loss.total;
      for (int64_t k = 0; k < H; ++k)
        result.last.per_head[static_cast<size_t>(k)] += p.loss.per_head[static_cast<size_t>(k)];
      ++tail_n;
    }
    p.step = step + 1;
    p.steps = o.steps;
    p.positions = result.positions;
    p.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (progress) progress(p);
  }
  result.last.total /= static_cast<double>(tail_n);
  for (double& v : result.last.per_head) v /= static_cast<double>(tail_n);
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return result;
}

MedusaAgreement evaluate_medusa_agreement(MedusaTrainer& heads,
                                          const std::vector<HeadSequence>& data, int64_t rows,
                                          ThreadPool& pool) {
  const LlamaConfig& c = heads.target().config();
  const int64_t d = c.hidden_size, V = c.vocab_size, H = heads.init().heads;
  const Matrix& W = heads.target().lm_head();
  MedusaAgreement a;
  a.positions.assign(static_cast<size_t>(H), 0);
  std::vector<int64_t> hit1(static_cast<size_t>(H), 0), hit5(static_cast<size_t>(H), 0);
  a.loss.per_head.assign(static_cast<size_t>(H), 0.0);
  std::vector<float> draft, teacher;
  for (const HeadSequence& s : data) {
    const int64_t P = s.length() - 1;
    for (int64_t start = 0; start < P; start += rows) {
      const int64_t n = std::min(rows, P - start);
      MedusaBatch b = make_medusa_batch(n, H, d);
      fill_medusa_rows(b, 0, s, start, n, d);
      const MedusaLoss l = heads.step(b, false, pool);
      draft.resize(static_cast<size_t>(n * V));
      teacher.resize(static_cast<size_t>(n * V));
      for (int64_t k = 0; k < H; ++k) {
        const auto kk = static_cast<size_t>(k);
        a.loss.per_head[kk] += l.per_head[kk] * static_cast<double>(b.counted(k));
        matmul(heads.states(static_cast<int>(k)).data(), n, W, draft.data(), pool);
        matmul(&b.teachers[static_cast<size_t>(k * n * d)], n, W, teacher.data(), pool);
        for (int64_t t = 0; t < n; ++t) {
          if (!b.masks[static_cast<size_t>(k * n + t)]) continue;
          const float* tl = &teacher[static_cast<size_t>(t * V)];
          const float* dl = &draft[static_cast<size_t>(t * V)];
          const auto want = static_cast<int64_t>(std::max_element(tl, tl + V) - tl);
          // The target's token's rank among the head's logits, ties to the lower id (top_k_of).
          int64_t rank = 0;
          for (int64_t v = 0; v < V; ++v)
            rank += dl[v] > dl[want] || (dl[v] == dl[want] && v < want);
          hit1[kk] += rank < 1;
          hit5[kk] += rank < 5;
          ++a.positions[kk];
        }
      }
    }
  }
  a.top1.assign(static_cast<size_t>(H), 0.0);
  a.top5.assign(static_cast<size_t>(H), 0.0);
  for (size_t k = 0; k < static_cast<size_t>(H); ++k) {
    if (a.positions[k] == 0) continue;
    const auto n = static_cast<double>(a.positions[k]);
    a.top1[k] = static_cast<double>(hit1[k]) / n;
    a.top5[k] = static_cast<double>(hit5[k]) / n;
    a.loss.per_head[k] /= n;
    a.loss.total += a.loss.per_head[k] / static_cast<double>(H);
  }
  return a;
}

}  // namespace eagle2::train

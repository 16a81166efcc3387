// Training Medusa and Hydra heads (train/res_block.h, train/medusa_trainer.h): the residual
// block's backward against central differences of a double-precision reference, the whole loss's
// gradient w.r.t. every parameter, the batch layout (which teacher each head learns from), the
// training forward against the exported heads' inference forward, 1 vs 2 threads, and a short run
// that learns.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "draft/medusa_heads.h"
#include "io/safetensors.h"
#include "support/grad_check.h"
#include "support/random_models.h"
#include "support/shared_data.h"
#include "support/train_references.h"
#include "train/medusa_trainer.h"
#include "train/res_block.h"

namespace eagle2::train {
namespace {

using namespace test::grad_check;

// out = x[:, :d] + SiLU(x W^T + b) in double.
DVec res_block_ref(const DVec& x, const DVec& W, const DVec& b, int64_t M, int64_t d, int64_t K) {
  DVec z = linear_ref(x, W, &b, M, d, K);
  for (int64_t m = 0; m < M; ++m)
    for (int64_t c = 0; c < d; ++c) {
      double& v = z[static_cast<size_t>(m * d + c)];
      v = x[static_cast<size_t>(m * K + c)] + v / (1.0 + std::exp(-v));
    }
  return z;
}

TEST(TrainMedusa, ResBlockGradients) {
  for (int64_t K : {6, 18}) {  // Medusa (K = d) and Hydra's first block (K = 3 d)
    SCOPED_TRACE(K);
    std::mt19937 g(static_cast<uint32_t>(K));
    ThreadPool pool(2);
    const int64_t M = 5, d = 6;
    Vec x = rnd(M * K, g, -2, 2), W = rnd(d * K, g, -0.8f, 0.8f), b = rnd(d, g), R = rnd(M * d, g);
    Vec out(M * d), z(M * d);
    const Matrix Wm{DType::F32, d, K, W.data()};
    res_block_forward(out.data(), z.data(), x.data(), M, Wm, b.data(), pool);
    DVec xd = to_d(x), Wd = to_d(W), bd = to_d(b);
    expect_close(out, res_block_ref(xd, Wd, bd, M, d, K), 1e-5, "res block forward");
    Vec dx(M * K, 0.0f), dW(d * K, 0.0f), db(d, 0.0f), dz(M * d);
    res_block_backward(dx.data(), dW.data(), db.data(), dz.data(), R.data(), x.data(), z.data(), M,
                       Wm, pool);
    auto loss = [&] { return dot(res_block_ref(xd, Wd, bd, M, d, K), R); };
    expect_grad(dx, numeric_grad(xd, loss), "dx");
    expect_grad(dW, numeric_grad(Wd, loss), "dW");
    expect_grad(db, numeric_grad(bd, loss), "db");
    // Without the input gradient (the first block, whose input is data): the same dW.
    Vec dW2(d * K, 0.0f), db2(d, 0.0f);
    res_block_backward(nullptr, dW2.data(), db2.data(), dz.data(), R.data(), x.data(), z.data(), M,
                       Wm, pool);
    EXPECT_TRUE(same_bits(dW, dW2));
  }
}

HeadSequence random_sequence(int64_t T, int64_t d, int64_t V, uint32_t seed, float scale) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-scale, scale);
  HeadSequence s;
  for (int64_t t = 0; t < T; ++t) s.tokens.push_back(static_cast<int32_t>(rng() % V));
  s.features.resize(static_cast<size_t>(T * d));
  for (float& f : s.features) f = u(rng);
  return s;
}

void randomize(MedusaTrainer& heads, uint32_t seed, float scale) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-scale, scale);
  for (Parameter* p : heads.params())
    for (float& v : p->value) v = u(rng);
}

LlamaConfig small_config() {
  LlamaConfig cfg = test::tiny_config();
  cfg.hidden_size = 8;
  cfg.num_heads = 2;
  cfg.num_kv_heads = 1;
  cfg.head_dim = 4;
  cfg.intermediate_size = 12;
  cfg.vocab_size = 16;
  cfg.num_layers = 1;
  return cfg;
}

// Head k (0-based) at row t learns from f_{t+k+1}; the rows past a sequence's end are masked.
TEST(TrainMedusa, BatchRowsPairEachHeadWithItsTeacher) {
  const int64_t d = 2, H = 3;
  HeadSequence s = random_sequence(5, d, 10, 1, 1.0f);
  MedusaBatch b = make_medusa_batch(6, H, d);
  fill_medusa_rows(b, 0, s, 1, 6, d);  // positions 1..6 of a 5-token sequence
  for (int64_t r = 0; r < 6; ++r) {
    const int64_t t = 1 + r;
    for (int64_t k = 0; k < H; ++k) {
      const bool real = t + k + 1 < 5;
      EXPECT_EQ(b.masks[static_cast<size_t>(k * 6 + r)], real ? 1 : 0)
          << "row " << r << " head " << k;
      if (real) {
        EXPECT_EQ(b.teachers[static_cast<size_t>((k * 6 + r) * d)],
                  s.features[static_cast<size_t>((t + k + 1) * d)]);
        EXPECT_EQ(b.tokens[static_cast<size_t>(r * H + k)],
                  s.tokens[static_cast<size_t>(t + k + 1)]);
      }
    }
  }
  EXPECT_EQ(b.counted(0), 3);  // positions 1, 2, 3 have a next feature
  EXPECT_EQ(b.counted(2), 1);
}

double full_loss(MedusaTrainer& heads, const MedusaBatch& b, ThreadPool& pool) {
  return heads.step(b, false, pool).total;
}

void check_loss_gradients(bool hydra, int layers, const char* name) {
  SCOPED_TRACE(name);
  const LlamaConfig cfg = small_config();
  auto target = test::load_random_model("train-medusa-grad", cfg, DType::F32, 9, 0.5f);
  ThreadPool pool(1);
  MedusaTrainer heads(*target, MedusaInit{hydra, 3, layers, 4});
  randomize(heads, 13, 0.5f);
  const int64_t d = cfg.hidden_size, T = 6;
  const HeadSequence s1 = random_sequence(T + 1, d, cfg.vocab_size, 21, 1.5f);
  const HeadSequence s2 = random_sequence(T - 2, d, cfg.vocab_size, 22, 1.5f);
  MedusaBatch b = make_medusa_batch(2 * T, 3, d);
  fill_medusa_rows(b, 0, s1, 0, T, d);
  fill_medusa_rows(b, T, s2, 0, T, d);
  zero_grads(heads.params());
  heads.step(b, true, pool);
  std::mt19937 rng(3);
  int checked = 0;
  for (Parameter* p : heads.params()) {
    SCOPED_TRACE(p->name);
    double gscale = 0;
    for (float g : p->grad) gscale = std::max(gscale, std::abs(static_cast<double>(g)));
    EXPECT_GT(gscale, 0) << "no gradient reaches " << p->name;
    for (int k = 0; k < 4; ++k) {
      const size_t i = rng() % p->value.size();
      const float orig = p->value[i], h = 1e-2f;
      p->value[i] = orig + h;
      const double up = full_loss(heads, b, pool);
      p->value[i] = orig - h;
      const double down = full_loss(heads, b, pool);
      p->value[i] = orig;
      const double numeric = (up - down) / (2.0 * h);
      EXPECT_NEAR(p->grad[i], numeric, 0.03 * std::abs(numeric) + 3e-3 * gscale + 1e-6)
          << "element " << i;
      ++checked;
    }
  }
  EXPECT_EQ(checked, 4 * 2 * 3 * layers);
}

TEST(TrainMedusa, LossGradientsMatchFiniteDifferences) {
  check_loss_gradients(false, 2, "medusa, 2 layers");
  check_loss_gradients(true, 1, "hydra, 1 layer");
  check_loss_gradients(true, 2, "hydra, 2 layers");
}

// What training computes is what the exported heads compute at inference (MedusaHeads::states),
// for Medusa and Hydra (whose inputs are built from the embeddings here as the drafter builds
// them).
TEST(TrainMedusa, TrainingForwardEqualsExportedInferenceHeads) {
  auto target = test::load_random_model("train-medusa-fwd", test::tiny_config());
  const int64_t d = target->config().hidden_size, V = target->config().vocab_size, T = 9;
  for (bool hydra : {false, true}) {
    SCOPED_TRACE(hydra ? "hydra" : "medusa");
    ThreadPool pool(2);
    MedusaTrainer heads(*target, MedusaInit{hydra, 3, 2, 3});
    randomize(heads, 11, 0.2f);
    const std::string dir = test::temp_dir(hydra ? "train-hydra-export" : "train-medusa-export");
    heads.save(dir);
    auto loaded = MedusaHeads::load(dir, *target,
                                    hydra ? MedusaHeads::Kind::Hydra : MedusaHeads::Kind::Medusa);
    EXPECT_EQ(loaded->num_heads(), 3);
    EXPECT_EQ(loaded->num_layers(), 2);
    const HeadSequence s = random_sequence(T + 4, d, V, 5, 2.0f);
    MedusaBatch b = make_medusa_batch(T, 3, d);
    fill_medusa_rows(b, 0, s, 0, T, d);
    heads.step(b, false, pool);
    MedusaHeads::Scratch scratch;
    for (int k = 0; k < 3; ++k) {
      const int64_t K = loaded->input_width(k);
      std::vector<float> in(static_cast<size_t>(T * K)), out(static_cast<size_t>(T * d));
      for (int64_t t = 0; t < T; ++t) {
        std::copy_n(&s.features[static_cast<size_t>(t * d)], d, &in[static_cast<size_t>(t * K)]);
        for (int64_t j = 1; j * d < K; ++j)
          target->embed(s.tokens[static_cast<size_t>(t + j)],
                        &in[static_cast<size_t>(t * K + j * d)]);
      }
      loaded->states(k, in.data(), T, out.data(), scratch, pool);
      const std::vector<float>& want = heads.states(k);
      for (size_t i = 0; i < out.size(); ++i)
        EXPECT_NEAR(out[i], want[i], 1e-5 * std::max(1.0f, std::abs(want[i]))) << "head " << k;
    }
    // bf16 export: every tensor in bf16.
    const std::string dir16 = dir + "-bf16";
    heads.save(dir16, DType::BF16);
    const TensorStore st = TensorStore::open_dir(dir16);
    for (const Parameter* p : heads.params())
      EXPECT_EQ(st.get(p->name).dtype, DType::BF16) << p->name;
    EXPECT_NO_THROW(MedusaHeads::load(dir16, *target, loaded->kind()));
  }
}

// Determinism (1 vs 2 threads, bit for bit) and learning: a few dozen steps on random sequences
// lower the loss of every head.
TEST(TrainMedusa, ThreadCountInvariantAndLearns) {
  auto target =
      test::load_random_model("train-medusa-learn", test::tiny_config(), DType::F32, 5, 0.3f);
  const int64_t d = target->config().hidden_size, V = target->config().vocab_size;
  std::vector<HeadSequence> data;
  for (uint32_t i = 0; i < 6; ++i) data.push_back(random_sequence(40, d, V, 100 + i, 1.0f));
  HeadTrainOptions o;
  o.steps = 30;
  o.batch = 4;
  o.seq_len = 16;
  o.lr = 1e-2;
  o.warmup = 2;
  std::vector<std::vector<float>> finals;
  for (int threads : {1, 2}) {
    ThreadPool pool(threads);
    MedusaTrainer heads(*target, MedusaInit{true, 2, 1, 7});
    const MedusaTrainResult r = train_medusa(heads, data, o, pool);
    for (size_t k = 0; k < 2; ++k)
      EXPECT_LT(r.last.per_head[k], r.first.per_head[k]) << "head " << k;
    std::vector<float> all;
    for (const Parameter* p : heads.params())
      all.insert(all.end(), p->value.begin(), p->value.end());
    finals.push_back(all);
  }
  EXPECT_TRUE(same_bits(finals[0], finals[1]));
}

}  // namespace
}  // namespace eagle2::train
